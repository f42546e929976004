#include "runners/http_spec.h"

#include <gtest/gtest.h>

namespace baton::runners {
namespace {

Result<HttpSpec> Parse(const std::string& json) {
  return ParseHttpSpec(Json::parse(json), 1 << 20, Duration(0));
}

std::string Header(const HttpSpec& s, const std::string& name) {
  for (const auto& [k, v] : s.headers) {
    if (k == name) return v;
  }
  return "<none>";
}

TEST(HttpUrl, Parses) {
  auto u = ParseHttpUrl("http://Example.COM:8080/a b/\xC3\xA9?q=1&r=\"x\"#frag");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->host, "example.com");
  EXPECT_EQ(u->port, 8080);
  EXPECT_EQ(u->target, "/a%20b/%C3%A9?q=1&r=%22x%22");
  EXPECT_EQ(u->ToString(), "http://example.com:8080/a%20b/%C3%A9?q=1&r=%22x%22");

  EXPECT_EQ(ParseHttpUrl("http://x")->target, "/");
  EXPECT_EQ(ParseHttpUrl("HTTP://x?q")->target, "/?q");
  EXPECT_EQ(ParseHttpUrl("http://x:80/p")->ToString(), "http://x/p");
  EXPECT_EQ(ParseHttpUrl("http://x/%41")->target, "/%41");

  auto v6 = ParseHttpUrl("http://[::1]:81/p");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_TRUE(v6->ipv6_literal);
  EXPECT_EQ(v6->Authority(), "[::1]:81");
}

TEST(HttpUrl, ParsesHttps) {
  auto u = ParseHttpUrl("HTTPS://Example.com/a?b");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(u->https);
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->Authority(), "example.com");
  EXPECT_EQ(u->ToString(), "https://example.com/a?b");
  EXPECT_EQ(ParseHttpUrl("https://x:443/")->ToString(), "https://x/");
  EXPECT_EQ(ParseHttpUrl("https://x:80/")->ToString(), "https://x:80/");
  EXPECT_EQ(ParseHttpUrl("https://x:80/")->Authority(), "x:80");
  EXPECT_EQ(ParseHttpUrl("http://x:443/")->ToString(), "http://x:443/");
  EXPECT_FALSE(ParseHttpUrl("http://x/")->https);
  EXPECT_EQ(ParseHttpUrl("https://[::1]:8443/")->Authority(), "[::1]:8443");
}

TEST(HttpUrl, RejectsWhatItCannotUse) {
  EXPECT_EQ(ParseHttpUrl("ftp://x/").status().message(),
            "expected an http:// or https:// URL, got 'ftp://x/'");
  EXPECT_EQ(ParseHttpUrl("x/y").status().message(),
            "expected an http:// or https:// URL, got 'x/y'");
  EXPECT_EQ(ParseHttpUrl("https://u:p@x/").status().code(), "VALIDATION");
  EXPECT_EQ(ParseHttpUrl("http://u:p@x/").status().message(),
            "credentials are not supported (use an Authorization header) in URL 'http://u:p@x/'");
  for (const char* bad : {"http://x:0/", "http://x:65536/", "http://x:8a/", "http:///p", "http://:80/",
                          "http://x:/", "http://[::1/", "http://[zz]/", "http://a b/", "http://x%41/"}) {
    EXPECT_EQ(ParseHttpUrl(bad).status().code(), "VALIDATION") << bad;
  }
}

TEST(HttpUrl, ResolvesLocations) {
  HttpUrl base = *ParseHttpUrl("http://h:81/a/b?q=1");
  EXPECT_EQ(ResolveLocation(base, "/c")->ToString(), "http://h:81/c");
  EXPECT_EQ(ResolveLocation(base, "c?x=1")->ToString(), "http://h:81/a/c?x=1");
  EXPECT_EQ(ResolveLocation(base, "?q=2")->ToString(), "http://h:81/a/b?q=2");
  EXPECT_EQ(ResolveLocation(base, "//other/z")->ToString(), "http://other/z");
  EXPECT_EQ(ResolveLocation(base, " http://o:82/z#f ")->ToString(), "http://o:82/z");
  EXPECT_EQ(ResolveLocation(base, "/with space")->target, "/with%20space");
  EXPECT_EQ(ResolveLocation(base, "https://o/")->ToString(), "https://o/");
  EXPECT_EQ(ResolveLocation(base, "ftp://o/").status().message(),
            "expected an http:// or https:// URL, got 'ftp://o/'");
  EXPECT_FALSE(ResolveLocation(base, "").ok());

  HttpUrl secure = *ParseHttpUrl("https://h/a/b");
  EXPECT_EQ(ResolveLocation(secure, "//other:8443/z")->ToString(), "https://other:8443/z");
  EXPECT_EQ(ResolveLocation(secure, "c")->ToString(), "https://h/a/c");
  EXPECT_EQ(ResolveLocation(secure, "http://h/x")->ToString(), "http://h/x");
}

TEST(HttpSpec, Defaults) {
  auto s = Parse(R"({"request": {"url": "http://x/y"}})");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->method, "GET");
  EXPECT_EQ(s->url.target, "/y");
  EXPECT_FALSE(s->has_body);
  EXPECT_TRUE(s->headers.empty());
  EXPECT_EQ(s->timeout.count(), 0);
  EXPECT_EQ(s->max_redirects, 5);
  EXPECT_EQ(s->max_output, 1u << 20);
  EXPECT_TRUE(s->Accepts(200));
  EXPECT_TRUE(s->Accepts(299));
  EXPECT_FALSE(s->Accepts(199));
  EXPECT_FALSE(s->Accepts(300));
  EXPECT_FALSE(s->Accepts(404));

  auto d = ParseHttpSpec(Json::parse(R"({"request": {"url": "http://x"}})"), 77, Duration(1500));
  EXPECT_EQ(d->max_output, 77u);
  EXPECT_EQ(d->timeout.count(), 1500);
}

TEST(HttpSpec, Fields) {
  auto s = Parse(R"({"request": {"method": "post", "url": "http://x/",
                     "headers": {"X-Num": 3, "X-Flag": true, "X-Skip": null},
                     "body": {"k": [1, 2]}, "timeout": "1m30s", "max_redirects": 0,
                     "max_output": "4KiB"},
                     "accept": [404, "5xx", "300-302", "418"]})");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->method, "POST");
  EXPECT_EQ(Header(*s, "X-Num"), "3");
  EXPECT_EQ(Header(*s, "X-Flag"), "true");
  EXPECT_EQ(Header(*s, "X-Skip"), "<none>");
  EXPECT_EQ(Header(*s, "Content-Type"), "application/json");
  EXPECT_TRUE(s->has_body);
  EXPECT_EQ(s->body, R"({"k":[1,2]})");
  EXPECT_EQ(s->timeout.count(), 90000);
  EXPECT_EQ(s->max_redirects, 0);
  EXPECT_EQ(s->max_output, 4096u);
  for (int ok : {200, 404, 500, 599, 300, 302, 418}) EXPECT_TRUE(s->Accepts(ok)) << ok;
  for (int bad : {303, 403, 405, 499, 199}) EXPECT_FALSE(s->Accepts(bad)) << bad;
}

TEST(HttpSpec, BodyContentType) {
  auto text = Parse(R"({"request": {"url": "http://x/", "body": "hi"}})");
  EXPECT_EQ(text->body, "hi");
  EXPECT_EQ(Header(*text, "Content-Type"), "text/plain; charset=utf-8");
  auto given = Parse(R"({"request": {"url": "http://x/", "body": "a=1",
                         "headers": {"content-type": "application/x-www-form-urlencoded"}}})");
  EXPECT_EQ(Header(*given, "Content-Type"), "<none>");
  EXPECT_EQ(Header(*given, "content-type"), "application/x-www-form-urlencoded");
  auto number = Parse(R"({"request": {"url": "http://x/", "body": 5}})");
  EXPECT_EQ(number->body, "5");
  EXPECT_EQ(Header(*number, "Content-Type"), "application/json");
  auto none = Parse(R"({"request": {"url": "http://x/", "body": null}})");
  EXPECT_FALSE(none->has_body);
}

TEST(HttpSpec, Errors) {
  struct Case {
    const char* spec;
    const char* message;
  };
  const Case cases[] = {
      {R"({})", "http step: field 'request': expected an object with at least 'url'"},
      {R"({"request": {}})", "http step: field 'request.url': expected a string"},
      {R"({"request": {"url": "ftp://x/"}})",
       "http step: field 'request.url': expected an http:// or https:// URL, got 'ftp://x/'"},
      {R"({"request": {"url": "http://x/", "method": "FETCH"}})",
       "http step: field 'request.method': unknown HTTP method 'FETCH' (valid: GET, HEAD, "
       "POST, PUT, PATCH, DELETE, OPTIONS)"},
      {R"({"request": {"url": "http://x/", "headers": {"X-A": "a\r\nX-B: b"}}})",
       "http step: field 'request.headers.X-A': contains CR, LF or NUL"},
      {R"({"request": {"url": "http://x/", "headers": {"Bad Name": "a"}}})",
       "http step: field 'request.headers.Bad Name': bad header name"},
      {R"({"request": {"url": "http://x/", "headers": {"X": [1]}}})",
       "http step: field 'request.headers.X': expected a string, number or boolean"},
      {R"({"request": {"url": "http://x/", "headers": [1]}})",
       "http step: field 'request.headers': expected an object"},
      {R"({"request": {"url": "http://x/", "max_redirects": -1}})",
       "http step: field 'request.max_redirects': expected a non-negative integer"},
      {R"({"request": {"url": "http://x/", "timeout": "0s"}})",
       "http step: field 'request.timeout': must be more than 0"},
      {R"({"request": {"url": "http://x/"}, "accept": ["4xz"]})",
       "http step: field 'accept[0]': expected a status (404), a class (\"4xx\") or a range "
       "(\"400-499\"), got '4xz'"},
      {R"({"request": {"url": "http://x/"}, "accept": [200, 600]})",
       "http step: field 'accept[1]': HTTP status must be between 100 and 599"},
      {R"({"request": {"url": "http://x/"}, "accept": 404})",
       "http step: field 'accept': expected an array"},
  };
  for (const Case& c : cases) {
    auto s = Parse(c.spec);
    ASSERT_FALSE(s.ok()) << c.spec;
    EXPECT_EQ(s.status().code(), "VALIDATION");
    EXPECT_EQ(s.status().message(), c.message) << c.spec;
  }
}

}  // namespace
}  // namespace baton::runners
