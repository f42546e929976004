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

TEST(ParseJsonText, AStreamedMemberHandsOverEachElementAndKeepsNone) {
  std::vector<std::string> seen;
  JsonArrayStream stream{"steps", [&seen](const Json& root, size_t index, Json& element) {
                           seen.push_back(std::to_string(index) + ":" + element.dump() + ":" +
                                          std::to_string(root.size()));
                           return true;
                         }};
  Json out;
  ASSERT_TRUE(ParseJsonText(
      R"({"a": 1, "steps": [{"id": "x", "n": [1, {"k": 2}]}, 7, [], "s", null], "z": {"steps": [1]}})",
      &out, nullptr, {}, stream));
  // Scalars and containers alike, in order, with the members read before the array.
  EXPECT_EQ(seen, (std::vector<std::string>{R"(0:{"id":"x","n":[1,{"k":2}]}:2)", "1:7:2", "2:[]:2",
                                            R"(3:"s":2)", "4:null:2"}));
  // The member stays, empty; the same name deeper down is not streamed.
  EXPECT_EQ(out, Json::parse(R"({"a": 1, "steps": [], "z": {"steps": [1]}})"));
}

TEST(ParseJsonText, AStreamedMemberThatIsNoArrayIsKeptAsIs) {
  int calls = 0;
  JsonArrayStream stream{"steps", [&calls](const Json&, size_t, Json&) { return ++calls > 0; }};
  Json out;
  ASSERT_TRUE(ParseJsonText(R"({"steps": {"a": [1, 2]}})", &out, nullptr, {}, stream));
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(out, Json::parse(R"({"steps": {"a": [1, 2]}})"));
  ASSERT_TRUE(ParseJsonText(R"([{"steps": [1, 2]}])", &out, nullptr, {}, stream));
  EXPECT_EQ(calls, 0);  // only a member of the top-level object is streamed
}

TEST(ParseJsonText, AStreamReaderCanStopTheParse) {
  JsonArrayStream stream{"steps", [](const Json&, size_t index, Json&) { return index < 1; }};
  Json out;
  JsonParseError error;
  EXPECT_FALSE(ParseJsonText(R"({"steps": [1, 2, 3]})", &out, &error, {}, stream));
  EXPECT_TRUE(error.stopped);
  EXPECT_EQ(error.field, "steps[1]");
  // A syntax error after streamed elements is still a syntax error.
  JsonArrayStream all{"steps", [](const Json&, size_t, Json&) { return true; }};
  EXPECT_FALSE(ParseJsonText(R"({"steps": [1, 2, ]})", &out, &error, {}, all));
  EXPECT_FALSE(error.stopped);
}

}  // namespace
}  // namespace baton
