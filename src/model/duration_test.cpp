#include <baton/workflow.h>

#include <gtest/gtest.h>

namespace baton {
namespace {

Duration Ok(const Json& v) {
  Result<Duration> r = ParseDuration(v);
  EXPECT_TRUE(r.ok()) << v.dump() << ": " << r.status().ToString();
  return r.ok() ? *r : Duration{-1};
}

std::string Err(const Json& v) {
  Result<Duration> r = ParseDuration(v);
  EXPECT_FALSE(r.ok()) << v.dump();
  EXPECT_EQ(r.status().code(), errc::kValidation);
  return r.status().message();
}

TEST(Duration, Units) {
  EXPECT_EQ(Ok("250ms"), Duration{250});
  EXPECT_EQ(Ok("30s"), Duration{30'000});
  EXPECT_EQ(Ok("5m"), Duration{300'000});
  EXPECT_EQ(Ok("2h"), Duration{7'200'000});
  EXPECT_EQ(Ok("1h30m"), Duration{5'400'000});
  EXPECT_EQ(Ok("1h30m15s"), Duration{5'415'000});
  EXPECT_EQ(Ok("1s500ms"), Duration{1500});
  EXPECT_EQ(Ok("0s"), Duration{0});
}

TEST(Duration, Seconds) {
  EXPECT_EQ(Ok(30), Duration{30'000});
  EXPECT_EQ(Ok("45"), Duration{45'000});
  EXPECT_EQ(Ok(0), Duration{0});
  EXPECT_EQ(Ok(" 10s "), Duration{10'000});
}

TEST(Duration, Rejects) {
  EXPECT_EQ(Err("5x"), "bad duration '5x' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
  EXPECT_EQ(Err(""), "bad duration '' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
  EXPECT_EQ(Err("-5s"), "bad duration '-5s' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
  EXPECT_EQ(Err(-5), "bad duration '-5' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
  EXPECT_EQ(Err(1.5), "bad duration '1.5' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
  EXPECT_EQ(Err(true), "bad duration 'true' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
  Err("s");
}

TEST(Duration, MoreRejects) {
  EXPECT_FALSE(ParseDuration("1h 30m").ok());
  EXPECT_FALSE(ParseDuration("1.5h").ok());
  EXPECT_FALSE(ParseDuration("h").ok());
  EXPECT_FALSE(ParseDuration("10d").ok());
  EXPECT_FALSE(ParseDuration(Json::array()).ok());
  EXPECT_FALSE(ParseDuration(nullptr).ok());
  EXPECT_FALSE(ParseDuration("99999999999999999999s").ok());
  EXPECT_FALSE(ParseDuration("9999999999999999h").ok());
}

TEST(Duration, Format) {
  EXPECT_EQ(FormatDuration(Duration{0}), "0s");
  EXPECT_EQ(FormatDuration(Duration{250}), "250ms");
  EXPECT_EQ(FormatDuration(Duration{30'000}), "30s");
  EXPECT_EQ(FormatDuration(Duration{5'400'000}), "1h30m");
  EXPECT_EQ(FormatDuration(Duration{5'415'000}), "1h30m15s");
  EXPECT_EQ(FormatDuration(Duration{1500}), "1s500ms");
  EXPECT_EQ(FormatDuration(Duration{-1500}), "-1s500ms");
  EXPECT_EQ(FormatDuration(Duration{90'000'000}), "25h");
}

TEST(Duration, FormatRoundTrips) {
  for (int64_t ms : {1LL, 999LL, 1000LL, 61'001LL, 3'600'000LL, 86'400'123LL}) {
    EXPECT_EQ(Ok(FormatDuration(Duration{ms})), Duration{ms}) << ms;
  }
}

TEST(ByteSize, Parses) {
  EXPECT_EQ(*ParseByteSize(1024), 1024);
  EXPECT_EQ(*ParseByteSize("2048"), 2048);
  EXPECT_EQ(*ParseByteSize("512KiB"), 512 * 1024);
  EXPECT_EQ(*ParseByteSize("1MiB"), 1 << 20);
  EXPECT_EQ(*ParseByteSize("256MiB"), 256LL << 20);
  EXPECT_EQ(*ParseByteSize("2GB"), 2'000'000'000LL);
  EXPECT_EQ(*ParseByteSize("10B"), 10);
  EXPECT_EQ(*ParseByteSize("1 GiB"), 1LL << 30);
}

TEST(ByteSize, Rejects) {
  EXPECT_EQ(ParseByteSize("5x").status().message(),
            "bad size '5x' (expected bytes or e.g. 512KiB, 1MiB, 2GB)");
  EXPECT_FALSE(ParseByteSize(-1).ok());
  EXPECT_FALSE(ParseByteSize(1.5).ok());
  EXPECT_FALSE(ParseByteSize("").ok());
  EXPECT_FALSE(ParseByteSize("MiB").ok());
  EXPECT_FALSE(ParseByteSize("99999999999TiB").ok());
  EXPECT_FALSE(ParseByteSize(true).ok());
}

}  // namespace
}  // namespace baton
