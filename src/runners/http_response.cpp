#include "runners/http_response.h"

#include "common/json_parse.h"

#include <cctype>
#include <optional>
#include <string_view>

#include "runners/shell_result.h"

namespace baton::runners {
namespace {

bool IsJsonType(std::string_view content_type) {
  std::string media = AsciiLower(content_type.substr(0, content_type.find(';')));
  while (!media.empty() && std::isspace(static_cast<unsigned char>(media.back()))) media.pop_back();
  size_t start = media.find_first_not_of(" \t");
  media = start == std::string::npos ? "" : media.substr(start);
  return media == "application/json" || media.ends_with("+json");
}

Json BodyValue(const std::string& body, const std::optional<std::string>& content_type) {
  if (body.empty()) return "";
  if (!content_type || IsJsonType(*content_type)) {
    Json parsed;  // JSON too deep to walk safely stays text
    if (ParseJsonText(body, &parsed, nullptr)) return parsed;
  }
  return SanitizeUtf8(body);
}

}  // namespace

Json ResponseOutput(int status, const HttpFields& fields, const std::string* body) {
  Json headers = Json::object();
  std::optional<std::string> content_type;
  for (const auto& [raw_name, raw_value] : fields) {
    std::string name = AsciiLower(raw_name);
    std::string value = SanitizeUtf8(raw_value);
    if (name == "content-type" && !content_type) content_type = raw_value;
    auto it = headers.find(name);
    if (it == headers.end()) {
      headers[name] = value;
    } else {
      *it = it->get<std::string>() + ", " + value;
    }
  }
  Json out = {{"status", status}, {"headers", std::move(headers)}};
  if (body) out["body"] = BodyValue(*body, content_type);
  return out;
}

bool IsRedirect(int status) {
  return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

RedirectPlan PlanRedirect(HttpSpec& spec, int followed, int status, const std::string* location) {
  if (!location) return {};
  if (followed >= spec.max_redirects) {
    return {RedirectPlan::kRefuse, "stopped after " + std::to_string(spec.max_redirects) +
                                       " redirects: " + std::to_string(status) + " to " +
                                       *location};
  }
  Result<HttpUrl> next = ResolveLocation(spec.url, *location);
  if (!next.ok()) {
    return {RedirectPlan::kRefuse,
            "returned " + std::to_string(status) +
                " with a Location that cannot be followed: " + next.status().message()};
  }
  if (next->https != spec.url.https || next->host != spec.url.host || next->port != spec.url.port) {
    std::erase_if(spec.headers, [](const auto& h) {
      std::string n = AsciiLower(h.first);
      return n == "authorization" || n == "cookie" || n == "proxy-authorization";
    });
  }
  if (status == 303 && spec.method != "HEAD") {
    spec.method = "GET";
    spec.has_body = false;
    spec.body.clear();
    std::erase_if(spec.headers,
                  [](const auto& h) { return AsciiLower(h.first) == "content-type"; });
  }
  spec.url = *next;
  return {RedirectPlan::kFollow, ""};
}

}  // namespace baton::runners
