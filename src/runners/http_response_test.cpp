#include "runners/http_response.h"

#include <gtest/gtest.h>

namespace baton::runners {
namespace {

HttpSpec Spec(const std::string& url) {
  HttpSpec spec;
  spec.url = *ParseHttpUrl(url);
  spec.method = "POST";
  spec.has_body = true;
  spec.body = "{}";
  spec.headers = {{"Authorization", "Bearer t"},
                  {"cookie", "c"},
                  {"Content-Type", "application/json"},
                  {"X-Keep", "k"}};
  return spec;
}

std::vector<std::string> Names(const HttpSpec& spec) {
  std::vector<std::string> out;
  for (const auto& [name, value] : spec.headers) out.push_back(name);
  return out;
}

TEST(ResponseOutput, FoldsHeadersAndParsesTheBody) {
  HttpFields fields = {{"Content-Type", "application/problem+json"}, {"X-A", "1"}, {"x-a", "2"}};
  std::string body = R"({"k": [1]})";
  EXPECT_EQ(ResponseOutput(404, fields, &body),
            Json::parse(R"({"status": 404, "headers": {"content-type": "application/problem+json",
                            "x-a": "1, 2"}, "body": {"k": [1]}})"));
  EXPECT_FALSE(ResponseOutput(200, fields, nullptr).contains("body"));
  std::string text = "[1]";
  EXPECT_EQ(ResponseOutput(200, {{"Content-Type", "text/plain"}}, &text)["body"], "[1]");
  EXPECT_EQ(ResponseOutput(200, {}, &text)["body"], Json::parse("[1]"));
}

TEST(PlanRedirect, SameOriginKeepsCredentials) {
  HttpSpec spec = Spec("https://h/a");
  std::string location = "/b";
  EXPECT_EQ(PlanRedirect(spec, 0, 307, &location).kind, RedirectPlan::kFollow);
  EXPECT_EQ(spec.url.ToString(), "https://h/b");
  EXPECT_EQ(spec.method, "POST");
  EXPECT_EQ(spec.body, "{}");
  EXPECT_EQ(Names(spec),
            (std::vector<std::string>{"Authorization", "cookie", "Content-Type", "X-Keep"}));
}

TEST(PlanRedirect, AnotherSchemeHostOrPortDropsCredentials) {
  for (const char* location : {"http://h/a", "https://h:8443/a", "https://g/a"}) {
    HttpSpec spec = Spec("https://h/a");
    std::string loc = location;
    EXPECT_EQ(PlanRedirect(spec, 0, 308, &loc).kind, RedirectPlan::kFollow) << location;
    EXPECT_EQ(spec.url.ToString(), location);
    EXPECT_EQ(Names(spec), (std::vector<std::string>{"Content-Type", "X-Keep"})) << location;
  }
}

TEST(PlanRedirect, SeeOtherBecomesGet) {
  HttpSpec spec = Spec("http://h/a");
  std::string location = "/done";
  EXPECT_EQ(PlanRedirect(spec, 0, 303, &location).kind, RedirectPlan::kFollow);
  EXPECT_EQ(spec.method, "GET");
  EXPECT_FALSE(spec.has_body);
  EXPECT_EQ(Names(spec), (std::vector<std::string>{"Authorization", "cookie", "X-Keep"}));
}

TEST(PlanRedirect, FinalOrRefused) {
  HttpSpec spec = Spec("http://h/a");
  EXPECT_EQ(PlanRedirect(spec, 0, 302, nullptr).kind, RedirectPlan::kFinal);
  std::string location = "/b";
  spec.max_redirects = 2;
  RedirectPlan limit = PlanRedirect(spec, 2, 302, &location);
  EXPECT_EQ(limit.kind, RedirectPlan::kRefuse);
  EXPECT_EQ(limit.message, "stopped after 2 redirects: 302 to /b");
  std::string ftp = "ftp://x/";
  RedirectPlan bad = PlanRedirect(spec, 0, 301, &ftp);
  EXPECT_EQ(bad.kind, RedirectPlan::kRefuse);
  EXPECT_EQ(bad.message,
            "returned 301 with a Location that cannot be followed: expected an http:// or "
            "https:// URL, got 'ftp://x/'");
  EXPECT_EQ(spec.url.ToString(), "http://h/a");  // unchanged
}

}  // namespace
}  // namespace baton::runners
