// Token buckets on the simulated clock.
#include "server/rate_limiter.h"

#include <gtest/gtest.h>

namespace baton::server {
namespace {

TEST(RateLimiter, AllowsTheBurstThenRefillsAtTheRate) {
  SimClock clock(1'000'000);
  RateLimiter limiter(&clock, {10, 5});  // 10/s, bursts of 5
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(limiter.Allow("tok_a")) << i;
  int64_t retry = 0;
  EXPECT_FALSE(limiter.Allow("tok_a", &retry));
  EXPECT_EQ(retry, 100);                // one request per 100 ms
  EXPECT_TRUE(limiter.Allow("tok_b"));  // buckets are per key
  clock.Advance(Duration(50));
  EXPECT_FALSE(limiter.Allow("tok_a", &retry));
  EXPECT_EQ(retry, 50);
  clock.Advance(Duration(50));
  EXPECT_TRUE(limiter.Allow("tok_a"));
  EXPECT_FALSE(limiter.Allow("tok_a"));
  // A long pause refills to the burst, no more.
  clock.Advance(Duration(60'000));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(limiter.Allow("tok_a")) << i;
  EXPECT_FALSE(limiter.Allow("tok_a"));
}

TEST(RateLimiter, SustainedLoadGetsTheConfiguredRate) {
  SimClock clock(0);
  RateLimiter limiter(&clock, {20, 1});
  int allowed = 0;
  for (int ms = 0; ms < 10'000; ms += 5) {  // 200 requests/s offered for 10 s
    allowed += limiter.Allow("k") ? 1 : 0;
    clock.Advance(Duration(5));
  }
  EXPECT_EQ(allowed, 200);  // 20/s
}

TEST(RateLimiter, ZeroRateIsNoLimit) {
  SimClock clock(0);
  RateLimiter limiter(&clock, {0, 0});
  for (int i = 0; i < 10'000; ++i) ASSERT_TRUE(limiter.Allow("k"));
  EXPECT_EQ(limiter.keys(), 0u);
}

TEST(RateLimiter, KeysAreBoundedAndIdleOnesGoFirst) {
  SimClock clock(0);
  RateLimiter limiter(&clock, {1, 1}, /*max_keys=*/100);
  EXPECT_TRUE(limiter.Allow("busy"));
  for (int i = 0; i < 1000; ++i) {
    limiter.Allow("k" + std::to_string(i));
    EXPECT_LE(limiter.keys(), 100u);
  }
}

TEST(RateLimiter, AnEvictedEmptyBucketIsNotAFreshOne) {
  SimClock clock(0);
  RateLimiter limiter(&clock, {1, 1}, /*max_keys=*/2);
  EXPECT_TRUE(limiter.Allow("a"));
  clock.Advance(Duration(1));
  EXPECT_TRUE(limiter.Allow("b"));
  clock.Advance(Duration(1));
  EXPECT_TRUE(limiter.Allow("c"));  // evicts the older half ("a")
  EXPECT_LE(limiter.keys(), 2u);
  EXPECT_FALSE(limiter.Allow("b"));  // still empty: not evicted
}

}  // namespace
}  // namespace baton::server
