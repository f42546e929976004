#include "runners/egress_guard.h"

#include <arpa/inet.h>

#include <cctype>
#include <cstring>

namespace baton::runners {
namespace {

constexpr std::array<uint8_t, 12> kMappedPrefix = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool IsMapped(const IpAddress& a) {
  return std::memcmp(a.bytes.data(), kMappedPrefix.data(), kMappedPrefix.size()) == 0;
}

uint32_t Low32(const IpAddress& a) {
  return (uint32_t{a.bytes[12]} << 24) | (uint32_t{a.bytes[13]} << 16) |
         (uint32_t{a.bytes[14]} << 8) | uint32_t{a.bytes[15]};
}

// The IPv4 address an IPv6 address carries (mapped, compatible, NAT64), if any.
std::optional<uint32_t> EmbeddedV4(const IpAddress& a) {
  if (IsMapped(a)) return Low32(a);
  bool zero_0_11 = true;
  for (int i = 0; i < 12; ++i) zero_0_11 = zero_0_11 && a.bytes[i] == 0;
  // IPv4-compatible (deprecated), except :: and ::1 which are IPv6's own.
  if (zero_0_11 && Low32(a) > 1) return Low32(a);
  static constexpr std::array<uint8_t, 12> kNat64 = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (std::memcmp(a.bytes.data(), kNat64.data(), kNat64.size()) == 0) return Low32(a);
  return std::nullopt;
}

bool InV4(uint32_t ip, uint32_t base, int prefix) {
  uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return (ip & mask) == base;
}

std::optional<std::string> ClassifyV4(uint32_t ip) {
  if (ip == 0xffffffffu) return "the broadcast address";
  if (ip == 0xa9fea9feu) return "the cloud metadata address";  // 169.254.169.254
  struct Range {
    uint32_t base;
    int prefix;
    const char* what;
  };
  static constexpr Range kRanges[] = {
      {0x00000000u, 8, "an unspecified address"},     // 0.0.0.0/8
      {0x7f000000u, 8, "a loopback address"},         // 127.0.0.0/8
      {0x0a000000u, 8, "a private address"},          // 10.0.0.0/8
      {0xac100000u, 12, "a private address"},         // 172.16.0.0/12
      {0xc0a80000u, 16, "a private address"},         // 192.168.0.0/16
      {0x64400000u, 10, "a shared (CGNAT) address"},  // 100.64.0.0/10
      {0xa9fe0000u, 16, "a link-local address"},      // 169.254.0.0/16
      {0xe0000000u, 4, "a multicast address"},        // 224.0.0.0/4
      {0xf0000000u, 4, "a reserved address"},         // 240.0.0.0/4
  };
  for (const Range& r : kRanges) {
    if (InV4(ip, r.base, r.prefix)) return std::string(r.what);
  }
  return std::nullopt;
}

std::optional<std::string> ClassifyV6(const IpAddress& a) {
  const auto& b = a.bytes;
  bool zero_0_14 = true;
  for (int i = 0; i < 15; ++i) zero_0_14 = zero_0_14 && b[i] == 0;
  if (zero_0_14 && b[15] == 0) return "an unspecified address";
  if (zero_0_14 && b[15] == 1) return "a loopback address";
  // fd00:ec2::254
  static constexpr std::array<uint8_t, 16> kEc2 = {0xfd, 0, 0x0e, 0xc2, 0, 0, 0,    0,
                                                   0,    0, 0,    0,    0, 0, 0x02, 0x54};
  if (b == kEc2) return "the cloud metadata address";
  if (b[0] == 0xff) return "a multicast address";
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "a link-local address";  // fe80::/10
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "a private address";     // fec0::/10
  if ((b[0] & 0xfe) == 0xfc) return "a private address";                     // fc00::/7
  return std::nullopt;
}

Status InvalidEgressEntry(std::string_view entry, const std::string& what) {
  return Status(errc::kValidation, "bad allow-list entry '" + std::string(entry) + "': " + what);
}

}  // namespace

IpAddress IpAddress::V4(uint32_t host_order) {
  IpAddress a;
  std::memcpy(a.bytes.data(), kMappedPrefix.data(), kMappedPrefix.size());
  a.bytes[12] = static_cast<uint8_t>(host_order >> 24);
  a.bytes[13] = static_cast<uint8_t>(host_order >> 16);
  a.bytes[14] = static_cast<uint8_t>(host_order >> 8);
  a.bytes[15] = static_cast<uint8_t>(host_order);
  a.v4 = true;
  return a;
}

IpAddress IpAddress::V6(const std::array<uint8_t, 16>& bytes) {
  IpAddress a;
  a.bytes = bytes;
  return a;
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (v4) {
    inet_ntop(AF_INET, bytes.data() + 12, buf, sizeof buf);
  } else {
    inet_ntop(AF_INET6, bytes.data(), buf, sizeof buf);
  }
  return buf;
}

std::optional<IpAddress> ParseIpAddress(std::string_view text) {
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    text = text.substr(1, text.size() - 2);
  }
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return std::nullopt;
  std::string s(text);
  in_addr v4{};
  if (inet_pton(AF_INET, s.c_str(), &v4) == 1) return IpAddress::V4(ntohl(v4.s_addr));
  std::array<uint8_t, 16> v6{};
  if (inet_pton(AF_INET6, s.c_str(), v6.data()) == 1) return IpAddress::V6(v6);
  return std::nullopt;
}

bool Cidr::Contains(const IpAddress& address) const {
  int full = prefix / 8, rest = prefix % 8;
  if (std::memcmp(address.bytes.data(), base.bytes.data(), full) != 0) return false;
  if (rest == 0) return true;
  uint8_t mask = static_cast<uint8_t>(0xff << (8 - rest));
  return (address.bytes[full] & mask) == base.bytes[full];
}

std::string Cidr::ToString() const {
  return base.ToString() + "/" + std::to_string(base.v4 ? prefix - 96 : prefix);
}

Result<Cidr> ParseCidr(std::string_view text) {
  size_t slash = text.find('/');
  std::optional<IpAddress> address = ParseIpAddress(text.substr(0, slash));
  if (!address)
    return InvalidEgressEntry(text, "expected an IP address or CIDR, e.g. 127.0.0.0/8 or ::1/128");
  const int max = address->v4 ? 32 : 128;
  int prefix = max;
  if (slash != std::string_view::npos) {
    std::string_view p = text.substr(slash + 1);
    if (p.empty() || p.size() > 3) return InvalidEgressEntry(text, "bad prefix length");
    prefix = 0;
    for (char c : p) {
      if (!std::isdigit(static_cast<unsigned char>(c)))
        return InvalidEgressEntry(text, "bad prefix length");
      prefix = prefix * 10 + (c - '0');
    }
    if (prefix > max) {
      return InvalidEgressEntry(text, "prefix length over " + std::to_string(max));
    }
  }
  Cidr cidr;
  cidr.prefix = address->v4 ? prefix + 96 : prefix;
  cidr.base = *address;
  for (int bit = cidr.prefix; bit < 128; ++bit) {
    cidr.base.bytes[bit / 8] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
  }
  if (cidr.base.bytes != address->bytes) {
    return InvalidEgressEntry(
        text, "has bits set past the prefix (did you mean " + cidr.ToString() + "?)");
  }
  return cidr;
}

Result<std::vector<Cidr>> ParseCidrList(std::string_view text) {
  std::vector<Cidr> out;
  size_t i = 0;
  auto separator = [](char c) { return c == ',' || std::isspace(static_cast<unsigned char>(c)); };
  while (i < text.size()) {
    while (i < text.size() && separator(text[i])) ++i;
    size_t start = i;
    while (i < text.size() && !separator(text[i])) ++i;
    if (i == start) break;
    Result<Cidr> cidr = ParseCidr(text.substr(start, i - start));
    if (!cidr.ok()) return cidr.status();
    out.push_back(*cidr);
  }
  return out;
}

std::optional<std::string> EgressGuard::Classify(const IpAddress& address) {
  if (std::optional<uint32_t> v4 = EmbeddedV4(address)) return ClassifyV4(*v4);
  return ClassifyV6(address);
}

Status EgressGuard::Check(const IpAddress& address) const {
  std::optional<IpAddress> embedded;
  if (std::optional<uint32_t> v4 = EmbeddedV4(address)) embedded = IpAddress::V4(*v4);
  for (const Cidr& cidr : allow_) {
    if (cidr.Contains(address) || (embedded && cidr.Contains(*embedded))) return Status::Ok();
  }
  std::optional<std::string> what = Classify(address);
  if (!what) return Status::Ok();
  return Status(errc::kNetwork, "refused by the egress guard: " + address.ToString() + " is " +
                                    *what + " (allow it with BATON_HTTP_ALLOW)");
}

}  // namespace baton::runners
