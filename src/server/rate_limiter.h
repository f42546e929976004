// Request rate limits: a token bucket per caller (an API token, or the peer address for
// unauthenticated calls such as webhooks). A bucket holds up to `burst` requests and
// refills at `per_second`; a request finding it empty is refused with 429 and told when
// the next one will be let through (Retry-After).
//
// Memory is bounded: at most `max_keys` buckets; past that, the buckets that have been
// full (idle) the longest are dropped first -- a full bucket is the same as no bucket.
//
// Threading: thread-safe (one mutex; a request costs one hash lookup under it).
#pragma once

#include <baton/clock.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <unordered_map>

namespace baton::server {

struct RateLimit {
  double per_second = 0;  // 0 = no limit
  double burst = 0;       // bucket size; below 1 means per_second (one second's worth)
};

class RateLimiter {
 public:
  RateLimiter(const Clock* clock, RateLimit limit, size_t max_keys = 100'000);

  bool enabled() const { return limit_.per_second > 0; }
  const RateLimit& limit() const { return limit_; }
  // Takes one request from `key`'s bucket: true when allowed. When refused and
  // `retry_after_ms` is set, how long until one request will be allowed.
  bool Allow(const std::string& key, int64_t* retry_after_ms = nullptr);
  size_t keys() const;

 private:
  // Millionths of a request, so steady refills add up exactly.
  struct Bucket {
    int64_t micros = 0;
    TimeMs updated = 0;  // when last used
  };
  int64_t Refilled(const Bucket& b, TimeMs now) const;
  void EvictIdle(TimeMs now);

  const Clock* clock_;
  RateLimit limit_;
  int64_t burst_micros_;
  size_t max_keys_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace baton::server
