// The dashboard over HTTP, from outside: its page and files (compiled in, gzipped,
// content-hash ETags, immutable caching, a strict Content-Security-Policy) and its
// session (a token exchanged for an HttpOnly, SameSite=Strict cookie that authenticates
// reads, and writes only with the CSRF header). tests/browser drives it in Chromium.
#include "support/server_process.h"
#include "support/server_test.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

namespace baton {
namespace {

using client::ApiClient;
using client::HttpReply;

class ServerDashboard : public testing::ServerTest {
 protected:
  ApiClient Anonymous() const { return ApiClient({server_->url(), ""}); }
  HttpReply Get(const std::string& target, const std::map<std::string, std::string>& headers = {}) {
    auto r = Anonymous().Send("GET", target, "", "application/json", headers);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : HttpReply{};
  }
  // POST /api/v1/session with `token`: the reply.
  HttpReply OpenSession(const std::string& token) {
    auto r = Anonymous().Send("POST", "/api/v1/session", Json{{"token", token}}.dump(),
                              "application/json", {{"X-Baton-Csrf", "1"}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : HttpReply{};
  }
  // The "Cookie:" header that a browser would send back after `reply`.
  static std::string CookieFrom(const HttpReply& reply) {
    auto it = reply.headers.find("set-cookie");
    if (it == reply.headers.end()) return "";
    return it->second.substr(0, it->second.find(';'));
  }
  HttpReply WithCookie(const std::string& method, const std::string& target,
                       const std::string& cookie, bool csrf = false, const std::string& body = "") {
    std::map<std::string, std::string> headers = {{"Cookie", cookie}};
    if (csrf) headers["X-Baton-Csrf"] = "1";
    auto r = Anonymous().Send(method, target, body, "application/json", headers);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : HttpReply{};
  }
  std::string NewToken(const std::string& scope) {
    auto r = server_->Admin().Call("POST", "/api/v1/tokens",
                                   {{"name", scope + "-token"}, {"scopes", {scope}}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->value("token", "") : "";
  }
};

TEST_F(ServerDashboard, ThePageAndItsFilesAreServedCompiledInWithAStrictPolicy) {
  HttpReply page = Get("/");
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.headers["content-type"], "text/html; charset=utf-8");
  EXPECT_EQ(page.headers["cache-control"], "no-cache");
  const std::string csp = page.headers["content-security-policy"];
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
  EXPECT_EQ(page.headers["x-content-type-options"], "nosniff");
  // No inline script: every <script> names its file.
  EXPECT_EQ(page.body.find("<script>"), std::string::npos) << page.body;

  // Revalidation: the same ETag answers 304 without a body.
  const std::string etag = page.headers["etag"];
  ASSERT_FALSE(etag.empty());
  HttpReply again = Get("/", {{"If-None-Match", etag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());

  // Every file the page names is served immutable at its content-hash URL, gzipped when
  // the browser takes gzip; all of it well under the 200 KB budget.
  std::regex named(R"re((?:src|href)="(/ui/[0-9a-f]{16}/[a-z.]+)")re");
  size_t files = 0, gzipped_bytes = 0;
  for (std::sregex_iterator it(page.body.begin(), page.body.end(), named), end; it != end; ++it) {
    const std::string url = (*it)[1];
    HttpReply plain = Get(url);
    ASSERT_EQ(plain.status, 200) << url;
    EXPECT_EQ(plain.headers["cache-control"], "public, max-age=31536000, immutable");
    HttpReply zipped = Get(url, {{"Accept-Encoding", "gzip, deflate"}});
    ASSERT_EQ(zipped.status, 200) << url;
    EXPECT_EQ(zipped.headers["content-encoding"], "gzip");
    EXPECT_NE(zipped.headers["etag"], plain.headers["etag"]) << "one ETag per encoding";
    EXPECT_EQ(
        Get(url, {{"Accept-Encoding", "gzip"}, {"If-None-Match", zipped.headers["etag"]}}).status,
        304);
    EXPECT_EQ(Get(url, {{"Accept-Encoding", "gzip;q=0"}}).headers.count("content-encoding"), 0u);
    ASSERT_GE(zipped.body.size(), 2u);
    EXPECT_EQ(static_cast<unsigned char>(zipped.body[0]), 0x1f);
    EXPECT_EQ(static_cast<unsigned char>(zipped.body[1]), 0x8b);
    EXPECT_LT(zipped.body.size(), plain.body.size());
    gzipped_bytes += zipped.body.size();
    ++files;
    // Another hash (an older page's) is not served the new file.
    std::string stale = url;
    stale.replace(4, 16, "0000000000000000");
    EXPECT_EQ(Get(stale).status, 404) << stale;
  }
  EXPECT_GE(files, 2u) << page.body;
  EXPECT_LT(gzipped_bytes, 200u * 1024);
  EXPECT_EQ(Get("/ui/0000000000000000/nothing.js").status, 404);
}

TEST_F(ServerDashboard, ATokenBecomesAnHttpOnlySessionCookie) {
  HttpReply bad = OpenSession("bt_" + std::string(40, '0'));
  EXPECT_EQ(bad.status, 401) << bad.body;
  EXPECT_EQ(bad.headers.count("set-cookie"), 0u);
  EXPECT_EQ(OpenSession("not a token").status, 401);
  const std::map<std::string, std::string> csrf = {{"X-Baton-Csrf", "1"}};
  EXPECT_EQ(Anonymous()
                .Send("POST", "/api/v1/session", R"({"token": 7})", "application/json", csrf)
                ->status,
            400);
  EXPECT_EQ(
      Anonymous()
          .Send("POST", "/api/v1/session", R"({"token": "x", "more": 1})", "application/json", csrf)
          ->status,
      400);
  // Another page of the same site cannot log the browser in to a session of its own.
  auto planted =
      Anonymous().Send("POST", "/api/v1/session", Json{{"token", server_->admin_token()}}.dump());
  ASSERT_TRUE(planted.ok());
  EXPECT_EQ(planted->status, 403) << planted->body;
  EXPECT_EQ(planted->headers.count("set-cookie"), 0u);
  // A worker token cannot open the dashboard.
  EXPECT_EQ(OpenSession(NewToken("worker")).status, 403);

  HttpReply opened = OpenSession(server_->admin_token());
  ASSERT_EQ(opened.status, 201) << opened.body;
  const std::string set_cookie = opened.headers["set-cookie"];
  EXPECT_NE(set_cookie.find("baton_session=bs_"), std::string::npos) << set_cookie;
  EXPECT_NE(set_cookie.find("HttpOnly"), std::string::npos) << set_cookie;
  EXPECT_NE(set_cookie.find("SameSite=Strict"), std::string::npos) << set_cookie;
  EXPECT_NE(set_cookie.find("Path=/"), std::string::npos) << set_cookie;
  EXPECT_EQ(set_cookie.find(server_->admin_token()), std::string::npos) << "the token itself";
  const Json who = Json::parse(opened.body);
  EXPECT_EQ(who["namespace"], "default");
  EXPECT_EQ(who["can_write"], true);

  const std::string cookie = CookieFrom(opened);
  EXPECT_EQ(Get("/api/v1/executions").status, 401);
  EXPECT_EQ(WithCookie("GET", "/api/v1/executions", cookie).status, 200);
  EXPECT_EQ(
      WithCookie("GET", "/api/v1/executions", "baton_session=bs_" + std::string(40, '1')).status,
      401);
  HttpReply session = WithCookie("GET", "/api/v1/session", "other=1; " + cookie + "; x=y");
  EXPECT_EQ(session.status, 200) << session.body;
  // An admin's session is not a worker: the worker protocol wants a bearer token.
  EXPECT_EQ(WithCookie("GET", "/api/v1/workers/w1/poll?wait=0", cookie).status, 403);

  // Logging out ends the session.
  HttpReply closed = WithCookie("DELETE", "/api/v1/session", cookie, true);
  EXPECT_EQ(closed.status, 204);
  EXPECT_NE(closed.headers["set-cookie"].find("Max-Age=0"), std::string::npos);
  EXPECT_EQ(WithCookie("GET", "/api/v1/executions", cookie).status, 401);
}

TEST_F(ServerDashboard, ACookieWriteNeedsTheCsrfHeaderAndAReadOnlyTokenCannotWrite) {
  CreateWorkflow("name: nap\nsteps:\n  - {id: nap, type: shell, run: [sleep, '30']}\n");
  const std::string cookie = CookieFrom(OpenSession(server_->admin_token()));
  const std::string submit = R"({"workflow": "nap"})";
  // Another site's form or fetch would carry the cookie, but not the header.
  HttpReply forged = WithCookie("POST", "/api/v1/executions", cookie, false, submit);
  EXPECT_EQ(forged.status, 403) << forged.body;
  EXPECT_NE(forged.body.find("X-Baton-Csrf"), std::string::npos) << forged.body;
  HttpReply submitted = WithCookie("POST", "/api/v1/executions", cookie, true, submit);
  ASSERT_EQ(submitted.status, 201) << submitted.body;
  const std::string id = Json::parse(submitted.body)["id"];

  HttpReply viewer = OpenSession(NewToken("read"));
  ASSERT_EQ(viewer.status, 201);
  EXPECT_EQ(Json::parse(viewer.body)["can_write"], false);
  HttpReply refused =
      WithCookie("POST", "/api/v1/executions/" + id + "/cancel", CookieFrom(viewer), true, "{}");
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_EQ(WithCookie("POST", "/api/v1/executions/" + id + "/cancel", cookie, true, "{}").status,
            200);
}

TEST_F(ServerDashboard, ARevokedTokenEndsItsSessions) {
  auto created =
      server_->Admin().Call("POST", "/api/v1/tokens", {{"name", "ops"}, {"scopes", {"read"}}});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string cookie = CookieFrom(OpenSession(created->value("token", "")));
  EXPECT_EQ(WithCookie("GET", "/api/v1/executions", cookie).status, 200);
  auto revoked = server_->Admin().Send("DELETE", "/api/v1/tokens/" + created->value("id", ""));
  ASSERT_TRUE(revoked.ok() && revoked->status == 204);
  EXPECT_EQ(WithCookie("GET", "/api/v1/executions", cookie).status, 401);
}

// What the executions view asks for: text search over ids, inputs and outputs (?q=),
// and the counts by status of a filter.
TEST_F(ServerDashboard, ExecutionsAreSearchedAndCountedByStatus) {
  CreateWorkflow(
      "name: echo\ninputs:\n  who: {type: string}\n"
      "steps:\n  - {id: say, type: noop, with: \"hello {{ inputs.who }}\"}\n"
      "output: \"{{ steps.say.output }}\"\n");
  CreateWorkflow("name: nap\nsteps:\n  - {id: nap, type: shell, run: [sleep, '30']}\n");
  ApiClient admin = server_->Admin();
  std::vector<std::string> ids;
  for (const char* who : {"acme", "globex", "acme-east"}) {
    auto r =
        admin.Call("POST", "/api/v1/executions", {{"workflow", "echo"}, {"input", {{"who", who}}}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ids.push_back(r->value("id", ""));
    testing::WaitForExecutionStatus(admin, ids.back(), "completed");
  }
  auto napping = admin.Call("POST", "/api/v1/executions", {{"workflow", "nap"}});
  ASSERT_TRUE(napping.ok());
  testing::WaitForExecutionStatus(admin, napping->value("id", ""), "running");

  auto found = admin.Call("GET", "/api/v1/executions?q=acme");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  ASSERT_EQ((*found)["executions"].size(), 2u) << found->dump();
  EXPECT_EQ((*found)["executions"][0]["id"], ids[2]);
  EXPECT_EQ((*found)["executions"][1]["id"], ids[0]);
  // In the output too ("hello globex"), and in the id.
  EXPECT_EQ((*admin.Call("GET", "/api/v1/executions?q=hello%20globex"))["executions"].size(), 1u);
  EXPECT_EQ((*admin.Call("GET", "/api/v1/executions?q=" + ids[1]))["executions"].size(), 1u);

  auto counts = admin.Call("GET", "/api/v1/executions/counts");
  ASSERT_TRUE(counts.ok()) << counts.status().ToString();
  EXPECT_EQ(*counts, (Json{{"counts", {{"completed", 3}, {"running", 1}}}, {"total", 4}}));
  counts = admin.Call("GET", "/api/v1/executions/counts?q=acme&status=running");
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ(*counts, (Json{{"counts", {{"completed", 2}}}, {"total", 2}}))
      << "status is not applied";
  counts = admin.Call("GET", "/api/v1/executions/counts?workflow=nap");
  EXPECT_EQ((*counts)["total"], 1);

  auto too_long = admin.Send("GET", "/api/v1/executions?q=" + std::string(257, 'x'));
  ASSERT_TRUE(too_long.ok());
  EXPECT_EQ(too_long->status, 400) << too_long->body;
  EXPECT_EQ(admin.Send("GET", "/api/v1/executions/counts?since=yesterday")->status, 400);
  // Another namespace counts nothing of these.
  auto other = admin.Call("POST", "/api/v1/tokens",
                          {{"name", "b"}, {"scopes", {"read"}}, {"namespace", "team-b"}});
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  auto theirs = server_->As(other->value("token", "")).Call("GET", "/api/v1/executions/counts");
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ((*theirs)["total"], 0);
}

// The live feed takes the cookie from the server's own pages only: another site's page
// could open a WebSocket here and the browser would send the cookie along.
TEST_F(ServerDashboard, TheFeedRefusesTheCookieFromAnotherSite) {
  const std::string cookie = CookieFrom(OpenSession(server_->admin_token()));
  std::map<std::string, std::string> upgrade = {{"Connection", "Upgrade"},
                                                {"Upgrade", "websocket"},
                                                {"Sec-WebSocket-Version", "13"},
                                                {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
                                                {"Cookie", cookie},
                                                {"Origin", "https://evil.example"}};
  auto foreign = Anonymous().Send("GET", "/api/v1/events", "", "application/json", upgrade);
  ASSERT_TRUE(foreign.ok()) << foreign.status().ToString();
  EXPECT_EQ(foreign->status, 403) << foreign->body;
  EXPECT_NE(foreign->body.find("this server's pages"), std::string::npos) << foreign->body;
}

// Behind a proxy that speaks HTTPS to the browser, the cookie is kept to HTTPS.
TEST_F(ServerDashboard, TheCookieIsSecureBehindAnHttpsProxy) {
  auto plain = OpenSession(server_->admin_token());
  EXPECT_EQ(plain.headers["set-cookie"].find("Secure"), std::string::npos)
      << plain.headers["set-cookie"];
  auto r =
      Anonymous().Send("POST", "/api/v1/session", Json{{"token", server_->admin_token()}}.dump(),
                       "application/json", {{"X-Baton-Csrf", "1"}, {"X-Forwarded-Proto", "HTTPS"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 201) << r->body;
  EXPECT_NE(r->headers["set-cookie"].find("; Secure"), std::string::npos)
      << r->headers["set-cookie"];
}

// One token logging in again and again drops its own oldest session, not anyone else's.
TEST_F(ServerDashboard, ATokenKeepsAtMostAHundredSessions) {
  const std::string other = CookieFrom(OpenSession(NewToken("read")));
  const std::string token = NewToken("read");
  const std::string first = CookieFrom(OpenSession(token));
  std::string last;
  for (int i = 0; i < 100; ++i) last = CookieFrom(OpenSession(token));
  EXPECT_EQ(WithCookie("GET", "/api/v1/session", first).status, 401) << "the oldest was dropped";
  EXPECT_EQ(WithCookie("GET", "/api/v1/session", last).status, 200);
  EXPECT_EQ(WithCookie("GET", "/api/v1/session", other).status, 200) << "another token's stays";
}

// The list's bulk actions: a dry run says how many executions an action would touch
// (the page's confirmation names that number), and the action then touches those.
TEST_F(ServerDashboard, ABulkActionTouchesWhatTheFilterMatchesAndADryRunCountsIt) {
  CreateWorkflow("name: nap\nsteps:\n  - {id: nap, type: shell, run: [sleep, '30']}\n");
  CreateWorkflow("name: quick\nsteps:\n  - {id: a, type: noop}\n");
  ApiClient admin = server_->Admin();
  std::vector<std::string> naps;
  for (int i = 0; i < 3; ++i) {
    auto r = admin.Call("POST", "/api/v1/executions", {{"workflow", "nap"}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    naps.push_back(r->value("id", ""));
  }
  auto quick = admin.Call("POST", "/api/v1/executions", {{"workflow", "quick"}});
  ASSERT_TRUE(quick.ok());
  testing::WaitForExecutionStatus(admin, quick->value("id", ""), "completed");
  for (const auto& id : naps) testing::WaitForExecutionStatus(admin, id, "running");

  // Cancel applies to the three naps only: the completed one is not counted.
  auto dry =
      admin.Call("POST", "/api/v1/executions/bulk", {{"action", "cancel"}, {"dry_run", true}});
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  EXPECT_EQ((*dry)["matched"], 3) << dry->dump();
  EXPECT_EQ((*dry)["applied"], 0);
  for (const auto& id : naps) {
    EXPECT_EQ((*admin.Call("GET", "/api/v1/executions/" + id))["status"], "running")
        << "a dry run changed nothing";
  }
  // A read-only token may not; another namespace matches nothing of these.
  auto reader = server_->As(NewToken("read"))
                    .Send("POST", "/api/v1/executions/bulk",
                          Json{{"action", "cancel"}, {"dry_run", true}}.dump());
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ(reader->status, 403) << reader->body;
  auto other = admin.Call("POST", "/api/v1/tokens",
                          {{"name", "b"}, {"scopes", {"read", "write"}}, {"namespace", "team-b"}});
  ASSERT_TRUE(other.ok());
  auto theirs = server_->As(other->value("token", ""))
                    .Call("POST", "/api/v1/executions/bulk", {{"action", "cancel"}});
  ASSERT_TRUE(theirs.ok()) << theirs.status().ToString();
  EXPECT_EQ((*theirs)["matched"], 0);

  auto cancelled = admin.Call("POST", "/api/v1/executions/bulk",
                              {{"action", "cancel"}, {"filter", {{"workflow", "nap"}}}});
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ((*cancelled)["applied"], 3) << cancelled->dump();
  EXPECT_EQ((*cancelled)["failed"], 0);
  for (const auto& id : naps) testing::WaitForExecutionStatus(admin, id, "cancelled");

  // Retry them, then cancel at most one: `truncated` says more matched.
  auto retried = admin.Call("POST", "/api/v1/executions/bulk",
                            {{"action", "retry"}, {"filter", {{"status", "cancelled"}}}});
  ASSERT_TRUE(retried.ok()) << retried.status().ToString();
  EXPECT_EQ((*retried)["applied"], 3) << retried->dump();
  for (const auto& id : naps) testing::WaitForExecutionStatus(admin, id, "running");
  auto one = admin.Call("POST", "/api/v1/executions/bulk", {{"action", "cancel"}, {"max", 1}});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ((*one)["applied"], 1) << one->dump();
  EXPECT_EQ((*one)["truncated"], true);
  auto counts = admin.Call("GET", "/api/v1/executions/counts?workflow=nap");
  EXPECT_EQ((*counts)["counts"], (Json{{"cancelled", 1}, {"running", 2}})) << counts->dump();

  // Bad requests are refused whole, naming the field.
  for (const auto& [body, field] : std::vector<std::pair<Json, std::string>>{
           {{{"action", "explode"}}, "action"},
           {{{"action", "cancel"}, {"filter", {{"status", "sleepy"}}}}, "status"},
           {{{"action", "cancel"}, {"filter", {{"workflow", 5}}}}, "filter.workflow"},
           {{{"action", "cancel"}, {"filter", {{"colour", "red"}}}}, "filter.colour"},
           {{{"action", "cancel"}, {"max", 100000}}, "max"},
           {{{"action", "cancel"}, {"dry_run", "yes"}}, "dry_run"}}) {
    auto bad = admin.Send("POST", "/api/v1/executions/bulk", body.dump());
    ASSERT_TRUE(bad.ok());
    EXPECT_EQ(bad->status, 400) << body.dump() << " -> " << bad->body;
    EXPECT_NE(bad->body.find(field), std::string::npos) << bad->body;
  }
  counts = admin.Call("GET", "/api/v1/executions/counts?workflow=nap");
  EXPECT_EQ((*counts)["counts"], (Json{{"cancelled", 1}, {"running", 2}})) << "nothing changed";
}

// The overview's last hour, by minute, of the caller's namespace only.
TEST_F(ServerDashboard, TheActivityOfTheLastHourIsCountedByMinute) {
  CreateWorkflow(
      "name: two\nsteps:\n  - {id: a, type: noop}\n  - {id: b, type: noop, depends_on: a}\n");
  ApiClient admin = server_->Admin();
  for (int i = 0; i < 2; ++i) {
    auto r = admin.Call("POST", "/api/v1/executions", {{"workflow", "two"}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    testing::WaitForExecutionStatus(admin, r->value("id", ""), "completed");
  }
  // The window counts an execution's events once their commit is done, on the engine
  // thread; the execution reads as completed from the store a moment before that.
  Result<Json> activity = Status(errc::kIo, "not read");
  EXPECT_TRUE(testing::WaitUntil([&] {
    activity = admin.Call("GET", "/api/v1/activity");
    return activity.ok() && (*activity)["hour"]["executions_completed"] == 2;
  })) << (activity.ok() ? activity->dump() : activity.status().ToString());
  ASSERT_TRUE(activity.ok()) << activity.status().ToString();
  EXPECT_EQ((*activity)["window_minutes"], 60);
  ASSERT_EQ((*activity)["minutes"].size(), 60u);
  const Json& hour = (*activity)["hour"];
  EXPECT_EQ(hour["executions_started"], 2) << activity->dump();
  EXPECT_EQ(hour["executions_completed"], 2);
  EXPECT_EQ(hour["steps_completed"], 4);
  EXPECT_TRUE(hour["step_p50_ms"].is_number_integer()) << hour.dump();
  int64_t by_minute = 0;
  for (const Json& m : (*activity)["minutes"]) by_minute += m["steps_completed"].get<int64_t>();
  EXPECT_EQ(by_minute, 4);

  auto other = admin.Call("POST", "/api/v1/tokens",
                          {{"name", "b"}, {"scopes", {"read"}}, {"namespace", "team-b"}});
  ASSERT_TRUE(other.ok());
  auto theirs = server_->As(other->value("token", "")).Call("GET", "/api/v1/activity");
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ((*theirs)["hour"]["executions_started"], 0);
  EXPECT_EQ(Anonymous().Send("GET", "/api/v1/activity")->status, 401);
}

}  // namespace
}  // namespace baton
