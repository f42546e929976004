// The fast reader behind ParseJsonText against nlohmann's parser alone: on every text both
// accept or both refuse, with the same value (types included) or the same error.
#include "common/json_parse.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace baton {
namespace {

// "" when the two agree, else what differs.
std::string Disagreement(std::string_view text, JsonParseLimits limits = {}) {
  Json fast, reference;
  JsonParseError fast_error, reference_error;
  const bool fast_ok = ParseJsonText(text, &fast, &fast_error, limits);
  const bool reference_ok =
      json_internal::ParseWithNlohmann(text, &reference, &reference_error, limits);
  if (fast_ok != reference_ok) {
    return std::string("accepted by ") + (fast_ok ? "the fast reader" : "nlohmann") +
           " only; the other says: " +
           (fast_ok ? reference_error.Describe() : fast_error.Describe());
  }
  if (!fast_ok) {
    if (fast_error.Describe() != reference_error.Describe()) {
      return "errors differ: '" + fast_error.Describe() + "' against '" +
             reference_error.Describe() + "'";
    }
    return "";
  }
  // dump() tells 1 from 1.0 and -0 from 0, which operator== does not.
  if (fast.dump() != reference.dump()) return fast.dump() + " against " + reference.dump();
  return "";
}

std::string Printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text.substr(0, 120)) {
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

const std::vector<std::string>& Corpus() {
  static const std::vector<std::string> corpus = {
      // numbers
      "0", "-0", "1", "-1", "1.5", "-1.5", "1e5", "1E+5", "-1e-5", "0.0", "1.0", "123456789",
      "18446744073709551615", "18446744073709551616", "-9223372036854775808",
      "-9223372036854775809", "1e400", "-1e400", "1e-400", "5e-324", "2.2250738585072014e-308",
      "1.7976931348623157e308", "01", "-01", "1.", ".5", "-", "+1", "1e", "1e+", "1.e5", "0x10",
      "1.5e3.2", "--1", "1 2", std::string(400, '9'), "-" + std::string(30, '1'),
      "0." + std::string(400, '3'),
      // literals
      "true", "false", "null", "tru", "nul", "falsey", "True", "NaN", "Infinity",
      // strings
      R"("")", R"("abc")", R"("a\"b\\c\/d\be\ff\ng\rh\ti")", R"("\u0041\u00e9\u20ac")",
      R"("\ud83d\ude00")", R"("\ud83d")", R"("\ude00")", R"("\ud83d\u0041")", R"("\uD83D\uDE00")",
      R"("\u12")", R"("\u12G4")", R"("\x")", R"("\)", "\"abc", "\"a\x01b\"", "\"a\x7f b\"",
      "\"caf\xc3\xa9\"", "\"\xe2\x82\xac\"", "\"\xf0\x9f\x98\x80\"", "\"\xc0\xaf\"", "\"\xc3\"",
      "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xe0\x80\xaf\"", "\"\xff\"",
      "\"\xf0\x8f\xbf\xbf\"", "\"\xef\xbf\xbf\"", "\"\x80\"", "\"tab\there\"",
      // structures
      "{}", "[]", "[1,]", "[,1]", R"({"a":1,})", R"({"a" 1})", R"({"a":})", R"({a:1})",
      R"({"a":1 "b":2})", R"([1 2])", "[[[[]]]]", R"({"a":{"b":{"c":[1,{"d":null}]}}})",
      R"({"a":1,"a":2})", " \t\r\n{ \"a\" : [ 1 , 2 ] } \n", "{} x", "[] []", "", "   ", "[", "{",
      "]", "}", "\xEF\xBB\xBF{}", "\xEF\xBB{}", "\xEF", "[\"a\",{\"b\":[true,false,null]}]",
      R"({"":""})", R"({"k\u0000":1})", "[1]\x00", "{\"a\":1}\xc3\xa9"};
  return corpus;
}

TEST(FastJsonReader, AgreesWithNlohmannOnEveryCorpusText) {
  for (const std::string& text : Corpus()) {
    EXPECT_EQ(Disagreement(text), "") << Printable(text);
  }
}

TEST(FastJsonReader, AgreesOnLimitsAndRepeatedKeys) {
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  EXPECT_EQ(Disagreement(deep), "");
  EXPECT_EQ(Disagreement(deep, {.max_depth = 300}), "");
  // Too deep, then a syntax error further on: both stop at the depth.
  EXPECT_EQ(Disagreement(std::string(200, '[') + "x"), "");
  // A syntax error before the limit is reached: both report the syntax error.
  EXPECT_EQ(Disagreement("[[[x" + std::string(200, '[')), "");
  for (const char* text : {R"({"a":1,"a":2})", R"({"a":{"b":1,"b":2}})",
                           R"([{"x":1},{"x":1,"x":1}])", R"({"a":1,"a":2,)"}) {
    EXPECT_EQ(Disagreement(text, {.refuse_duplicate_keys = true}), "") << text;
    EXPECT_EQ(Disagreement(text), "") << text;
  }
}

// Every text a few byte edits away from valid documents: insertions, deletions and
// replacements drawn from the bytes JSON cares about, plus random ones.
TEST(FastJsonReader, AgreesOnEditedDocuments) {
  const std::vector<std::string> seeds = {
      R"({"name":"deploy","steps":[{"id":"a","type":"noop","with":{"n":1,"f":-2.5e3}},)"
      R"({"id":"b","depends_on":["a"],"run":["echo","\u00e9\ud83d\ude00"]}],"x":[true,false,null]})",
      R"([0,-0,1e10,18446744073709551615,"caf)"
      "\xc3\xa9"
      R"(",{"":[]},{"a":{"b":{"c":"\"\\\/\b\f\n\r\t"}}}])"};
  const std::string alphabet =
      "{}[]:,\"\\/0123456789-+.eEtrufalsn \t\r\nu\x01\x7f\x80\xc3\xa9\xed\xf0\xff";
  std::mt19937 rng(20261126);
  size_t checked = 0;
  for (int round = 0; round < 10000; ++round) {
    std::string text = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = rng() % text.size();
      const char c =
          (rng() % 4 == 0) ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
      switch (rng() % 3) {
        case 0:
          text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
          break;
        case 1:
          text.erase(at, 1);
          break;
        default:
          text[at] = c;
          break;
      }
    }
    const std::string d = Disagreement(text);
    ASSERT_EQ(d, "") << Printable(text);
    ++checked;
  }
  EXPECT_EQ(checked, 10000u);
}

// The fallback after a streamed prefix: the elements handed over before the fast reader
// gave up are not handed over a second time by nlohmann's pass.
TEST(FastJsonReader, AStreamIsHandedEachElementOnceWhenTheReadFallsBack) {
  // 1e-400 underflows: the fast reader leaves it to nlohmann, which reads it as 0.
  const std::string text = R"({"steps": [{"i": 0}, {"i": 1}, {"i": 1e-400}, {"i": 3}]})";
  std::vector<size_t> seen;
  JsonArrayStream stream{"steps", [&](const Json&, size_t index, Json&) {
                           seen.push_back(index);
                           return true;
                         }};
  Json out;
  JsonParseError error;
  ASSERT_TRUE(ParseJsonText(text, &out, &error, {}, stream)) << error.Describe();
  EXPECT_EQ(seen, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(out, (Json{{"steps", Json::array()}}));
}

}  // namespace
}  // namespace baton
