#include "expr/template.h"

#include "expr/expr_test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace baton::expr {
namespace {

using ::testing::HasSubstr;
using testing_util::SampleScope;

Json MustRender(const Json& value) {
  Result<Json> r = Render(value, SampleScope());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? r.value() : Json("<error>");
}

Status RenderError(const Json& value) {
  Result<Json> r = Render(value, SampleScope());
  EXPECT_FALSE(r.ok()) << "rendered to " << (r.ok() ? r->dump() : "");
  return r.status();
}

TEST(HasTemplates, FindsTemplatesInNestedStrings) {
  EXPECT_TRUE(HasTemplates("{{ inputs.name }}"));
  EXPECT_TRUE(HasTemplates(Json::parse(R"({"a": [1, {"b": "x {{ y }}"}]})")));
  EXPECT_FALSE(HasTemplates("plain"));
  EXPECT_FALSE(HasTemplates(Json::parse(R"({"a": [1, true, null, {"b": "x"}]})")));
  // Object keys are never rendered, so they do not count.
  EXPECT_FALSE(HasTemplates(Json::parse(R"({"{{ k }}": 1})")));
}

TEST(Render, WholeStringTemplateKeepsJsonType) {
  EXPECT_EQ(MustRender("{{ inputs.count }}"), Json(3));
  EXPECT_TRUE(MustRender("{{ inputs.count }}").is_number_integer());
  EXPECT_EQ(MustRender("{{ inputs.ratio }}"), Json(0.5));
  EXPECT_EQ(MustRender("{{ inputs.flag }}"), Json(true));
  EXPECT_TRUE(MustRender("{{ inputs.nothing }}").is_null());
  EXPECT_EQ(MustRender("{{ inputs.tags }}"), Json::parse(R"(["gpu", "fast"])"));
  EXPECT_EQ(MustRender("{{ inputs.meta }}"), Json::parse(R"({"owner": "ops", "level": 2})"));
  EXPECT_EQ(MustRender("{{ inputs.name }}"), Json("llama"));
}

TEST(Render, SpacesInsideAndAroundAWholeTemplateAreOptional) {
  EXPECT_EQ(MustRender("{{inputs.count}}"), Json(3));
  EXPECT_EQ(MustRender("{{    inputs.count\t}}"), Json(3));
  EXPECT_EQ(MustRender("  {{ inputs.count }} "), Json(3));
}

TEST(Render, EmbeddedTemplatesBecomeText) {
  EXPECT_EQ(MustRender("model {{ inputs.name }}!"), Json("model llama!"));
  EXPECT_EQ(MustRender("n={{ inputs.count }}"), Json("n=3"));
  EXPECT_EQ(MustRender("r={{ inputs.ratio }}"), Json("r=0.5"));
  EXPECT_EQ(MustRender("f={{ inputs.flag }}"), Json("f=true"));
  EXPECT_EQ(MustRender("z={{ inputs.nothing }}"), Json("z=null"));
  EXPECT_EQ(MustRender("t={{ inputs.tags }}"), Json(R"(t=["gpu","fast"])"));
  EXPECT_EQ(MustRender("m={{ inputs.meta }}"), Json(R"(m={"level":2,"owner":"ops"})"));
  EXPECT_EQ(MustRender("s={{ inputs.blank }}."), Json("s=."));
}

TEST(Render, SeveralTemplatesInOneString) {
  EXPECT_EQ(MustRender("{{ inputs.name }}-{{ inputs.count }}"), Json("llama-3"));
  EXPECT_EQ(MustRender("{{inputs.name}}{{inputs.count}}"), Json("llama3"));
  EXPECT_EQ(MustRender("openai/{{ inputs.name }} on {{ execution.id }}"),
            Json("openai/llama on ex-1"));
}

TEST(Render, PathsWithIndexesAndDigitNames) {
  EXPECT_EQ(MustRender("{{ steps.a.output.items[1].name }}"), Json("second"));
  EXPECT_EQ(MustRender("{{ steps.a.output.matrix[1] }}"), Json::parse("[3, 4]"));
  EXPECT_EQ(MustRender("{{ steps.1st.output }}"), Json(7));
  EXPECT_EQ(MustRender("{{ steps.my-step.status }}"), Json("failed"));
}

TEST(Render, RecursesThroughArraysAndObjectsButNotKeys) {
  Json in = Json::parse(R"({
    "argv": ["./start.sh", "{{ steps.a.output.path }}", "--port={{ steps.a.output.port }}"],
    "body": {"model": "{{ inputs.name }}", "n": "{{ inputs.count }}", "keep": 5, "t": true},
    "{{ inputs.name }}": null
  })");
  Json want = Json::parse(R"({
    "argv": ["./start.sh", "/models/llama-7b", "--port=8080"],
    "body": {"model": "llama", "n": 3, "keep": 5, "t": true},
    "{{ inputs.name }}": null
  })");
  EXPECT_EQ(MustRender(in), want);
}

TEST(Render, ValuesWithoutTemplatesAreUnchanged) {
  Json in = Json::parse(R"([1, 2.5, true, null, "plain", "}} alone", {"a": []}])");
  EXPECT_EQ(MustRender(in), in);
}

TEST(Render, SubstitutedTextIsNeverParsedAgain) {
  // steps.a.output.evil is the string "{{ inputs.name }}": it must stay literal.
  EXPECT_EQ(MustRender("{{ steps.a.output.evil }}"), Json("{{ inputs.name }}"));
  EXPECT_EQ(MustRender("x {{ steps.a.output.evil }} y"), Json("x {{ inputs.name }} y"));
  // A value that would be a malformed template is not an error either.
  Json root = {{"v", "{{ unclosed"}};
  JsonScope scope(root);
  Result<Json> r = Render("a{{ v }}b", scope);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, Json("a{{ unclosedb"));
}

TEST(Render, MissingReferenceIsTemplateErrorNamingIt) {
  Status st = RenderError("{{ steps.a.output.missing }}");
  EXPECT_EQ(st.code(), errc::kTemplateError);
  EXPECT_EQ(st.message(), "unresolved reference 'steps.a.output.missing'");

  st = RenderError("prefix {{ inputs.nope }} suffix");
  EXPECT_EQ(st.code(), errc::kTemplateError);
  EXPECT_EQ(st.message(), "unresolved reference 'inputs.nope'");

  st = RenderError(Json::parse(R"({"a": ["ok", "{{ steps.a.output.items[7].name }}"]})"));
  EXPECT_EQ(st.code(), errc::kTemplateError);
  EXPECT_EQ(st.message(), "unresolved reference 'steps.a.output.items[7].name'");

  // Wrong kind is missing too: indexing into an object.
  EXPECT_EQ(RenderError("{{ inputs.meta[0] }}").message(), "unresolved reference 'inputs.meta[0]'");
}

TEST(Render, MalformedTemplatesAreTemplateErrorsNamingTheText) {
  struct Case {
    const char* text;
    const char* message_part;
  };
  for (const Case& c : {Case{"{{ a. }}", "malformed template '{{ a. }}'"},
                        Case{"x {{ a b }} y", "malformed template '{{ a b }}'"},
                        Case{"{{ 1abc }}", "malformed template '{{ 1abc }}'"},
                        Case{"abc {{ inputs.name", "unclosed '{{' in template '{{ inputs.name'"},
                        Case{"{{ }}", "empty template '{{ }}'"},
                        Case{"{{{ a }}}", "malformed template '{{{ a }}'"}}) {
    Status st = RenderError(c.text);
    EXPECT_EQ(st.code(), errc::kTemplateError) << c.text;
    EXPECT_THAT(st.message(), HasSubstr(c.message_part)) << c.text;
  }
}

TEST(CollectReferences, ListsPathsInOrderOfAppearance) {
  Json in = Json::parse(R"({
    "a": "{{ inputs.name }} and {{ steps.b.output.x[0] }}",
    "b": ["{{ steps.c.status }}", 1, {"c": "{{ inputs.name }}"}],
    "z": "plain"
  })");
  std::vector<Path> refs;
  ASSERT_TRUE(CollectReferences(in, &refs).ok());
  std::vector<std::string> texts;
  for (const Path& p : refs) texts.push_back(p.text);
  EXPECT_EQ(texts, (std::vector<std::string>{"inputs.name", "steps.b.output.x[0]", "steps.c.status",
                                             "inputs.name"}));
  EXPECT_EQ(refs[1].segments[1].key, "b");
  EXPECT_EQ(refs[1].segments[4].index, 0);
}

TEST(CollectReferences, NoTemplatesNoReferences) {
  std::vector<Path> refs;
  EXPECT_TRUE(CollectReferences(Json::parse(R"({"a": [1, "x", null]})"), &refs).ok());
  EXPECT_TRUE(refs.empty());
}

TEST(CollectReferences, MalformedTemplateIsValidationErrorNamingIt) {
  std::vector<Path> refs;
  Status st = CollectReferences(Json::parse(R"({"a": ["ok", "x {{ steps. }}"]})"), &refs);
  EXPECT_EQ(st.code(), errc::kValidation);
  EXPECT_THAT(st.message(), HasSubstr("'{{ steps. }}'"));

  st = CollectReferences("{{ inputs.a", &refs);
  EXPECT_EQ(st.code(), errc::kValidation);
  EXPECT_THAT(st.message(), HasSubstr("unclosed '{{'"));
}

}  // namespace
}  // namespace baton::expr
