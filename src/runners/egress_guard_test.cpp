#include "runners/egress_guard.h"

#include <gtest/gtest.h>

namespace baton::runners {
namespace {

IpAddress Ip(const std::string& text) {
  std::optional<IpAddress> a = ParseIpAddress(text);
  EXPECT_TRUE(a.has_value()) << text;
  return a.value_or(IpAddress{});
}

std::string Kind(const std::string& text) {
  return EgressGuard::Classify(Ip(text)).value_or("public");
}

TEST(EgressGuard, ParsesAddresses) {
  EXPECT_EQ(Ip("10.0.0.1").ToString(), "10.0.0.1");
  EXPECT_TRUE(Ip("10.0.0.1").v4);
  EXPECT_EQ(Ip("::1").ToString(), "::1");
  EXPECT_EQ(Ip("[::1]").ToString(), "::1");
  EXPECT_EQ(Ip("::ffff:10.0.0.1").ToString(), "::ffff:10.0.0.1");
  EXPECT_FALSE(Ip("::ffff:10.0.0.1").v4);
  // The same 16 bytes either way: one comparison covers both families.
  EXPECT_EQ(Ip("::ffff:10.0.0.1").bytes, Ip("10.0.0.1").bytes);
  for (const char* bad : {"", "x", "1.2.3", "256.0.0.1", "0x7f000001", "2130706433", "::g", "[::1"}) {
    EXPECT_FALSE(ParseIpAddress(bad).has_value()) << bad;
  }
}

TEST(EgressGuard, ClassifiesIpv4RangesAtTheirBoundaries) {
  struct Case {
    const char* ip;
    const char* kind;
  };
  const Case cases[] = {
      {"0.0.0.0", "an unspecified address"},
      {"0.255.255.255", "an unspecified address"},
      {"1.0.0.0", "public"},
      {"9.255.255.255", "public"},
      {"10.0.0.0", "a private address"},
      {"10.255.255.255", "a private address"},
      {"11.0.0.0", "public"},
      {"100.63.255.255", "public"},
      {"100.64.0.0", "a shared (CGNAT) address"},
      {"100.127.255.255", "a shared (CGNAT) address"},
      {"100.128.0.0", "public"},
      {"126.255.255.255", "public"},
      {"127.0.0.0", "a loopback address"},
      {"127.0.0.1", "a loopback address"},
      {"127.255.255.255", "a loopback address"},
      {"128.0.0.0", "public"},
      {"169.253.255.255", "public"},
      {"169.254.0.0", "a link-local address"},
      {"169.254.169.253", "a link-local address"},
      {"169.254.169.254", "the cloud metadata address"},
      {"169.254.255.255", "a link-local address"},
      {"169.255.0.0", "public"},
      {"172.15.255.255", "public"},
      {"172.16.0.0", "a private address"},
      {"172.31.255.255", "a private address"},
      {"172.32.0.0", "public"},
      {"192.167.255.255", "public"},
      {"192.168.0.0", "a private address"},
      {"192.168.255.255", "a private address"},
      {"192.169.0.0", "public"},
      {"8.8.8.8", "public"},
      {"223.255.255.255", "public"},
      {"224.0.0.0", "a multicast address"},
      {"239.255.255.255", "a multicast address"},
      {"240.0.0.0", "a reserved address"},
      {"255.255.255.254", "a reserved address"},
      {"255.255.255.255", "the broadcast address"},
  };
  for (const Case& c : cases) EXPECT_EQ(Kind(c.ip), c.kind) << c.ip;
}

TEST(EgressGuard, ClassifiesIpv6Ranges) {
  struct Case {
    const char* ip;
    const char* kind;
  };
  const Case cases[] = {
      {"::", "an unspecified address"},
      {"::1", "a loopback address"},
      {"::2", "an unspecified address"},  // IPv4-compatible 0.0.0.2
      {"fe80::", "a link-local address"},
      {"fe80::1", "a link-local address"},
      {"febf:ffff::1", "a link-local address"},
      {"fe7f:ffff::1", "public"},
      {"fec0::1", "a private address"},
      {"fbff:ffff::1", "public"},
      {"fc00::", "a private address"},
      {"fdff:ffff::1", "a private address"},
      {"fd00:ec2::254", "the cloud metadata address"},
      {"fd00:ec2::253", "a private address"},
      {"fe00::", "public"},
      {"ff00::", "a multicast address"},
      {"ff02::1", "a multicast address"},
      {"2001:4860:4860::8888", "public"},
      {"2606:4700::1111", "public"},
  };
  for (const Case& c : cases) EXPECT_EQ(Kind(c.ip), c.kind) << c.ip;
}

TEST(EgressGuard, JudgesIpv6FormsOfIpv4ByTheEmbeddedAddress) {
  EXPECT_EQ(Kind("::ffff:10.0.0.1"), "a private address");
  EXPECT_EQ(Kind("::ffff:127.0.0.1"), "a loopback address");
  EXPECT_EQ(Kind("::ffff:7f00:1"), "a loopback address");
  EXPECT_EQ(Kind("::ffff:169.254.169.254"), "the cloud metadata address");
  EXPECT_EQ(Kind("::ffff:100.64.0.1"), "a shared (CGNAT) address");
  EXPECT_EQ(Kind("::ffff:0.0.0.0"), "an unspecified address");
  EXPECT_EQ(Kind("::ffff:255.255.255.255"), "the broadcast address");
  EXPECT_EQ(Kind("::ffff:224.0.0.1"), "a multicast address");
  EXPECT_EQ(Kind("::ffff:8.8.8.8"), "public");
  EXPECT_EQ(Kind("::10.0.0.1"), "a private address");       // IPv4-compatible
  EXPECT_EQ(Kind("64:ff9b::a9fe:a9fe"), "the cloud metadata address");  // NAT64
  EXPECT_EQ(Kind("64:ff9b::192.168.1.1"), "a private address");
  EXPECT_EQ(Kind("64:ff9b::8.8.8.8"), "public");
}

TEST(EgressGuard, CheckRefusesWithAMessageNamingTheAddress) {
  EgressGuard guard;
  Status s = guard.Check(Ip("10.0.0.5"));
  EXPECT_EQ(s.code(), "NETWORK");
  EXPECT_EQ(s.message(),
            "refused by the egress guard: 10.0.0.5 is a private address (allow it with "
            "BATON_HTTP_ALLOW)");
  EXPECT_EQ(guard.Check(Ip("::ffff:127.0.0.1")).message(),
            "refused by the egress guard: ::ffff:127.0.0.1 is a loopback address (allow it "
            "with BATON_HTTP_ALLOW)");
  EXPECT_EQ(guard.Check(Ip("169.254.169.254")).message(),
            "refused by the egress guard: 169.254.169.254 is the cloud metadata address "
            "(allow it with BATON_HTTP_ALLOW)");
  EXPECT_TRUE(guard.Check(Ip("93.184.216.34")).ok());
  EXPECT_TRUE(guard.Check(Ip("2606:4700::1111")).ok());
}

TEST(EgressGuard, AllowListOverrides) {
  auto allow = ParseCidrList("127.0.0.0/8, ::1/128 10.1.0.0/16,169.254.169.254");
  ASSERT_TRUE(allow.ok()) << allow.status().ToString();
  EgressGuard guard(*allow);
  EXPECT_TRUE(guard.Check(Ip("127.0.0.1")).ok());
  EXPECT_TRUE(guard.Check(Ip("127.255.255.255")).ok());
  EXPECT_TRUE(guard.Check(Ip("::ffff:127.0.0.1")).ok());  // the mapped form too
  EXPECT_TRUE(guard.Check(Ip("::1")).ok());
  EXPECT_TRUE(guard.Check(Ip("10.1.2.3")).ok());
  EXPECT_TRUE(guard.Check(Ip("64:ff9b::10.1.2.3")).ok());  // by the embedded address
  EXPECT_FALSE(guard.Check(Ip("10.2.0.0")).ok());
  EXPECT_FALSE(guard.Check(Ip("10.0.255.255")).ok());
  EXPECT_TRUE(guard.Check(Ip("169.254.169.254")).ok());
  EXPECT_FALSE(guard.Check(Ip("169.254.169.253")).ok());
  EXPECT_FALSE(guard.Check(Ip("192.168.1.1")).ok());

  EgressGuard v6only(*ParseCidrList("::1/128"));
  EXPECT_FALSE(v6only.Check(Ip("127.0.0.1")).ok());
  EXPECT_TRUE(v6only.Check(Ip("::1")).ok());

  EgressGuard everything(*ParseCidrList("0.0.0.0/0 ::/0"));
  EXPECT_TRUE(everything.Check(Ip("10.0.0.1")).ok());
  EXPECT_TRUE(everything.Check(Ip("fe80::1")).ok());
}

TEST(EgressGuard, ParsesCidrs) {
  EXPECT_EQ(ParseCidr("10.0.0.0/8")->ToString(), "10.0.0.0/8");
  EXPECT_EQ(ParseCidr("10.0.0.0/8")->prefix, 104);
  EXPECT_EQ(ParseCidr("127.0.0.1")->ToString(), "127.0.0.1/32");
  EXPECT_EQ(ParseCidr("::1")->ToString(), "::1/128");
  EXPECT_EQ(ParseCidr("fe80::/10")->ToString(), "fe80::/10");
  EXPECT_EQ(ParseCidr("0.0.0.0/0")->ToString(), "0.0.0.0/0");
  EXPECT_TRUE(ParseCidr("172.16.0.0/12")->Contains(Ip("172.31.1.1")));
  EXPECT_FALSE(ParseCidr("172.16.0.0/12")->Contains(Ip("172.32.0.0")));
  EXPECT_TRUE(ParseCidr("fe80::/10")->Contains(Ip("febf::1")));
  EXPECT_FALSE(ParseCidr("fe80::/10")->Contains(Ip("fec0::1")));

  EXPECT_EQ(ParseCidr("10.0.0.1/8").status().message(),
            "bad allow-list entry '10.0.0.1/8': has bits set past the prefix (did you mean "
            "10.0.0.0/8?)");
  EXPECT_EQ(ParseCidr("10.0.0.0/33").status().message(),
            "bad allow-list entry '10.0.0.0/33': prefix length over 32");
  EXPECT_EQ(ParseCidr("::/129").status().message(),
            "bad allow-list entry '::/129': prefix length over 128");
  EXPECT_FALSE(ParseCidr("10.0.0.0/").ok());
  EXPECT_FALSE(ParseCidr("10.0.0.0/x").ok());
  EXPECT_EQ(ParseCidr("localhost").status().code(), "VALIDATION");

  auto list = ParseCidrList(" 127.0.0.0/8,,::1/128 ");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ(list->size(), 2u);
  EXPECT_TRUE(ParseCidrList("")->empty());
  EXPECT_EQ(ParseCidrList("127.0.0.0/8,bad").status().message(),
            "bad allow-list entry 'bad': expected an IP address or CIDR, e.g. 127.0.0.0/8 or "
            "::1/128");
}

}  // namespace
}  // namespace baton::runners
