#include "server/http_types.h"

namespace baton::server {

const std::string& HttpRequest::Header(const std::string& lower_name) const {
  static const std::string kEmpty;
  auto it = headers.find(lower_name);
  return it == headers.end() ? kEmpty : it->second;
}

std::string HttpRequest::Query(const std::string& name, const std::string& fallback) const {
  auto it = query.find(name);
  return it == query.end() ? fallback : it->second;
}

HttpResponse JsonResponse(int status, const Json& body) {
  HttpResponse r;
  r.status = status;
  // Replace invalid UTF-8 rather than throw: bodies echo user input.
  r.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
  return r;
}

HttpResponse NoContent() {
  HttpResponse r;
  r.status = 204;
  r.content_type.clear();
  return r;
}

HttpResponse ErrorResponse(int status, const std::string& code, const std::string& message,
                           Json details) {
  return JsonResponse(
      status, {{"error", {{"code", code}, {"message", message}, {"details", std::move(details)}}}});
}

int HttpStatusFor(const std::string& code) {
  static const std::map<std::string, int> kStatus = {
      {errc::kValidation, 400},      {errc::kInvalidArgument, 400}, {errc::kTemplateError, 400},
      {errc::kConditionError, 400},  {"UNAUTHORIZED", 401},         {"FORBIDDEN", 403},
      {errc::kNotFound, 404},        {"METHOD_NOT_ALLOWED", 405},   {errc::kConflict, 409},
      {errc::kStaleAssignment, 409}, {"IDEMPOTENCY_MISMATCH", 409}, {"PAYLOAD_TOO_LARGE", 413},
      {"RATE_LIMITED", 429},         {errc::kTooManySignals, 429},  {errc::kStore, 503},
      {"UNAVAILABLE", 503},
  };
  auto it = kStatus.find(code);
  return it == kStatus.end() ? 500 : it->second;
}

HttpResponse ErrorResponse(const Status& status, Json details) {
  return ErrorResponse(HttpStatusFor(status.code()), status.code(), status.message(),
                       std::move(details));
}

namespace {
int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

bool PercentDecode(std::string_view in, std::string* out, bool plus_is_space) {
  out->clear();
  out->reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if (c == '%') {
      if (i + 2 >= in.size()) return false;
      int hi = HexValue(in[i + 1]);
      int lo = HexValue(in[i + 2]);
      if (hi < 0 || lo < 0) return false;
      char decoded = static_cast<char>(hi * 16 + lo);
      if (decoded == '\0') return false;
      out->push_back(decoded);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

bool ParseQuery(std::string_view text, std::map<std::string, std::string>* out) {
  while (!text.empty()) {
    size_t amp = text.find('&');
    std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    std::string key, value;
    if (!PercentDecode(pair.substr(0, eq), &key, true)) return false;
    if (eq != std::string_view::npos && !PercentDecode(pair.substr(eq + 1), &value, true)) {
      return false;
    }
    (*out)[key] = value;
  }
  return true;
}

}  // namespace baton::server
