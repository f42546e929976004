// StdoutParser, TailBuffer and MessageTail: the handler output rules without processes.
#include "worker/handler_output.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton::worker {
namespace {

struct Progress {
  int progress;
  Json checkpoint, data;
};

// Feeds `text` in chunks of `chunk` bytes; returns the output and collects progress.
Result<Json> Parse(const std::string& text, std::vector<Progress>* progress = nullptr,
                   size_t max_output = 1 << 20, size_t chunk = 7) {
  StdoutParser parser(max_output, [&](int p, Json checkpoint, Json data) {
    if (progress) progress->push_back({p, std::move(checkpoint), std::move(data)});
  });
  for (size_t i = 0; i < text.size(); i += chunk)
    parser.Feed(std::string_view(text).substr(i, chunk));
  return parser.Finish();
}

Json Output(const std::string& text) {
  Result<Json> r = Parse(text);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : Json("<error>");
}

TEST(StdoutParser, TheLastObjectLineWithoutProgressIsTheOutput) {
  EXPECT_EQ(Output("{\"a\": 1}\nlog line\n{\"b\": 2}\nmore text\n"), (Json{{"b", 2}}));
  EXPECT_EQ(Output("  {\"a\": [1, {\"c\": null}]}  \n"), Json::parse(R"({"a": [1, {"c": null}]})"));
  EXPECT_EQ(Output("{\"x\": 1}"), (Json{{"x", 1}}));      // no final newline
  EXPECT_EQ(Output("{\"x\": 1}\r\n"), (Json{{"x", 1}}));  // CRLF
  EXPECT_EQ(Output("{\"x\": 1}\n{\"progress\": 50}\n"), (Json{{"x", 1}}));
  EXPECT_EQ(Output("{}\n"), Json::object());
}

TEST(StdoutParser, WithoutAnObjectLineTheOutputIsTheTrimmedText) {
  EXPECT_EQ(Output("  hello\n{\"progress\": 5}\nworld  \n\n"), "hello\nworld");
  EXPECT_EQ(Output("42\n"), "42");  // other JSON values are text
  EXPECT_EQ(Output("[1, 2]\n\"s\"\n"), "[1, 2]\n\"s\"");
  EXPECT_EQ(Output("{not json\n"), "{not json");
  EXPECT_EQ(Output("{\"a\": 1} trailing\n"), "{\"a\": 1} trailing");
  EXPECT_EQ(Output("bad \xff byte\n"), "bad \xEF\xBF\xBD byte");
}

TEST(StdoutParser, EmptyOutputIsNull) {
  EXPECT_TRUE(Output("").is_null());
  EXPECT_TRUE(Output("\n \n\t\n").is_null());
  EXPECT_TRUE(Output("{\"progress\": 10}\n{\"progress\": 100}").is_null());
}

TEST(StdoutParser, ProgressLinesAreReportedInOrder) {
  std::vector<Progress> got;
  Result<Json> out = Parse(
      "{\"progress\": 10}\n"
      "text\n"
      "{\"progress\": 20, \"checkpoint\": {\"bytes\": 5}, \"data\": {\"phase\": \"a\"}}\n"
      "{\"progress\": 45.7}\n"
      "{\"progress\": 150}\n"
      "{\"progress\": -3}\n"
      "{\"progress\": \"half\"}\n"  // not a number: dropped
      "{\"progress\": null, \"x\": 1}\n"
      "{\"progress\": 99, \"checkpoint\": [1]}",
      &got);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(*out, "text");
  ASSERT_EQ(got.size(), 6u);
  EXPECT_EQ(got[0].progress, 10);
  EXPECT_TRUE(got[0].checkpoint.is_null());
  EXPECT_TRUE(got[0].data.is_null());
  EXPECT_EQ(got[1].progress, 20);
  EXPECT_EQ(got[1].checkpoint, (Json{{"bytes", 5}}));
  EXPECT_EQ(got[1].data, (Json{{"phase", "a"}}));
  EXPECT_EQ(got[2].progress, 45);
  EXPECT_EQ(got[3].progress, 100);
  EXPECT_EQ(got[4].progress, 0);
  EXPECT_EQ(got[5].progress, 99);
  EXPECT_EQ(got[5].checkpoint, Json::array({1}));
}

TEST(StdoutParser, ChunkingDoesNotMatter) {
  std::string text = "{\"progress\": 1}\nabc\n{\"o\": \"k\"}\n{\"progress\": 2}\nend";
  for (size_t chunk : {1, 2, 3, 5, 8, 13, 100}) {
    std::vector<Progress> got;
    Result<Json> out = Parse(text, &got, 1 << 20, chunk);
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(*out, (Json{{"o", "k"}})) << chunk;
    ASSERT_EQ(got.size(), 2u) << chunk;
    EXPECT_EQ(got[1].progress, 2);
  }
}

TEST(StdoutParser, OutputOverTheLimitFails) {
  std::string line(99, 'x');
  std::string text;
  for (int i = 0; i < 11; ++i) text += line + "\n";  // 1100 bytes
  Result<Json> out = Parse(text, nullptr, 1000);
  EXPECT_EQ(out.status().code(), kOutputTooLarge);
  EXPECT_EQ(out.status().message(), "stdout is over max_output (1000 bytes, progress lines aside)");
  // Exactly at the limit is fine.
  EXPECT_TRUE(Parse(text.substr(0, 1000), nullptr, 1000).ok());
  // Object lines count too, even when a later one would be the output.
  out = Parse(text + "{\"small\": 1}\n", nullptr, 1000);
  EXPECT_EQ(out.status().code(), kOutputTooLarge);
}

TEST(StdoutParser, ProgressLinesDoNotCountTowardsTheLimit) {
  std::vector<Progress> got;
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "{\"progress\": " + std::to_string(i % 101) + "}\n";
  text += "{\"done\": true}\n";
  Result<Json> out = Parse(text, &got, 100);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, (Json{{"done", true}}));
  EXPECT_EQ(got.size(), 1000u);
}

TEST(StdoutParser, ALineLongerThanTheLimitFailsAndTheRestStillReportsProgress) {
  std::vector<Progress> got;
  std::string text =
      "{\"big\": \"" + std::string(5000, 'b') + "\"}\n{\"progress\": 7}\n{\"ok\": 1}\n";
  Result<Json> out = Parse(text, &got, 1000, 512);
  EXPECT_EQ(out.status().code(), kOutputTooLarge);
  EXPECT_EQ(out.status().message(), "a stdout line is longer than max_output (1000 bytes)");
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].progress, 7);
  // Also when the long line is the last one, without a newline.
  EXPECT_EQ(Parse(std::string(2000, 'z'), nullptr, 1000).status().code(), kOutputTooLarge);
}

TEST(StdoutParser, DeeplyNestedLinesFailWithoutRecursion) {
  std::string deep = "{\"a\": " + std::string(200000, '[') + std::string(200000, ']') + "}\n";
  Result<Json> out = Parse(deep, nullptr, 1 << 20, 65536);
  EXPECT_EQ(out.status().code(), kOutputTooLarge);
  EXPECT_EQ(out.status().message(), "a stdout line is nested deeper than 128 levels");
}

TEST(TailBuffer, KeepsTheLastBytes) {
  TailBuffer tail(10);
  tail.Append("hello ");
  EXPECT_EQ(tail.Text(), "hello ");
  tail.Append("world, this is long");
  EXPECT_EQ(tail.Text(), "is is long");
  EXPECT_EQ(tail.total(), 25u);
  for (int i = 0; i < 100; ++i) tail.Append("0123456789abc"[i % 13] + std::string());
  EXPECT_EQ(tail.Text().size(), 10u);
  EXPECT_EQ(tail.total(), 125u);
  TailBuffer chunked(4);
  chunked.Append("abcdefgh");
  EXPECT_EQ(chunked.Text(), "efgh");
}

TEST(TailBuffer, StartsAtACharacterWhenCut) {
  TailBuffer tail(3);
  tail.Append("xx\xC3\xA9\xC3\xA9");  // "xxéé": the cut falls inside the first é
  EXPECT_EQ(tail.Text(), "\xC3\xA9");
}

TEST(MessageTail, ShortTextIsTrimmedOnly) {
  EXPECT_EQ(MessageTail("  first\nit broke\n\n", 100), "first\nit broke");
  EXPECT_EQ(MessageTail("", 100), "");
  EXPECT_EQ(MessageTail("bad \xff", 100), "bad \xEF\xBF\xBD");
}

TEST(MessageTail, LongTextStartsAtALine) {
  std::string text;
  for (int i = 0; i < 100; ++i) text += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(MessageTail(text, 30), "...line 97\nline 98\nline 99");
  EXPECT_EQ(MessageTail(text, 31), "...line 96\nline 97\nline 98\nline 99");  // cut at a line
  // One long line is cut at a character.
  EXPECT_EQ(MessageTail(std::string(50, 'a') + "\xC3\xA9" + "bc", 4),
            "...\xC3\xA9"
            "bc");
  EXPECT_EQ(MessageTail(std::string(50, 'a') + "\xC3\xA9" + "bc", 3), "...bc");
}

}  // namespace
}  // namespace baton::worker
