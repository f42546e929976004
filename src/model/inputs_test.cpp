#include "model/test_util.h"

namespace baton {
namespace {

using testing_model::MustParse;

WorkflowDef Declared() {
  return MustParse(
      "name: x\n"
      "inputs:\n"
      "  s: {type: string, required: true}\n"
      "  i: {type: integer, default: 3}\n"
      "  n: {type: number}\n"
      "  b: {type: boolean}\n"
      "  o: {type: object}\n"
      "  a: {type: array}\n"
      "steps: [{id: a, type: noop}]\n");
}

TEST(Inputs, DefaultsThenProvidedThenPairs) {
  WorkflowDef wf = Declared();
  Result<Json> r = ResolveInputs(wf, Json::parse(R"({"s": "json", "i": 4})"),
                                 {{"s", "pair"}, {"n", "2.5"}, {"b", "true"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, Json::parse(R"({"s": "pair", "i": 4, "n": 2.5, "b": true})"));
  Result<Json> d = ResolveInputs(wf, nullptr, {{"s", "x"}});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)["i"], Json(3));
}

TEST(Inputs, PairsAreConvertedToTheDeclaredType) {
  WorkflowDef wf = Declared();
  Result<Json> r = ResolveInputs(wf, Json::object(),
                                 {{"s", "42"},
                                  {"i", "-7"},
                                  {"n", "3"},
                                  {"b", "false"},
                                  {"o", R"({"k": [1]})"},
                                  {"a", "[1, \"x\"]"}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["s"], Json("42"));
  EXPECT_TRUE((*r)["i"].is_number_integer());
  EXPECT_EQ((*r)["i"], Json(-7));
  EXPECT_EQ((*r)["n"], Json(3));
  EXPECT_EQ((*r)["b"], Json(false));
  EXPECT_EQ((*r)["o"], Json::parse(R"({"k": [1]})"));
  EXPECT_EQ((*r)["a"], Json::parse(R"([1, "x"])"));
}

TEST(Inputs, ConversionErrorsNameInputAndType) {
  WorkflowDef wf = Declared();
  auto err = [&](const std::string& k, const std::string& v) {
    Result<Json> r = ResolveInputs(wf, Json::object(), {{"s", "ok"}, {k, v}});
    EXPECT_FALSE(r.ok()) << k << "=" << v;
    EXPECT_EQ(r.status().code(), errc::kValidation);
    return r.status().message();
  };
  EXPECT_EQ(err("i", "abc"), "input 'i' must be integer, got 'abc'");
  EXPECT_EQ(err("i", "2.5"), "input 'i' must be integer, got '2.5'");
  EXPECT_EQ(err("n", "0x10"), "input 'n' must be number, got '0x10'");
  EXPECT_EQ(err("b", "yes"), "input 'b' must be boolean, got 'yes'");
  EXPECT_EQ(err("o", "[1]"), "input 'o' must be object, got '[1]'");
  EXPECT_EQ(err("a", "{"), "input 'a' must be array, got '{'");
}

TEST(Inputs, ProvidedJsonIsTypeChecked) {
  WorkflowDef wf = Declared();
  Result<Json> r = ResolveInputs(wf, Json::parse(R"({"s": 5, "i": "7", "n": 1})"), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "input 'i' must be integer, got string; input 's' must be string, got integer; "
            "missing required input 's' (string)");
  EXPECT_FALSE(ResolveInputs(wf, Json::array(), {{"s", "x"}}).ok());
}

TEST(Inputs, MissingRequired) {
  Result<Json> r = ResolveInputs(Declared(), Json::object(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "missing required input 's' (string)");
}

TEST(Inputs, UndeclaredAreJsonWhenTheyParse) {
  WorkflowDef wf = MustParse("name: x\nsteps: [{id: a, type: noop}]\n");
  Result<Json> r = ResolveInputs(
      wf, Json::parse(R"({"p": [1]})"),
      {{"n", "5"}, {"t", "true"}, {"o", R"({"a":1})"}, {"s", "hello world"}, {"e", ""}});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(
      *r,
      Json::parse(R"({"p": [1], "n": 5, "t": true, "o": {"a": 1}, "s": "hello world", "e": ""})"));
}

}  // namespace
}  // namespace baton
