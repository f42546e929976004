// The http runner against a tiny HTTP/1.1 server on loopback
// (tests/support/http_test_server.h): each test gives it a handler that maps a request
// to the raw response text.
#include "runners/http_runner.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "support/http_test_server.h"

namespace baton {
namespace {

using namespace std::chrono_literals;
using testing::CallRecord;
using testing::LoopbackAllowed;
using testing::Received;
using testing::Response;
using testing::TestServer;
constexpr auto kWait = testing::kHttpWait;

RunRequest Request(Json spec, std::string id = "a1") {
  return testing::HttpRequest(std::move(spec), std::move(id));
}

class HttpRunnerTest : public ::testing::Test {
 protected:
  RunResult Run(Json spec) { return testing::RunHttp(*runner_, std::move(spec)); }
  std::unique_ptr<Runner> runner_ = NewHttpRunner(LoopbackAllowed());
};

TEST_F(HttpRunnerTest, GetJson) {
  TestServer server([](const Received&) {
    return Response(200, R"({"a": 1, "b": [true]})", {{"Content-Type", "application/json"}});
  });
  RunResult r = Run({{"request", {{"url", server.Url("/x?q=1")}}}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["status"], 200);
  EXPECT_EQ(r.output["body"], Json::parse(R"({"a": 1, "b": [true]})"));
  EXPECT_EQ(r.output["headers"]["content-type"], "application/json");
  ASSERT_EQ(server.requests().size(), 1u);
  Received got = server.requests()[0];
  EXPECT_EQ(got.method, "GET");
  EXPECT_EQ(got.target, "/x?q=1");
  EXPECT_EQ(got.Header("host"), "127.0.0.1:" + std::to_string(server.port()));
  EXPECT_EQ(got.Header("user-agent"), "baton/0.1");
  EXPECT_EQ(got.Header("connection"), "close");
  EXPECT_EQ(got.body, "");
}

TEST_F(HttpRunnerTest, PostJsonBodyIsEchoed) {
  TestServer server([](const Received& req) {
    return Response(201, req.body, {{"Content-Type", "application/json; charset=utf-8"}});
  });
  Json body = Json::parse(R"({"model": "m1", "n": [1, 2.5, null]})");
  RunResult r = Run({{"request", {{"method", "post"}, {"url", server.Url("/echo")}, {"body", body}}}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["status"], 201);
  EXPECT_EQ(r.output["body"], body);
  Received got = server.requests().at(0);
  EXPECT_EQ(got.method, "POST");
  EXPECT_EQ(got.Header("content-type"), "application/json");
  EXPECT_EQ(Json::parse(got.body), body);
}

TEST_F(HttpRunnerTest, TextBodies) {
  TestServer server([](const Received& req) {
    if (req.target == "/plain") return Response(200, "123", {{"Content-Type", "text/plain"}});
    if (req.target == "/untyped") return Response(200, R"({"x": 1})");
    if (req.target == "/bad-json") {
      return Response(200, "{oops", {{"Content-Type", "application/json"}});
    }
    if (req.target == "/binary") return Response(200, "a\xff" "b");
    return Response(200, "got " + req.body + " as " + req.Header("content-type"),
                    {{"Content-Type", "text/html"}});
  });
  RunResult r = Run({{"request", {{"method", "PUT"}, {"url", server.Url("/t")}, {"body", "hello"}}}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["body"], "got hello as text/plain; charset=utf-8");
  EXPECT_EQ(Run({{"request", {{"url", server.Url("/plain")}}}}).output["body"], "123");
  EXPECT_EQ(Run({{"request", {{"url", server.Url("/untyped")}}}}).output["body"],
            Json::parse(R"({"x": 1})"));
  EXPECT_EQ(Run({{"request", {{"url", server.Url("/bad-json")}}}}).output["body"], "{oops");
  EXPECT_EQ(Run({{"request", {{"url", server.Url("/binary")}}}}).output["body"], "a\xEF\xBF\xBD" "b");
}

TEST_F(HttpRunnerTest, Headers) {
  TestServer server([](const Received&) {
    return Response(200, "", {{"X-Multi", "a"}, {"X-Multi", "b"}, {"X-Request-ID", "r1"}});
  });
  RunResult r = Run({{"request",
                      {{"url", server.Url("/")},
                       {"headers", {{"Authorization", "Bearer t"}, {"X-Num", 3},
                                    {"User-Agent", "mine"}, {"Content-Length", "999"}}}}}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["headers"]["x-multi"], "a, b");
  EXPECT_EQ(r.output["headers"]["x-request-id"], "r1");
  EXPECT_EQ(r.output["headers"]["content-length"], "0");
  EXPECT_EQ(r.output["body"], "");
  Received got = server.requests().at(0);
  EXPECT_EQ(got.Header("authorization"), "Bearer t");
  EXPECT_EQ(got.Header("x-num"), "3");
  EXPECT_EQ(got.Header("user-agent"), "mine");
  EXPECT_EQ(got.Header("content-length"), "<none>");  // the spec's is ignored
}

TEST_F(HttpRunnerTest, HeadHasNoBody) {
  TestServer server([](const Received&) {
    // A HEAD response announces a length it does not send.
    return std::string("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\n");
  });
  RunResult r = Run({{"request", {{"method", "HEAD"}, {"url", server.Url("/")}}}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["status"], 200);
  EXPECT_EQ(r.output["body"], "");
  EXPECT_EQ(server.requests().at(0).method, "HEAD");
}

TEST_F(HttpRunnerTest, Non2xxIsHttpStatusWithOutput) {
  TestServer server([](const Received&) {
    return Response(503, R"({"error": "busy"})", {{"Content-Type", "application/json"}});
  });
  RunResult r = Run({{"request", {{"url", server.Url("/y")}}}});
  EXPECT_EQ(r.status.code(), "HTTP_STATUS");
  EXPECT_EQ(r.status.message(), "GET " + server.Url("/y") + " returned 503");
  EXPECT_EQ(r.output["status"], 503);
  EXPECT_EQ(r.output["body"]["error"], "busy");
  EXPECT_EQ(r.error_details["status"], 503);
}

TEST_F(HttpRunnerTest, AcceptList) {
  TestServer server([](const Received& req) {
    return Response(req.target == "/404" ? 404 : 500, "no");
  });
  Json req404 = {{"url", server.Url("/404")}};
  Json req500 = {{"url", server.Url("/500")}};
  EXPECT_EQ(Run({{"request", req404}}).status.code(), "HTTP_STATUS");
  RunResult r = Run({{"request", req404}, {"accept", {404}}});
  EXPECT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["status"], 404);
  EXPECT_TRUE(Run({{"request", req404}, {"accept", {"4xx"}}}).status.ok());
  EXPECT_TRUE(Run({{"request", req500}, {"accept", {"400-599"}}}).status.ok());
  EXPECT_EQ(Run({{"request", req500}, {"accept", {"4xx", 404}}}).status.code(), "HTTP_STATUS");
}

TEST_F(HttpRunnerTest, FollowsRedirects) {
  TestServer server([](const Received& req) {
    if (req.target == "/r1") return Response(301, "", {{"Location", "/r2"}});
    if (req.target == "/r2") return Response(302, "", {{"Location", "r3?x=1"}});
    return Response(200, req.target);
  });
  RunResult r = Run({{"request", {{"url", server.Url("/r1")}}}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["status"], 200);
  EXPECT_EQ(r.output["body"], "/r3?x=1");
  EXPECT_EQ(server.requests().size(), 3u);

  // max_redirects: 0 returns the redirect itself, judged by accept.
  RunResult zero = Run({{"request", {{"url", server.Url("/r1")}, {"max_redirects", 0}}}});
  EXPECT_EQ(zero.status.code(), "HTTP_STATUS");
  EXPECT_EQ(zero.output["status"], 301);
  EXPECT_EQ(zero.output["headers"]["location"], "/r2");
  EXPECT_TRUE(Run({{"request", {{"url", server.Url("/r1")}, {"max_redirects", 0}}},
                   {"accept", {"3xx"}}})
                  .status.ok());
}

TEST_F(HttpRunnerTest, RedirectLimit) {
  TestServer server([](const Received&) { return Response(302, "again", {{"Location", "/loop"}}); });
  RunResult r = Run({{"request", {{"url", server.Url("/loop")}, {"max_redirects", 2}}}});
  EXPECT_EQ(r.status.code(), "HTTP_STATUS");
  EXPECT_EQ(r.status.message(),
            "GET " + server.Url("/loop") + ": stopped after 2 redirects: 302 to /loop");
  EXPECT_EQ(r.output["status"], 302);
  EXPECT_EQ(server.requests().size(), 3u);  // the first request and two redirects

  RunResult dflt = Run({{"request", {{"url", server.Url("/loop")}}}});
  EXPECT_NE(dflt.status.message().find("stopped after 5 redirects"), std::string::npos);
}

TEST_F(HttpRunnerTest, See303BecomesGetAnd307KeepsTheMethod) {
  TestServer server([](const Received& req) {
    if (req.target == "/303") return Response(303, "", {{"Location", "/done"}});
    if (req.target == "/307") return Response(307, "", {{"Location", "/done"}});
    return Response(200, req.method + " " + req.body + " " + req.Header("content-type"));
  });
  Json post303 = {{"method", "POST"}, {"url", server.Url("/303")}, {"body", {{"k", 1}}}};
  RunResult r = Run({{"request", post303}});
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["body"], "GET  <none>");
  EXPECT_EQ(server.requests().at(1).method, "GET");

  Json post307 = {{"method", "POST"}, {"url", server.Url("/307")}, {"body", {{"k", 1}}}};
  EXPECT_EQ(Run({{"request", post307}}).output["body"], R"(POST {"k":1} application/json)");
}

TEST_F(HttpRunnerTest, RedirectToAnotherHostIsCheckedAgainAndDropsCredentials) {
  // Only 127.0.0.1 is allowed here; the redirect goes to 127.0.0.2.
  HttpRunnerOptions options;
  options.allow = *runners::ParseCidrList("127.0.0.1/32");
  runner_ = NewHttpRunner(options);
  int port = 0;
  TestServer server([&port](const Received&) {
    return Response(302, "", {{"Location", "http://127.0.0.2:" + std::to_string(port) + "/x"}});
  });
  port = server.port();
  RunResult r = Run({{"request", {{"url", server.Url("/")}}}});
  EXPECT_EQ(r.status.code(), "NETWORK");
  EXPECT_EQ(r.status.message(),
            "GET http://127.0.0.2:" + std::to_string(port) +
                "/x: refused by the egress guard: 127.0.0.2 is a loopback address (allow it with "
                "BATON_HTTP_ALLOW)");
}

TEST_F(HttpRunnerTest, CrossHostRedirectDropsAuthorization) {
  TestServer target([](const Received& req) {
    return Response(200, req.Header("authorization") + "|" + req.Header("x-keep"));
  });
  TestServer origin([&target](const Received&) {
    // "localhost" is another host name for the same machine.
    return Response(307, "", {{"Location", "http://localhost:" + std::to_string(target.port()) + "/"}});
  });
  RunResult r = Run({{"request",
                      {{"url", origin.Url("/")},
                       {"headers", {{"Authorization", "Bearer secret"}, {"X-Keep", "k"}}}}}});
  if (r.status.code() == "NETWORK" &&
      r.status.message().find("cannot connect") != std::string::npos) {
    GTEST_SKIP() << "localhost does not reach 127.0.0.1 here: " << r.status.ToString();
  }
  ASSERT_TRUE(r.status.ok()) << r.status.ToString();
  EXPECT_EQ(r.output["body"], "<none>|k");
  EXPECT_EQ(origin.requests().at(0).Header("authorization"), "Bearer secret");
}

TEST_F(HttpRunnerTest, RedirectToAnotherSchemeCannotBeFollowed) {
  TestServer server([](const Received&) { return Response(301, "", {{"Location", "ftp://x/"}}); });
  RunResult r = Run({{"request", {{"url", server.Url("/")}}}});
  EXPECT_EQ(r.status.code(), "HTTP_STATUS");
  EXPECT_EQ(r.status.message(),
            "GET " + server.Url("/") +
                ": returned 301 with a Location that cannot be followed: expected an http:// or "
                "https:// URL, got 'ftp://x/'");
  EXPECT_EQ(r.output["status"], 301);
}

TEST_F(HttpRunnerTest, Timeout) {
  TestServer* self = nullptr;
  TestServer server([&self](const Received&) {
    self->Hang();
    return std::string();
  });
  self = &server;
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = Run({{"request", {{"url", server.Url("/slow")}, {"timeout", "200ms"}}}});
  EXPECT_EQ(r.status.code(), "TIMEOUT");
  EXPECT_EQ(r.status.message(), "GET " + server.Url("/slow") + ": no response within 200ms");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
}

TEST_F(HttpRunnerTest, CancelAbortsTheRequest) {
  TestServer* self = nullptr;
  std::promise<void> arrived;
  auto arrived_future = arrived.get_future();
  TestServer server([&](const Received&) {
    arrived.set_value();
    self->Hang();
    return std::string();
  });
  self = &server;
  CallRecord call;
  runner_->Start(Request({{"request", {{"url", server.Url("/slow")}}}}, "cancel-me"),
                 call.Callbacks());
  ASSERT_TRUE(call.WaitStarted());
  ASSERT_EQ(arrived_future.wait_for(kWait), std::future_status::ready);
  runner_->Cancel("other");  // unknown ids are ignored
  runner_->Cancel("cancel-me");
  RunResult r = call.Wait();
  EXPECT_EQ(r.status.code(), "CANCELLED");
  // Shutdown joins the runner's I/O thread: every callback it would make has been made.
  runner_->Shutdown();
  EXPECT_EQ(call.done_count(), 1);
}

TEST_F(HttpRunnerTest, ConnectionRefusedIsNetwork) {
  // A port nobody listens on: bind one, then close it.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/";
  RunResult r = Run({{"request", {{"url", url}}}});
  EXPECT_EQ(r.status.code(), "NETWORK");
  EXPECT_NE(r.status.message().find("GET " + url + ": cannot connect to 127.0.0.1:"),
            std::string::npos)
      << r.status.message();
  EXPECT_TRUE(r.output.is_null());
}

TEST_F(HttpRunnerTest, ClosedWithoutResponseIsNetwork) {
  TestServer server([](const Received&) { return std::string(); });
  RunResult r = Run({{"request", {{"url", server.Url("/")}}}});
  EXPECT_EQ(r.status.code(), "NETWORK");
  EXPECT_NE(r.status.message().find("reading the response"), std::string::npos)
      << r.status.message();
}

TEST_F(HttpRunnerTest, UnresolvableHostIsNetwork) {
  RunResult r = Run({{"request", {{"url", "http://no-such-host.invalid/"}, {"timeout", "20s"}}}});
  EXPECT_TRUE(r.status.code() == "NETWORK" || r.status.code() == "TIMEOUT") << r.status.ToString();
}

TEST_F(HttpRunnerTest, OversizedBodyIsNetwork) {
  TestServer server([](const Received& req) {
    if (req.target == "/chunked") {
      std::string chunk(600, 'y');
      return std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n") +
             "258\r\n" + chunk + "\r\n258\r\n" + chunk + "\r\n0\r\n\r\n";
    }
    return Response(200, std::string(1000, 'x'), {{"X-Big", "yes"}});
  });
  RunResult r = Run({{"request", {{"url", server.Url("/")}, {"max_output", 100}}}});
  EXPECT_EQ(r.status.code(), "NETWORK");
  EXPECT_EQ(r.status.message(),
            "GET " + server.Url("/") + ": response body over max_output (100 bytes)");
  EXPECT_EQ(r.output["status"], 200);
  EXPECT_EQ(r.output["headers"]["x-big"], "yes");
  EXPECT_FALSE(r.output.contains("body"));
  EXPECT_EQ(r.error_details["max_output"], 100);

  RunResult chunked = Run({{"request", {{"url", server.Url("/chunked")}, {"max_output", "1KiB"}}}});
  EXPECT_EQ(chunked.status.code(), "NETWORK");
  EXPECT_NE(chunked.status.message().find("over max_output (1024 bytes)"), std::string::npos);

  // Exactly at the limit is fine.
  RunResult fits = Run({{"request", {{"url", server.Url("/")}, {"max_output", 1000}}}});
  EXPECT_TRUE(fits.status.ok()) << fits.status.ToString();
  EXPECT_EQ(fits.output["body"], std::string(1000, 'x'));
}

TEST_F(HttpRunnerTest, EgressGuardRefusesLoopbackByDefault) {
  runner_ = NewHttpRunner();  // no allow-list
  TestServer server([](const Received&) { return Response(200, "secret"); });
  RunResult r = Run({{"request", {{"url", server.Url("/admin")}}}});
  EXPECT_EQ(r.status.code(), "NETWORK");
  EXPECT_EQ(r.status.message(),
            "GET " + server.Url("/admin") +
                ": refused by the egress guard: 127.0.0.1 is a loopback address (allow it with "
                "BATON_HTTP_ALLOW)");
  // By name too: every address "localhost" resolves to is refused.
  RunResult named = Run(
      {{"request", {{"url", "http://localhost:" + std::to_string(server.port()) + "/admin"}}}});
  EXPECT_EQ(named.status.code(), "NETWORK");
  EXPECT_NE(named.status.message().find("refused by the egress guard"), std::string::npos)
      << named.status.message();
  RunResult v6 = Run({{"request", {{"url", "http://[::ffff:127.0.0.1]:1/"}}}});
  EXPECT_NE(v6.status.message().find("::ffff:127.0.0.1 is a loopback address"), std::string::npos)
      << v6.status.message();
  RunResult metadata = Run({{"request", {{"url", "http://169.254.169.254/latest/meta-data/"}}}});
  EXPECT_NE(metadata.status.message().find("169.254.169.254 is the cloud metadata address"),
            std::string::npos);
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(HttpRunnerTest, BadSpecIsValidation) {
  RunResult ftp = Run({{"request", {{"url", "ftp://example.com/"}}}});
  EXPECT_EQ(ftp.status.code(), "VALIDATION");
  EXPECT_EQ(ftp.status.message(),
            "http step: field 'request.url': expected an http:// or https:// URL, got "
            "'ftp://example.com/'");
  EXPECT_EQ(Run({{"request", Json::object()}}).status.code(), "VALIDATION");
  EXPECT_EQ(Run(Json::object()).status.code(), "VALIDATION");
}

TEST_F(HttpRunnerTest, ManyConcurrentRequests) {
  TestServer server([](const Received& req) { return Response(200, req.target); });
  std::vector<std::unique_ptr<CallRecord>> calls;
  for (int i = 0; i < 20; ++i) {
    calls.push_back(std::make_unique<CallRecord>());
    runner_->Start(Request({{"request", {{"url", server.Url("/" + std::to_string(i))}}}},
                           "a" + std::to_string(i)),
                   calls.back()->Callbacks());
  }
  for (int i = 0; i < 20; ++i) {
    RunResult r = calls[i]->Wait();
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    EXPECT_EQ(r.output["body"], "/" + std::to_string(i));
  }
}

TEST_F(HttpRunnerTest, ShutdownCancelsAndLaterStartsAreCancelled) {
  TestServer* self = nullptr;
  TestServer server([&self](const Received&) {
    self->Hang();
    return std::string();
  });
  self = &server;
  CallRecord hanging;
  runner_->Start(Request({{"request", {{"url", server.Url("/")}}}}), hanging.Callbacks());
  ASSERT_TRUE(hanging.WaitStarted());
  runner_->Shutdown();
  EXPECT_EQ(hanging.done_count(), 1);
  EXPECT_EQ(hanging.Wait().status.code(), "CANCELLED");

  CallRecord late;
  runner_->Start(Request({{"request", {{"url", server.Url("/")}}}}), late.Callbacks());
  EXPECT_EQ(late.done_count(), 1);  // at once, on this thread
  EXPECT_EQ(late.Wait().status.code(), "CANCELLED");
  runner_->Shutdown();  // idempotent
}

TEST(HttpRunnerOptions, FromEnvironment) {
  unsetenv("BATON_HTTP_ALLOW");
  auto none = HttpRunnerOptionsFromEnv();
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->allow.empty());
  setenv("BATON_HTTP_ALLOW", "127.0.0.0/8,::1/128", 1);
  auto two = HttpRunnerOptionsFromEnv();
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->allow.size(), 2u);
  setenv("BATON_HTTP_ALLOW", "127.0.0.0/8,nope", 1);
  auto bad = HttpRunnerOptionsFromEnv();
  EXPECT_EQ(bad.status().message(),
            "BATON_HTTP_ALLOW: bad allow-list entry 'nope': expected an IP address or CIDR, e.g. "
            "127.0.0.0/8 or ::1/128");
  unsetenv("BATON_HTTP_ALLOW");
}

}  // namespace
}  // namespace baton
