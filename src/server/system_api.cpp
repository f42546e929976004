// /health, /metrics and /api/v1/openapi.json.
#include "server/api.h"

#include "common/json_parse.h"
#include "server/metrics.h"
#include "server/openapi/openapi.h"

#include <algorithm>
#include <cctype>

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace system_api {
namespace {

constexpr TimeMs kEngineStaleMs = 5'000;  // the engine reports every 500 ms

}  // namespace
}  // namespace system_api

void AddSystemRoutes(Router& router, ApiContext& ctx) {
  using namespace system_api;
  router.Add(
      "GET", "/health", Scope::kPublic, "Store and engine status (503 when either is down)",
      [&ctx](const Call&, Responder respond) {
        Json out = {{"status", "ok"}, {"store", "ok"}, {"engine", "ok"}};
        int code = 200;
        const TimeMs now = ctx.engine->clock().Now();
        if (!ctx.engine->running() || now - ctx.metrics->last_engine_report() > kEngineStaleMs) {
          out["engine"] = "not responding";
          code = 503;
        }
        if (ctx.metrics->store_errors() > 0) {
          out["store_errors"] = ctx.metrics->store_errors();
        }
        auto probe = ctx.store->GetExecution("~health-probe");
        if (code != 200) {
          out["status"] = "unavailable";
          if (!probe.ok() && probe.status().code() != errc::kNotFound) {
            out["store"] = probe.status().message();
          }
        } else if (!probe.ok() && probe.status().code() != errc::kNotFound) {
          // The store cannot be read (its database server is gone): nothing is served
          // until it is back, which the server waits for and heals without a restart.
          out["status"] = "degraded";
          out["store"] = probe.status().message();
          code = 503;
        } else if (auto failing = ctx.metrics->StoreFailing()) {
          // Reads work, writes are refused (a full disk): new work gets 503 until a
          // batch commits again, which heals it without a restart.
          out["status"] = "degraded";
          out["store"] = "refusing writes: " + *failing;
          code = 503;
        }
        respond(JsonResponse(code, out));
      });
  router.Add("GET", "/metrics", Scope::kRead, "Prometheus metrics (text format)",
             [&ctx](const Call&, Responder respond) {
               HttpResponse r;
               r.content_type = "text/plain; version=0.0.4";
               r.body = ctx.metrics->Render();
               respond(std::move(r));
             });
  router.Add("GET", "/api/v1/openapi.json", Scope::kPublic, "This API's OpenAPI description",
             [&router](const Call&, Responder respond) {
               respond(JsonResponse(200, OpenApiDocument(router.Routes())));
             });
}

Result<Json> ParseJsonBody(const HttpRequest& request) {
  if (request.body.empty()) return Status(errc::kInvalidArgument, "the request body is empty");
  Result<Json> parsed = ParseJsonText(request.body, "the request body");
  if (!parsed.ok()) return parsed.status();
  Json j = std::move(parsed).value();
  if (!j.is_object()) return Status(errc::kInvalidArgument, "the request body must be an object");
  return j;
}

std::optional<HttpResponse> UnknownField(const Json& body, const std::vector<std::string>& valid,
                                         const std::string& where) {
  for (const auto& [key, value] : body.items()) {
    if (std::find(valid.begin(), valid.end(), key) == valid.end()) {
      return ErrorResponse(400, errc::kValidation, "unknown field '" + where + key + "'",
                           {{"field", where + key}, {"valid_fields", valid}});
    }
  }
  return std::nullopt;
}

HttpResponse FieldError(const std::string& field, const std::string& message) {
  return ErrorResponse(400, errc::kValidation, "field '" + field + "': " + message,
                       {{"field", field}});
}

Result<int> VersionField(const Json& body) {
  if (!body.contains("version")) return 0;
  const Json& v = body["version"];
  if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > INT32_MAX) {
    return Status(errc::kValidation, "must be a positive integer (omit it for the latest)");
  }
  return v.get<int>();
}

bool IsSimpleName(const std::string& s, size_t max_len) {
  if (s.empty() || s.size() > max_len) return false;
  // "." and ".." are path segments, not names (they end up in URLs).
  if (s.find_first_not_of('.') == std::string::npos) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

Result<size_t> PageLimit(const HttpRequest& request, size_t fallback, size_t max) {
  std::string text = request.Query("limit");
  if (text.empty()) return fallback;
  if (text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) {
    return Status(errc::kInvalidArgument, "limit must be a positive integer");
  }
  size_t n = std::stoul(text);
  if (n < 1 || n > max) {
    return Status(errc::kInvalidArgument, "limit must be between 1 and " + std::to_string(max));
  }
  return n;
}

}  // namespace baton::server
