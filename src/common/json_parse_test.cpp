#include "common/json_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton {
namespace {

JsonParseError Refused(std::string_view text, JsonParseLimits limits = {}) {
  Json out;
  JsonParseError error;
  EXPECT_FALSE(ParseJsonText(text, &out, &error, limits)) << text.substr(0, 80);
  return error;
}

TEST(ParseJsonText, ParsesWhatNlohmannParses) {
  Json out;
  ASSERT_TRUE(ParseJsonText(R"({"a": [1, 2.5, "x", null, true], "b": {"c": -3}})", &out, nullptr));
  EXPECT_EQ(out, Json::parse(R"({"a": [1, 2.5, "x", null, true], "b": {"c": -3}})"));
}

// Regression: nlohmann's parse() throws out_of_range (not parse_error) on these, and the
// server's body parser let it escape and abort the process.
TEST(ParseJsonText, NumbersOutOfRangeAreErrorsNamingTheField) {
  for (const std::string& number : std::vector<std::string>{
           "1e99999", "1E400", "-1e400", "1.7976931348623157e309", std::string(100000, '9')}) {
    JsonParseError e = Refused(R"({"workflow": "w", "input": {"n": [0, )" + number + "]}}");
    EXPECT_EQ(e.field, "input.n[1]") << number.substr(0, 20);
    EXPECT_NE(e.message.find("out of range"), std::string::npos) << e.message;
    EXPECT_GT(e.byte, 0u);
  }
  Result<Json> r = ParseJsonText(R"({"capacity": 1e400})", "the request body");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), errc::kInvalidArgument);
  EXPECT_NE(r.status().message().find("field 'capacity'"), std::string::npos)
      << r.status().message();
}

TEST(ParseJsonText, RefusesNestingPastTheLimitWhileParsing) {
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  JsonParseError e = Refused(deep);
  EXPECT_NE(e.message.find("nesting deeper than 128 levels"), std::string::npos) << e.message;
  std::string within = std::string(128, '[') + std::string(128, ']');
  Json out;
  EXPECT_TRUE(ParseJsonText(within, &out, nullptr));
  EXPECT_FALSE(ParseJsonText(within, &out, nullptr, {.max_depth = 127}));
  JsonParseError named = Refused(R"({"input": {"a": [[[1]]]}})", {.max_depth = 3});
  EXPECT_EQ(named.field, "input.a[0]");
}

TEST(ParseJsonText, SyntaxErrorsSayWhereAndNeverThrow) {
  for (std::string_view bad : {"", "{", "{\"a\": }", "[1,]", "nul", "\"\\ud800\"", "{} x"}) {
    JsonParseError e = Refused(bad);
    EXPECT_FALSE(e.message.empty()) << bad;
  }
}

TEST(ParseJsonText, TheDefaultDepthIsConfigurable) {
  EXPECT_EQ(DefaultMaxJsonDepth(), 128u);
  SetDefaultMaxJsonDepth(4);
  Json out;
  EXPECT_FALSE(ParseJsonText("[[[[[1]]]]]", &out, nullptr));
  SetDefaultMaxJsonDepth(0);  // back to the default
  EXPECT_TRUE(ParseJsonText("[[[[[1]]]]]", &out, nullptr));
}

}  // namespace
}  // namespace baton
