#include "model/source.h"

#include <gtest/gtest.h>

namespace baton::model {
namespace {

TEST(PlainScalar, CoreSchema) {
  EXPECT_EQ(ResolvePlainScalar(""), Json(nullptr));
  EXPECT_EQ(ResolvePlainScalar("~"), Json(nullptr));
  EXPECT_EQ(ResolvePlainScalar("NULL"), Json(nullptr));
  EXPECT_EQ(ResolvePlainScalar("true"), Json(true));
  EXPECT_EQ(ResolvePlainScalar("False"), Json(false));
  EXPECT_EQ(ResolvePlainScalar("yes"), Json("yes"));  // YAML 1.1 only
  EXPECT_EQ(ResolvePlainScalar("on"), Json("on"));
  Json i = ResolvePlainScalar("42");
  EXPECT_TRUE(i.is_number_integer());
  EXPECT_EQ(i, Json(42));
  EXPECT_EQ(ResolvePlainScalar("-7"), Json(-7));
  EXPECT_EQ(ResolvePlainScalar("+7"), Json(7));
  EXPECT_EQ(ResolvePlainScalar("0x1F"), Json(31));
  EXPECT_EQ(ResolvePlainScalar("0o17"), Json(15));
  Json f = ResolvePlainScalar("2.5");
  EXPECT_TRUE(f.is_number_float());
  EXPECT_DOUBLE_EQ(f.get<double>(), 2.5);
  EXPECT_TRUE(ResolvePlainScalar("1e3").is_number_float());
  EXPECT_TRUE(ResolvePlainScalar(".5").is_number_float());
  EXPECT_EQ(ResolvePlainScalar(".inf"), Json(".inf"));
  EXPECT_EQ(ResolvePlainScalar("1_000"), Json("1_000"));
  EXPECT_EQ(ResolvePlainScalar("1h30m"), Json("1h30m"));
  EXPECT_EQ(ResolvePlainScalar("1.2.3"), Json("1.2.3"));
  EXPECT_TRUE(ResolvePlainScalar("99999999999999999999999").is_number_float());
  EXPECT_EQ(ResolvePlainScalar("-9223372036854775808"), Json(std::numeric_limits<int64_t>::min()));
}

TEST(Source, YamlTypesAndLines) {
  SourceDoc doc = ParseSource(
      "a: 1\n"
      "b: \"1\"\n"
      "c: '{{ x }}'\n"
      "d:\n"
      "e: |\n"
      "  text\n"
      "f: !!str 12\n"
      "g:\n"
      "  - x\n"
      "  - y: 2\n",
      "f.yaml");
  ASSERT_FALSE(doc.syntax_error);
  EXPECT_TRUE(doc.diagnostics.empty());
  EXPECT_EQ(doc.value["a"], Json(1));
  EXPECT_EQ(doc.value["b"], Json("1"));
  EXPECT_EQ(doc.value["c"], Json("{{ x }}"));
  EXPECT_TRUE(doc.value["d"].is_null());
  EXPECT_EQ(doc.value["e"], Json("text\n"));
  EXPECT_EQ(doc.value["f"], Json("12"));
  EXPECT_EQ(doc.value["g"][1]["y"], Json(2));
  EXPECT_EQ(doc.lines.Find("/a"), 1);
  EXPECT_EQ(doc.lines.Find("/d"), 4);
  EXPECT_EQ(doc.lines.Find("/g"), 8);
  EXPECT_EQ(doc.lines.Find("/g/0"), 9);
  EXPECT_EQ(doc.lines.Find("/g/1/y"), 10);
  EXPECT_EQ(doc.lines.Find("/g/1/y/nothing/here"), 10);  // nearest ancestor
}

TEST(Source, SyntaxErrorHasLine) {
  SourceDoc doc = ParseSource("a: 1\nb: [1, 2\nc: 3\n", "f.yaml");
  ASSERT_TRUE(doc.syntax_error);
  ASSERT_EQ(doc.diagnostics.size(), 1u);
  EXPECT_EQ(doc.diagnostics[0].file, "f.yaml");
  EXPECT_GT(doc.diagnostics[0].line, 1);
  EXPECT_EQ(doc.diagnostics[0].message.rfind("invalid YAML: ", 0), 0u)
      << doc.diagnostics[0].message;
}

TEST(Source, DuplicateKeys) {
  SourceDoc doc = ParseSource("a: 1\nb: 2\na: 3\n", "f.yaml");
  ASSERT_FALSE(doc.syntax_error);
  ASSERT_EQ(doc.diagnostics.size(), 1u);
  EXPECT_EQ(doc.diagnostics[0].line, 3);
  EXPECT_EQ(doc.diagnostics[0].field, "a");
  EXPECT_EQ(doc.diagnostics[0].message, "duplicate key 'a' (first defined at line 1)");
}

TEST(Source, RecursiveAliasIsAnErrorNotACrash) {
  SourceDoc doc = ParseSource("x: &a [1, *a]\n", "f.yaml");
  EXPECT_TRUE(doc.syntax_error);
  ASSERT_FALSE(doc.diagnostics.empty());
}

// Regression: 100,000 levels of nesting (in a workflow's `with`) overflowed yaml-cpp's
// recursive parser and killed the server.
TEST(Source, DeepNestingIsRefusedAtTheLimit) {
  std::string flow =
      "name: w\nsteps:\n  - id: a\n    type: noop\n    with: {x: " + std::string(100000, '[') +
      std::string(100000, ']') + "}\n";
  SourceDoc yaml = ParseSource(flow, "f.yaml");
  ASSERT_TRUE(yaml.syntax_error);
  EXPECT_NE(yaml.diagnostics[0].message.find("nesting deeper than 128"), std::string::npos)
      << yaml.diagnostics[0].message;
  std::string json = R"({"name": "w", "steps": [{"id": "a", "type": "noop", "with": {"x": )" +
                     std::string(100000, '[') + std::string(100000, ']') + "}}]}";
  SourceDoc j = ParseSource(json, "f.json");
  ASSERT_TRUE(j.syntax_error);
  EXPECT_NE(j.diagnostics[0].message.find("nesting deeper than 128"), std::string::npos)
      << j.diagnostics[0].message;
  EXPECT_EQ(j.diagnostics[0].field.rfind("steps[0].with.x[0][0]", 0), 0u) << j.diagnostics[0].field;
}

// Regression: this 459-byte document took 5.8 s and 350 MB before it was refused.
TEST(Source, BillionLaughsIsRefusedAfterAFewThousandNodes) {
  std::string doc =
      "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n";
  const char* names = "abcdefghi";
  for (int level = 1; level < 9; ++level) {
    std::string prev = std::string("*") + names[level - 1];
    doc += std::string(1, names[level]) + ": &" + names[level] + " [" + prev;
    for (int k = 1; k < 9; ++k) doc += "," + prev;
    doc += "]\n";
  }
  SourceDoc parsed = ParseSource(doc, "lol.yaml");
  ASSERT_TRUE(parsed.syntax_error);
  EXPECT_NE(parsed.diagnostics.back().message.find("billion laughs"), std::string::npos)
      << parsed.diagnostics.back().message;
  EXPECT_LT(parsed.lines.size(), 20000u);
}

// Regression (found by fuzz_workflow): a NUL byte made yaml-cpp allocate without end
// (1.6 GB and still going after 15 s).
TEST(Source, ControlCharactersAreRefusedNamingTheByte) {
  constexpr char kFound[] = "# a ->.b ->\0\0\0\1d: b\f ky`e: noop, depen`s_on: [a]}\n";
  const std::string found(kFound, sizeof kFound - 1);
  SourceDoc doc = ParseSource(found, "f.yaml");
  ASSERT_TRUE(doc.syntax_error);
  EXPECT_EQ(doc.diagnostics[0].message,
            "control character 0x00 in the file (not allowed in YAML or JSON)");
  EXPECT_TRUE(ParseSource(std::string("{\"a\": \"\x7f\"}"), "f.json").syntax_error);
  EXPECT_FALSE(ParseSource("a:\t1\r\nb: 2\n", "f.yaml").syntax_error);
}

// The eight-bytes-at-a-time scan finds each refused byte at every offset in a word, next
// to multi-byte UTF-8 (high bytes must not hide one or be taken for one), and lets the
// allowed ones (tab, LF, CR) and every other byte through.
TEST(Source, FindControlCharacterAtEveryOffset) {
  const std::string base = "abc\xc3\xa9 de\tf\r\n{\"x\": 1}\xe2\x82\xac....";
  EXPECT_EQ(FindControlCharacter(base), std::string_view::npos);
  for (int c = 0; c < 256; ++c) {
    const bool refused = (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
    for (size_t at = 0; at <= 17; ++at) {
      std::string text = base;
      text.insert(at, 1, static_cast<char>(c));
      const size_t found = FindControlCharacter(text);
      EXPECT_EQ(found, refused ? at : std::string_view::npos) << "byte " << c << " at " << at;
    }
  }
}

// Regression (found by fuzz_workflow): 41 bytes with an unclosed flow mapping made
// yaml-cpp loop without end.
TEST(Source, AnUnclosedFlowCollectionIsASyntaxError) {
  SourceDoc doc = ParseSource(", it.\nname: validate--{id: oNUside, type:", "f.yaml");
  ASSERT_TRUE(doc.syntax_error);
  EXPECT_EQ(doc.diagnostics[0].message.rfind("invalid YAML: ", 0), 0u)
      << doc.diagnostics[0].message;
  // Brackets inside plain scalars are text, not collections.
  EXPECT_FALSE(ParseSource("run: echo a[1 b{2\nx: [1, {y: 2}]\n", "f.yaml").syntax_error);
}

// Regression (found by fuzz_workflow): yaml-cpp 0.7 never returned on these 26 bytes, so
// `baton validate` hung and POST /workflows held an I/O thread for good.
TEST(Source, PlainKeyThatHungYamlCppIsASyntaxError) {
  SourceDoc doc = ParseSource(", it.\nname: validate-type:", "f.yaml");
  ASSERT_TRUE(doc.syntax_error);
  EXPECT_EQ(doc.diagnostics[0].message.rfind("invalid YAML: ", 0), 0u)
      << doc.diagnostics[0].message;
}

TEST(Source, AliasesCopyTheirAnchorAndCountAgainstTheBudget) {
  SourceDoc doc =
      ParseSource("base: &b {image: x, retries: 2}\nstep: *b\nname: &n hello\n*n : 1\n", "f.yaml");
  ASSERT_FALSE(doc.syntax_error) << doc.diagnostics[0].message;
  EXPECT_EQ(doc.value["step"], Json::parse(R"({"image": "x", "retries": 2})"));
  EXPECT_EQ(doc.value["hello"], Json(1));
  SourceDoc unknown = ParseSource("a: *nowhere\n", "f.yaml");
  ASSERT_TRUE(unknown.syntax_error);
  EXPECT_NE(unknown.diagnostics[0].message.find("'*nowhere'"), std::string::npos);
}

// An alias of a deep anchor, inside another deep anchor, and so on, would nest past the
// limit without any open collection being that deep.
TEST(Source, AliasesCannotStackNestingPastTheLimit) {
  std::string doc;
  std::string prev;
  for (int i = 0; i < 4; ++i) {
    std::string name = "a" + std::to_string(i);
    doc += name + ": &" + name + " " + std::string(60, '[') + (prev.empty() ? "1" : "*" + prev) +
           std::string(60, ']') + "\n";
    prev = name;
  }
  SourceDoc parsed = ParseSource(doc, "f.yaml");
  ASSERT_TRUE(parsed.syntax_error);
  EXPECT_NE(parsed.diagnostics[0].message.find("nesting deeper than 128"), std::string::npos)
      << parsed.diagnostics[0].message;
}

// A document that parses but has exactly one problem, `message`.
void ExpectOneProblem(const SourceDoc& doc, const std::string& message) {
  ASSERT_FALSE(doc.syntax_error);
  ASSERT_EQ(doc.diagnostics.size(), 1u);
  EXPECT_EQ(doc.diagnostics[0].message, message);
}

TEST(Source, ComplexKeysAreRefusedAndTheirValuesDropped) {
  SourceDoc doc = ParseSource("? [a, b]\n: 1\nc: 2\n", "f.yaml");
  ExpectOneProblem(doc, "mapping keys must be strings");
  EXPECT_EQ(doc.value, Json::parse(R"({"c": 2})"));
}

TEST(Source, MultipleDocuments) {
  SourceDoc doc = ParseSource("a: 1\n---\nb: 2\n", "f.yaml");
  ASSERT_TRUE(doc.syntax_error);
  EXPECT_EQ(doc.diagnostics[0].message, "expected one YAML document, found a second one here");
  EXPECT_EQ(doc.diagnostics[0].line, 2);
}

TEST(Source, JsonWithLines) {
  SourceDoc doc = ParseSource("{\n  \"a\": 1,\n  \"b\": [true, \"x\", 2.5]\n}\n", "f.json");
  ASSERT_FALSE(doc.syntax_error);
  EXPECT_EQ(doc.value, Json::parse(R"({"a": 1, "b": [true, "x", 2.5]})"));
  EXPECT_EQ(doc.lines.Find("/b"), 3);
}

TEST(Source, JsonSyntaxError) {
  SourceDoc doc = ParseSource("{\n  \"a\": 1,\n  \"b\": ]\n}\n", "f.json");
  ASSERT_TRUE(doc.syntax_error);
  ASSERT_EQ(doc.diagnostics.size(), 1u);
  EXPECT_EQ(doc.diagnostics[0].line, 3);
  EXPECT_EQ(doc.diagnostics[0].message.rfind("invalid JSON: syntax error", 0), 0u)
      << doc.diagnostics[0].message;
}

TEST(Source, JsonDuplicateKeys) {
  SourceDoc doc = ParseSource("{\"a\": 1,\n \"a\": 2}", "f.json");
  ExpectOneProblem(doc, "duplicate key 'a' (first defined at line 1)");
  EXPECT_EQ(doc.diagnostics[0].line, 2);
}

// A JSON workflow's step lines come from one scan; the full line map (a libyaml pass and
// a string per node) is built only when a message needs another line.
TEST(Source, JsonStepLinesNeedNoLineMap) {
  const std::string text =
      "{\"name\": \"w\", \"x\": \"steps\", \"y\": [\"[\", {\"steps\": [1]}],\n"
      "\"steps\": [\n  {\"id\": \"a\", \"with\": {\"s\": \"}],\\\"\"}},\n\n"
      "  {\"id\": \"b\", \"with\": [[], {}]}\n  , \"c\"]}";
  EXPECT_EQ(JsonStepLines(text), (std::vector<int>{3, 5, 6}));
  SourceDoc doc = ParseSource(text, "f.json");
  ASSERT_FALSE(doc.syntax_error);
  EXPECT_EQ(doc.lines.Find("/steps/1"), 5);
  EXPECT_EQ(doc.lines.size(), 0u);  // not filled
  EXPECT_EQ(doc.lines.Find("/steps/1/with/0"), 5);
  EXPECT_GT(doc.lines.size(), 0u);  // filled on demand
  EXPECT_EQ(doc.lines.Find("/y"), 1);
  EXPECT_EQ(JsonStepLines("{\"steps\": []}"), std::vector<int>{});
  EXPECT_EQ(JsonStepLines("{\"a\": {\"steps\": [1, 2]}}"), std::vector<int>{});
}

TEST(Source, InvalidUtf8) {
  SourceDoc doc = ParseSource("a: 1\nb: \xff\xfe\n", "f.yaml");
  ASSERT_TRUE(doc.syntax_error);
  EXPECT_EQ(doc.diagnostics[0].line, 2);
  EXPECT_EQ(FindInvalidUtf8("h\xc3\xa9llo"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("\xc0\x80"), 0u);  // overlong
  // ASCII is skipped eight bytes at a time: a bad byte is found at every offset of a
  // word, and a sequence that starts in one word and ends in the next is checked whole.
  for (size_t at = 0; at < 24; ++at) {
    std::string text(32, 'a');
    text[at] = '\xff';
    EXPECT_EQ(FindInvalidUtf8(text), at) << at;
    std::string split(32, 'a');
    split.replace(at, 2, "\xc3\xa9");  // valid across any boundary
    EXPECT_EQ(FindInvalidUtf8(split), std::string_view::npos) << at;
    split[at + 1] = 'a';  // a lead byte without its continuation
    EXPECT_EQ(FindInvalidUtf8(split), at) << at;
  }
}

TEST(Pointer, Escapes) {
  EXPECT_EQ(PointerChild("/a", "b/c~d"), "/a/b~1c~0d");
  EXPECT_EQ(PointerIndex("/steps", 3), "/steps/3");
}

}  // namespace
}  // namespace baton::model
