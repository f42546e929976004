// The egress guard: which addresses an `http` step may connect to.
//
// Steps are written by users but run inside the server's network, so by default a step
// may not reach the machine itself or its private networks (SSRF). Refused, unless an
// allow-list entry covers the address:
//
//   loopback            127.0.0.0/8, ::1
//   unspecified         0.0.0.0/8, ::
//   private             10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7 (unique
//                       local), fec0::/10 (deprecated site-local)
//   shared (CGNAT)      100.64.0.0/10
//   cloud metadata      169.254.169.254, fd00:ec2::254
//   link-local          169.254.0.0/16, fe80::/10
//   multicast           224.0.0.0/4, ff00::/8
//   broadcast           255.255.255.255
//   reserved            240.0.0.0/4
//
// IPv6 forms that carry an IPv4 address are judged by that address: IPv4-mapped
// (::ffff:10.0.0.1), IPv4-compatible (::10.0.0.1) and NAT64 (64:ff9b::10.0.0.1). An
// allow-list entry matches the address or its embedded IPv4 address, so "127.0.0.0/8"
// also allows ::ffff:127.0.0.1.
//
// The runner checks every address a host name resolves to and connects only to the
// addresses that pass (never resolving again in between), for the first request and for
// every redirect.
//
// No Boost here: addresses are parsed with inet_pton. Thread-safe (immutable).
#pragma once

#include <baton/status.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton::runners {

// An IP address in its 16-byte IPv6 form; an IPv4 address is kept IPv4-mapped
// (::ffff:a.b.c.d) with `v4` set, so one comparison covers both families.
struct IpAddress {
  std::array<uint8_t, 16> bytes{};
  bool v4 = false;  // written as IPv4 (only changes how it prints)

  static IpAddress V4(uint32_t host_order);
  static IpAddress V6(const std::array<uint8_t, 16>& bytes);
  std::string ToString() const;  // "10.0.0.1", "::1", "::ffff:10.0.0.1"
};

// "10.0.0.1", "::1", "::ffff:10.0.0.1", "[::1]"; nullopt when not an address.
std::optional<IpAddress> ParseIpAddress(std::string_view text);

struct Cidr {
  IpAddress base;  // the bits past the prefix are zero
  int prefix = 0;  // over the 16-byte form: an IPv4 /8 is 96 + 8
  bool Contains(const IpAddress& address) const;
  std::string ToString() const;  // "10.0.0.0/8", "::1/128"
};

// "10.0.0.0/8", "::1/128", or one address ("127.0.0.1" = /32, "::1" = /128). Bits set
// past the prefix are an error ("10.0.0.1/8": did you mean 10.0.0.0/8?). VALIDATION.
Result<Cidr> ParseCidr(std::string_view text);
// A comma- or whitespace-separated list, as in BATON_HTTP_ALLOW; empty gives none.
// The error names the bad entry.
Result<std::vector<Cidr>> ParseCidrList(std::string_view text);

class EgressGuard {
 public:
  explicit EgressGuard(std::vector<Cidr> allow = {}) : allow_(std::move(allow)) {}

  // What kind of non-public address this is ("a loopback address", "a private address",
  // "the cloud metadata address", ...), or nullopt for a public one. Ignores the
  // allow-list.
  static std::optional<std::string> Classify(const IpAddress& address);

  // Ok, or NETWORK "refused by the egress guard: 10.0.0.5 is a private address (allow it
  // with BATON_HTTP_ALLOW)".
  Status Check(const IpAddress& address) const;

  const std::vector<Cidr>& allow() const { return allow_; }

 private:
  std::vector<Cidr> allow_;
};

}  // namespace baton::runners
