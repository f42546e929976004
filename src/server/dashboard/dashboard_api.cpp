// The dashboard: its page and files at / and /ui/HASH/NAME (web/, compiled in), and
// /api/v1/session, which exchanges a token for the session cookie the page then uses.
#include "server/api.h"
#include "server/dashboard/activity.h"
#include "server/dashboard/web_assets.h"
#include "server/views.h"

#include <algorithm>
#include <cctype>

namespace baton::server {
// A namespace of its own, so that unity builds can compile it with the other routes.
namespace dashboard_api {
namespace {

// Scripts, styles and images from this server only, none inline; no frames, plugins or
// form posts elsewhere: a value from a workflow that slipped into the page as markup
// could run nothing.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const WebAsset* FindAsset(std::string_view name) {
  for (const WebAsset& a : WebAssets()) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

// Accept-Encoding names gzip, without refusing it ("gzip;q=0").
bool AcceptsGzip(const HttpRequest& request) {
  const std::string& accepted = request.Header("accept-encoding");
  const size_t at = accepted.find("gzip");
  if (at == std::string::npos) return false;
  const size_t end = accepted.find(',', at);
  std::string params =
      accepted.substr(at + 4, end == std::string::npos ? std::string::npos : end - at - 4);
  std::erase(params, ' ');
  return params != ";q=0" && params != ";q=0.0" && params != ";q=0.00" && params != ";q=0.000";
}

HttpResponse Serve(const HttpRequest& request, const WebAsset& asset, bool immutable) {
  HttpResponse r;
  r.content_type = std::string(asset.content_type);
  r.headers.emplace_back("Cache-Control",
                         immutable ? "public, max-age=31536000, immutable" : "no-cache");
  r.headers.emplace_back("Vary", "Accept-Encoding");
  r.headers.emplace_back("Content-Security-Policy", kContentSecurityPolicy);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  // Each encoding is its own representation, with its own ETag.
  const bool gzip = AcceptsGzip(request);
  const std::string etag = gzip ? std::string(asset.etag.substr(0, asset.etag.size() - 1)) + "-gz\""
                                : std::string(asset.etag);
  r.headers.emplace_back("ETag", etag);
  if (request.Header("if-none-match") == etag) {
    r.status = 304;
    return r;
  }
  if (gzip) {
    r.body = std::string(asset.gzipped);
    r.headers.emplace_back("Content-Encoding", "gzip");
  } else {
    r.body = std::string(asset.plain);
  }
  return r;
}

// `Secure` when the browser reached the server over HTTPS through a proxy that says so
// (X-Forwarded-Proto): the cookie then never travels over plain HTTP. The server itself
// speaks plain HTTP, so without such a proxy there is no HTTPS to keep it to.
std::string SessionCookie(const HttpRequest& request, const std::string& value, TimeMs max_age_ms) {
  std::string proto = request.Header("x-forwarded-proto");
  std::transform(proto.begin(), proto.end(), proto.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::string(TokenAuthority::kSessionCookie) + "=" + value +
         "; Path=/; HttpOnly; SameSite=Strict" + (proto == "https" ? "; Secure" : "") +
         "; Max-Age=" + std::to_string(max_age_ms / 1000);
}

Json PrincipalJson(const Principal& p) {
  Json scopes = Json::array();
  for (Scope s : p.scopes) scopes.push_back(ToString(s));
  return {{"token_id", p.token_id},
          {"namespace", p.ns},
          {"scopes", scopes},
          // What the page may offer: actions need write; a read-only token sees none.
          {"can_write", p.Has(Scope::kWrite)}};
}

Json MinuteJson(const ActivityWindow::Minute& m) {
  auto ms = [](int64_t v) { return v < 0 ? Json(nullptr) : Json(v); };
  return {{"at", IsoTime(m.start)},
          {"executions_started", m.executions_started},
          {"executions_completed", m.executions_completed},
          {"executions_failed", m.executions_failed},
          {"steps_completed", m.steps_completed},
          {"steps_failed", m.steps_failed},
          {"step_p50_ms", ms(m.step_p50_ms)},
          {"step_p99_ms", ms(m.step_p99_ms)}};
}

}  // namespace

void AddRoutes(Router& router, ApiContext& ctx) {
  router.Add("GET", "/", Scope::kPublic, "The dashboard", [](const Call& call, Responder respond) {
    respond(Serve(*call.request, *FindAsset("index.html"), false));
  });
  router.Add(
      "GET", "/ui/{hash}/{name}", Scope::kPublic, "A file of the dashboard",
      [](const Call& call, Responder respond) {
        const WebAsset* asset = FindAsset(call.Param("name"));
        // Only the current version: an old page's URL must not get a new file
        // that it would then cache for good.
        if (asset == nullptr || asset->name == "index.html" || asset->hash != call.Param("hash")) {
          return respond(
              ErrorResponse(404, errc::kNotFound, "no dashboard file " + call.request->path));
        }
        respond(Serve(*call.request, *asset, true));
      });

  router.Add("GET", "/api/v1/activity", Scope::kRead,
             "This instance's last hour by minute (the dashboard's overview): executions "
             "started and finished, steps finished, step duration p50/p99; stalled executions",
             [&ctx](const Call& call, Responder respond) {
               const ActivityWindow::View v =
                   ctx.activity->Read(call.principal.ns, ctx.engine->clock().Now());
               Json minutes = Json::array();
               for (const auto& m : v.minutes) minutes.push_back(MinuteJson(m));
               Json stalled = Json::array();
               for (const auto& s : v.stalled) {
                 stalled.push_back({{"execution_id", s.execution_id},
                                    {"workflow", s.workflow},
                                    {"since", IsoTime(s.since)}});
               }
               respond(JsonResponse(200, {{"window_minutes", ActivityWindow::kMinutes},
                                          {"minutes", std::move(minutes)},
                                          {"hour", MinuteJson(v.total)},
                                          {"stalled", std::move(stalled)}}));
             });
  router.Add("POST", "/api/v1/session", Scope::kPublic,
             "Exchanges a token for the dashboard's session cookie",
             [&ctx](const Call& call, Responder respond) {
               Result<Json> body = ParseJsonBody(*call.request);
               if (!body.ok()) return respond(ErrorResponse(body.status()));
               if (auto bad = UnknownField(*body, {"token"})) return respond(std::move(*bad));
               // Only the dashboard's script logs in: another page of the same site (any
               // port) must not plant a session of its own in the browser.
               if (call.request->Header(kCsrfHeader).empty()) {
                 return respond(ErrorResponse(403, "FORBIDDEN",
                                              "a login must carry the X-Baton-Csrf header "
                                              "(the dashboard sends it)"));
               }
               const Json& token = body->value("token", Json(nullptr));
               if (!token.is_string()) {
                 return respond(FieldError("token", "must be a token (bt_...)"));
               }
               // The scope first: a token that may not use the dashboard opens no session
               // (and so cannot push others' sessions out of the bounded table).
               auto who = ctx.auth->Authenticate("Bearer " + token.get<std::string>());
               if (!who.ok()) return respond(ErrorResponse(who.status()));
               if (!who->Has(Scope::kRead)) {
                 return respond(ErrorResponse(403, "FORBIDDEN",
                                              "this token lacks the 'read' scope the "
                                              "dashboard needs"));
               }
               auto opened = ctx.auth->OpenSession(token.get<std::string>());
               if (!opened.ok()) return respond(ErrorResponse(opened.status()));
               Json out = PrincipalJson(opened->principal);
               out["expires_at"] = IsoTime(opened->expires_at);
               HttpResponse r = JsonResponse(201, out);
               r.headers.emplace_back("Set-Cookie", SessionCookie(*call.request, opened->secret,
                                                                  TokenAuthority::kSessionMs));
               respond(std::move(r));
             });
  router.Add("GET", "/api/v1/session", Scope::kRead, "Who the caller is (the dashboard's session)",
             [](const Call& call, Responder respond) {
               respond(JsonResponse(200, PrincipalJson(call.principal)));
             });
  router.Add("DELETE", "/api/v1/session", Scope::kRead, "Ends the dashboard's session",
             [&ctx](const Call& call, Responder respond) {
               ctx.auth->CloseSession(call.request->Header("cookie"));
               HttpResponse r = NoContent();
               r.headers.emplace_back("Set-Cookie", SessionCookie(*call.request, "", 0));
               respond(std::move(r));
             });
}

}  // namespace dashboard_api

void AddDashboardRoutes(Router& router, ApiContext& ctx) {
  dashboard_api::AddRoutes(router, ctx);
}

}  // namespace baton::server
