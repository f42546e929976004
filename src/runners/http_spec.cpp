#include "runners/http_spec.h"

#include <baton/workflow.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "model/http_status.h"
#include "runners/shell_spec.h"

namespace baton::runners {
namespace {

Status InvalidHttpField(const std::string& field, const std::string& what) {
  return Status(errc::kValidation, "http step: field '" + field + "': " + what);
}

bool IsTokenChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Percent-encodes what may not appear raw in a request target; leaves the rest (and
// existing %XX escapes) alone.
std::string EncodeTarget(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (c <= 0x20 || c >= 0x7f ||
        std::string_view("\"<>\\^`{|}").find(static_cast<char>(c)) != std::string_view::npos) {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

Status BadUrl(const std::string& url, const std::string& what) {
  return Status(errc::kValidation, what + " in URL '" + url + "'");
}

// The directory part of a path ("/a/b" -> "/a/").
std::string Directory(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? "/" : std::string(path.substr(0, slash + 1));
}

}  // namespace

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string HttpUrl::Authority() const {
  std::string h = ipv6_literal ? "[" + host + "]" : host;
  return port == DefaultPort() ? h : h + ":" + std::to_string(port);
}

std::string HttpUrl::ToString() const {
  return Scheme() + "://" + Authority() + target;
}

Result<HttpUrl> ParseHttpUrl(const std::string& url) {
  size_t colon = url.find("://");
  std::string scheme =
      colon == std::string::npos ? "" : AsciiLower(std::string_view(url).substr(0, colon));
  if (scheme != "http" && scheme != "https") {
    return Status(errc::kValidation, "expected an http:// or https:// URL, got '" + url + "'");
  }
  std::string_view rest = std::string_view(url).substr(colon + 3);
  size_t end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, end);
  std::string_view tail = end == std::string_view::npos ? "" : rest.substr(end);
  if (size_t hash = tail.find('#'); hash != std::string_view::npos) tail = tail.substr(0, hash);
  if (authority.find('@') != std::string_view::npos) {
    return BadUrl(url, "credentials are not supported (use an Authorization header)");
  }
  HttpUrl out;
  out.https = scheme == "https";
  out.port = out.DefaultPort();
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return BadUrl(url, "unclosed '['");
    out.host = AsciiLower(authority.substr(1, close - 1));
    out.ipv6_literal = true;
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return BadUrl(url, "bad host");
      port = after.substr(1);
    }
    if (out.host.empty() || out.host.find_first_not_of("0123456789abcdef:.") != std::string::npos) {
      return BadUrl(url, "bad IPv6 address");
    }
  } else {
    size_t c = authority.find(':');
    out.host = AsciiLower(authority.substr(0, c));
    if (c != std::string_view::npos) port = authority.substr(c + 1);
    for (char ch : out.host) {
      if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.' && ch != '_') {
        return BadUrl(url, "bad host");
      }
    }
  }
  if (out.host.empty()) return BadUrl(url, "no host");
  if (authority.find(':') != std::string_view::npos && !out.ipv6_literal && port.empty()) {
    return BadUrl(url, "empty port");
  }
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos) {
      return BadUrl(url, "bad port");
    }
    int p = std::stoi(std::string(port));
    if (p < 1 || p > 65535) return BadUrl(url, "bad port");
    out.port = static_cast<uint16_t>(p);
  }
  if (tail.empty() || tail.front() == '?') {
    out.target = "/" + EncodeTarget(tail);
  } else {
    out.target = EncodeTarget(tail);
  }
  return out;
}

Result<HttpUrl> ResolveLocation(const HttpUrl& base, const std::string& location) {
  std::string_view loc = location;
  while (!loc.empty() && std::isspace(static_cast<unsigned char>(loc.front())))
    loc.remove_prefix(1);
  while (!loc.empty() && std::isspace(static_cast<unsigned char>(loc.back()))) loc.remove_suffix(1);
  if (loc.empty()) return Status(errc::kValidation, "empty Location header");
  if (loc.find("://") != std::string_view::npos && loc.find("://") < loc.find_first_of("/?#")) {
    return ParseHttpUrl(std::string(loc));
  }
  if (loc.starts_with("//")) return ParseHttpUrl(base.Scheme() + ":" + std::string(loc));
  HttpUrl out = base;
  if (size_t hash = loc.find('#'); hash != std::string_view::npos) loc = loc.substr(0, hash);
  if (loc.empty()) return out;
  if (loc.front() == '/') {
    out.target = EncodeTarget(loc);
  } else if (loc.front() == '?') {
    out.target = base.target.substr(0, base.target.find('?')) + EncodeTarget(loc);
  } else {
    out.target = Directory(base.target) + EncodeTarget(loc);
  }
  return out;
}

bool HttpSpec::Accepts(int status) const {
  return std::any_of(accept.begin(), accept.end(), [status](const StatusRange& r) {
    return r.first <= status && status <= r.second;
  });
}

Result<HttpSpec> ParseHttpSpec(const Json& spec, size_t default_max_output,
                               Duration default_timeout) {
  HttpSpec out;
  out.max_output = default_max_output;
  out.timeout = default_timeout;
  auto it = spec.find("request");
  if (it == spec.end() || !it->is_object()) {
    return InvalidHttpField("request", "expected an object with at least 'url'");
  }
  const Json& req = *it;

  if (auto m = req.find("method"); m != req.end() && !m->is_null()) {
    if (!m->is_string()) return InvalidHttpField("request.method", "expected a string");
    out.method = m->get<std::string>();
    for (char& c : out.method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    static const char* kMethods[] = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"};
    if (std::none_of(std::begin(kMethods), std::end(kMethods),
                     [&](const char* k) { return out.method == k; })) {
      return InvalidHttpField("request.method",
                              "unknown HTTP method '" + m->get<std::string>() +
                                  "' (valid: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)");
    }
  }

  auto u = req.find("url");
  if (u == req.end() || !u->is_string())
    return InvalidHttpField("request.url", "expected a string");
  Result<HttpUrl> url = ParseHttpUrl(u->get<std::string>());
  if (!url.ok()) return InvalidHttpField("request.url", url.status().message());
  out.url = *url;

  bool has_content_type = false;
  if (auto h = req.find("headers"); h != req.end() && !h->is_null()) {
    if (!h->is_object()) return InvalidHttpField("request.headers", "expected an object");
    for (const auto& [name, value] : h->items()) {
      const std::string field = "request.headers." + name;
      if (name.empty() || !std::all_of(name.begin(), name.end(), IsTokenChar)) {
        return InvalidHttpField(field, "bad header name");
      }
      if (value.is_null()) continue;
      if (value.is_object() || value.is_array()) {
        return InvalidHttpField(field, "expected a string, number or boolean");
      }
      std::string text = ArgText(value);
      if (text.find_first_of("\r\n", 0) != std::string::npos ||
          text.find('\0') != std::string::npos) {
        return InvalidHttpField(field, "contains CR, LF or NUL");
      }
      if (AsciiLower(name) == "content-type") has_content_type = true;
      out.headers.emplace_back(name, std::move(text));
    }
  }

  if (auto b = req.find("body"); b != req.end() && !b->is_null()) {
    out.has_body = true;
    if (b->is_string()) {
      out.body = b->get<std::string>();
      if (!has_content_type) out.headers.emplace_back("Content-Type", "text/plain; charset=utf-8");
    } else {
      out.body = b->dump();
      if (!has_content_type) out.headers.emplace_back("Content-Type", "application/json");
    }
  }

  if (auto t = req.find("timeout"); t != req.end() && !t->is_null()) {
    Result<Duration> d = baton::ParseDuration(*t);
    if (!d.ok()) return InvalidHttpField("request.timeout", d.status().message());
    if (d->count() <= 0) return InvalidHttpField("request.timeout", "must be more than 0");
    out.timeout = *d;
  }

  if (auto r = req.find("max_redirects"); r != req.end() && !r->is_null()) {
    if (!r->is_number_integer() || r->get<int64_t>() < 0) {
      return InvalidHttpField("request.max_redirects", "expected a non-negative integer");
    }
    out.max_redirects = static_cast<int>(std::min<int64_t>(r->get<int64_t>(), 100));
  }

  if (auto m = req.find("max_output"); m != req.end() && !m->is_null()) {
    Result<int64_t> n = baton::ParseByteSize(*m);
    if (!n.ok()) return InvalidHttpField("request.max_output", n.status().message());
    out.max_output = static_cast<size_t>(*n);
  }

  if (auto a = spec.find("accept"); a != spec.end() && !a->is_null()) {
    if (!a->is_array()) return InvalidHttpField("accept", "expected an array");
    for (size_t i = 0; i < a->size(); ++i) {
      Result<StatusRange> range = model::ParseStatusRange((*a)[i]);
      if (!range.ok())
        return InvalidHttpField("accept[" + std::to_string(i) + "]", range.status().message());
      out.accept.push_back(*range);
    }
  }
  return out;
}

}  // namespace baton::runners
