// Operator semantics: every operator in both forms, true and false, and wrong-type
// operands. Grammar, compile errors and references are in condition_parse_test.cpp.
#include "expr/condition.h"

#include "expr/expr_test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>

namespace baton::expr {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;

struct Case {
  std::string when;  // expression, or structured JSON when it starts with '{'
  bool want;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.when << " => " << c.want;
}

class Operators : public ::testing::TestWithParam<Case> {};

TEST_P(Operators, Evaluate) {
  Result<bool> r = Eval(GetParam().when);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, GetParam().want);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Eq, Operators, ::testing::Values(
    Case{"inputs.count == 3", true},
    Case{"inputs.count == 4", false},
    Case{"inputs.count eq 3", true},
    Case{R"({"field": "inputs.count", "op": "eq", "value": 3})", true},
    Case{R"({"field": "inputs.count", "op": "eq", "value": 4})", false},
    Case{R"(inputs.name == "llama")", true},
    Case{R"(inputs.name == 'llama')", true},
    Case{R"(inputs.count == "3")", false},              // no coercion between types
    Case{"steps.a.output.f == 3", true},                // 3.0 == 3
    Case{"inputs.big == steps.a.output.x", true},
    Case{"inputs.nums == [1, 2.0, 3]", true},           // numbers by value, also nested
    Case{R"({"field": "inputs.meta", "op": "eq", "value": {"level": 2.0, "owner": "ops"}})", true},
    Case{"inputs.missing == null", true},               // missing is null for eq
    Case{"inputs.nothing == null", true},
    Case{R"({"field": "inputs.missing", "op": "eq", "value": null})", true}));

INSTANTIATE_TEST_SUITE_P(Neq, Operators, ::testing::Values(
    Case{"inputs.count != 3", false},
    Case{R"(inputs.name != "x")", true},
    Case{"inputs.missing != null", false},
    Case{R"({"field": "inputs.count", "op": "neq", "value": 3.0})", false},
    Case{R"({"field": "inputs.name", "op": "neq", "value": "x"})", true}));

INSTANTIATE_TEST_SUITE_P(Ordering, Operators, ::testing::Values(
    Case{"inputs.count > 2", true},
    Case{"inputs.count > 3", false},
    Case{"inputs.count >= 3", true},
    Case{"inputs.count >= 3.5", false},
    Case{"inputs.ratio < 1", true},
    Case{"inputs.count < 3", false},
    Case{"inputs.count <= 3", true},
    Case{"inputs.count <= -2", false},
    Case{R"(inputs.name > "abc")", true},               // strings order bytewise
    Case{R"(inputs.name < "abc")", false},
    Case{"2 < inputs.count", true},                     // literal on the left
    Case{R"({"field": "inputs.count", "op": "gt", "value": 2})", true},
    Case{R"({"field": "inputs.count", "op": "gt", "value": 3})", false},
    Case{R"({"field": "inputs.count", "op": "gte", "value": 3})", true},
    Case{R"({"field": "inputs.count", "op": "gte", "value": 4})", false},
    Case{R"({"field": "inputs.ratio", "op": "lt", "value": 0.75})", true},
    Case{R"({"field": "inputs.ratio", "op": "lt", "value": 0.5})", false},
    Case{R"({"field": "inputs.name", "op": "lte", "value": "llama"})", true},
    Case{R"({"field": "inputs.name", "op": "lte", "value": "a"})", false}));

INSTANTIATE_TEST_SUITE_P(Between, Operators, ::testing::Values(
    Case{"inputs.count between [1, 3]", true},          // inclusive
    Case{"inputs.count between [3, 3]", true},
    Case{"inputs.count between [4, 9]", false},
    Case{"inputs.ratio between [0, 1]", true},
    Case{R"(inputs.name between ["a", "m"])", true},
    Case{R"({"field": "inputs.count", "op": "between", "value": [1, 5]})", true},
    Case{R"({"field": "inputs.count", "op": "between", "value": [-5, 2.99]})", false}));

INSTANTIATE_TEST_SUITE_P(In, Operators, ::testing::Values(
    Case{"inputs.count in [1, 2, 3]", true},
    Case{R"(inputs.name in ["a", "b"])", false},
    Case{"3.0 in inputs.nums", true},                   // list from a path
    Case{"inputs.missing in [null]", true},
    Case{R"(inputs.name not in ["a"])", true},
    Case{"inputs.count not_in [3]", false},
    Case{R"({"field": "inputs.name", "op": "in", "value": ["x", "llama"]})", true},
    Case{R"({"field": "inputs.name", "op": "in", "value": []})", false},
    Case{R"({"field": "inputs.count", "op": "not_in", "value": [1, 2]})", true},
    Case{R"({"field": "inputs.count", "op": "not_in", "value": [3]})", false}));

INSTANTIATE_TEST_SUITE_P(Contains, Operators, ::testing::Values(
    Case{R"(steps.a.output.path contains "llama")", true},   // substring
    Case{R"(steps.a.output.path contains "mistral")", false},
    Case{R"(inputs.tags contains "gpu")", true},             // element
    Case{"inputs.nums contains 2.0", true},
    Case{R"(inputs.tags contains "cpu")", false},
    Case{R"(inputs.meta contains "owner")", true},           // key
    Case{R"(inputs.meta contains "ops")", false},
    Case{R"(inputs.tags not_contains "cpu")", true},
    Case{R"(steps.a.output.path not_contains "llama")", false},
    Case{R"({"field": "steps.a.output.items", "op": "contains", "value": {"name": "first"}})", true},
    Case{R"({"field": "inputs.meta", "op": "contains", "value": "level"})", true},
    Case{R"({"field": "inputs.name", "op": "contains", "value": "xyz"})", false},
    Case{R"({"field": "inputs.meta", "op": "not_contains", "value": "level"})", false},
    Case{R"({"field": "inputs.tags", "op": "not_contains", "value": "cpu"})", true}));

INSTANTIATE_TEST_SUITE_P(Affixes, Operators, ::testing::Values(
    Case{R"(steps.a.output.path starts_with "/models")", true},
    Case{R"(steps.a.output.path starts_with "models")", false},
    Case{R"(steps.a.output.path ends_with "7b")", true},
    Case{R"(steps.a.output.path ends_with "7")", false},
    Case{R"({"field": "inputs.name", "op": "starts_with", "value": "ll"})", true},
    Case{R"({"field": "inputs.name", "op": "starts_with", "value": "ma"})", false},
    Case{R"({"field": "inputs.name", "op": "ends_with", "value": "ma"})", true},
    Case{R"({"field": "inputs.name", "op": "ends_with", "value": "ll"})", false}));

INSTANTIATE_TEST_SUITE_P(Matches, Operators, ::testing::Values(
    Case{R"(steps.a.output.path matches "^/models/[a-z]+-\\d+b$")", true},
    Case{R"(steps.a.output.path matches "^llama")", false},
    Case{R"(inputs.name matches "am")", true},                // search, not full match
    Case{R"(inputs.name matches inputs.name)", true},         // pattern from a path
    Case{R"({"field": "execution.id", "op": "matches", "value": "^ex-[0-9]+$"})", true},
    Case{R"({"field": "execution.id", "op": "matches", "value": "^[0-9]+$"})", false}));

INSTANTIATE_TEST_SUITE_P(Existence, Operators, ::testing::Values(
    Case{"steps.a.output.x exists", true},
    Case{"steps.a.output.nope exists", false},
    Case{"inputs.nothing exists", false},               // null does not exist
    Case{"steps.a.output.nope not_exists", true},
    Case{"inputs.count not_exists", false},
    Case{R"({"field": "steps.a.output.items[1].tags", "op": "exists"})", true},
    Case{R"({"field": "steps.a.output.items[2]", "op": "exists"})", false},
    Case{R"({"field": "inputs.nothing", "op": "not_exists"})", true},
    Case{R"({"field": "inputs.name", "op": "not_exists"})", false}));

INSTANTIATE_TEST_SUITE_P(Emptiness, Operators, ::testing::Values(
    Case{"inputs.blank empty", true},
    Case{"inputs.none empty", true},
    Case{"inputs.obj0 empty", true},
    Case{"inputs.nothing empty", true},
    Case{"inputs.missing empty", true},
    Case{"inputs.name empty", false},
    Case{"inputs.count empty", false},                  // numbers are never empty
    Case{"inputs.tags not_empty", true},
    Case{"inputs.none not_empty", false},
    Case{R"({"field": "inputs.obj0", "op": "empty"})", true},
    Case{R"({"field": "inputs.meta", "op": "empty"})", false},
    Case{R"({"field": "inputs.meta", "op": "not_empty"})", true},
    Case{R"({"field": "inputs.blank", "op": "not_empty"})", false}));

INSTANTIATE_TEST_SUITE_P(Booleans, Operators, ::testing::Values(
    Case{"inputs.flag is_true", true},
    Case{"inputs.off is_true", false},
    Case{"inputs.count is_true", false},                // only the boolean true
    Case{"inputs.off is_false", true},
    Case{"inputs.flag is_false", false},
    Case{"inputs.missing is_false", false},
    Case{"inputs.none is_false", false},
    Case{R"({"field": "steps.my-step.output.ok", "op": "is_true"})", true},
    Case{R"({"field": "inputs.name", "op": "is_true"})", false},
    Case{R"({"field": "inputs.off", "op": "is_false"})", true},
    Case{R"({"field": "inputs.blank", "op": "is_false"})", false}));

INSTANTIATE_TEST_SUITE_P(Null, Operators, ::testing::Values(
    Case{"inputs.nothing is_null", true},
    Case{"inputs.missing is_null", true},
    Case{"inputs.count is_null", false},
    Case{R"({"field": "inputs.nothing", "op": "is_null"})", true},
    Case{R"({"field": "inputs.blank", "op": "is_null"})", false}));

INSTANTIATE_TEST_SUITE_P(TypeIs, Operators, ::testing::Values(
    Case{R"(inputs.count type_is "integer")", true},
    Case{R"(inputs.count type_is "number")", true},
    Case{R"(inputs.ratio type_is "integer")", false},
    Case{R"(inputs.ratio type_is "number")", true},
    Case{R"(inputs.name type_is "string")", true},
    Case{R"(inputs.name type_is "number")", false},
    Case{R"(inputs.flag type_is "boolean")", true},
    Case{R"(inputs.tags type_is "array")", true},
    Case{R"(inputs.meta type_is "object")", true},
    Case{R"(inputs.nothing type_is "null")", true},
    Case{"inputs.count type_is inputs.type", true},    // type name from a path
    Case{R"({"field": "inputs.meta", "op": "type_is", "value": "object"})", true},
    Case{R"({"field": "inputs.meta", "op": "type_is", "value": "array"})", false}));
// clang-format on

struct ErrorCase {
  std::string when;
  std::string message;  // exact, or a substring when it ends with "..."
};
void PrintTo(const ErrorCase& c, std::ostream* os) {
  *os << c.when;
}

class WrongTypes : public ::testing::TestWithParam<ErrorCase> {};

// Type mismatches are CONDITION_ERRORs at evaluation with a clear message, never a crash.
TEST_P(WrongTypes, AreConditionErrors) {
  Result<bool> r = Eval(GetParam().when);
  ASSERT_FALSE(r.ok()) << "evaluated to " << (r.ok() && *r);
  EXPECT_EQ(r.status().code(), errc::kConditionError) << r.status().ToString();
  const std::string& want = GetParam().message;
  if (want.ends_with("...")) {
    EXPECT_THAT(r.status().message(), HasSubstr(want.substr(0, want.size() - 3)));
  } else {
    EXPECT_EQ(r.status().message(), want);
  }
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(All, WrongTypes, ::testing::Values(
    ErrorCase{"inputs.name > 3", "operator gt cannot compare string with number"},
    ErrorCase{R"({"field": "inputs.name", "op": "gt", "value": 3})",
              "operator gt cannot compare string with number"},
    ErrorCase{"inputs.flag >= 1", "operator gte cannot compare boolean with number"},
    ErrorCase{R"(inputs.tags < "a")", "operator lt cannot compare array with string"},
    ErrorCase{"inputs.nothing <= 1", "operator lte cannot compare null with number"},
    ErrorCase{"inputs.missing < 3",
              "operator lt cannot compare missing with number ('inputs.missing' does not exist)"},
    ErrorCase{"inputs.count > inputs.name", "operator gt cannot compare number with string"},
    ErrorCase{"inputs.name between [1, 5]", "operator between cannot compare string with number"},
    ErrorCase{"inputs.count between inputs.nums", "operator between needs [lo, hi], got array"},
    ErrorCase{"inputs.count in inputs.name", "operator in needs a list, got string"},
    ErrorCase{"inputs.count not_in inputs.missing",
              "operator not_in needs a list, got missing ('inputs.missing' does not exist)"},
    ErrorCase{"inputs.count contains 3", "operator contains cannot compare number with number"},
    ErrorCase{"inputs.meta contains 1", "operator contains cannot compare object with number"},
    ErrorCase{"inputs.name not_contains 1",
              "operator not_contains cannot compare string with number"},
    ErrorCase{R"(inputs.count starts_with "3")",
              "operator starts_with cannot compare number with string"},
    ErrorCase{"inputs.name ends_with inputs.count",
              "operator ends_with cannot compare string with number"},
    ErrorCase{R"(inputs.count matches "3")", "operator matches cannot compare number with string"},
    ErrorCase{"inputs.name matches inputs.bad_re", "invalid regex '('..."},
    ErrorCase{"inputs.count type_is inputs.name", "operator type_is needs a type name..."},
    // Errors propagate through logic operators.
    ErrorCase{"!(inputs.name > 3)", "operator gt cannot compare string with number"},
    ErrorCase{R"({"all": [{"field": "inputs.count", "op": "eq", "value": 3},
                          {"not": {"field": "inputs.name", "op": "lt", "value": 1}}]})",
              "operator lt cannot compare string with number"}));
// clang-format on

TEST(Condition, LogicShortCircuitsPastErrors) {
  // The right side would be a type error, but it is never evaluated.
  Result<bool> r = Eval("inputs.missing exists && inputs.missing > 3");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(*r);
  r = Eval(R"(inputs.count == 3 || inputs.name > 3)");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*r);
}

TEST(Condition, DefaultConditionIsTrue) {
  Condition c;
  Result<bool> r = c.Evaluate(testing_util::SampleScope());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
  EXPECT_TRUE(c.references().empty());
  EXPECT_TRUE(c.source().empty());
}

TEST(Condition, CompiledOnceEvaluatesAgainstAnyScope) {
  Result<Condition> c = CompileCondition(R"(steps.a.output.port > 0 && x matches "^a+$")");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  Json yes = {{"steps", {{"a", {{"output", {{"port", 1}}}}}}}, {"x", "aaa"}};
  Json no = {{"steps", {{"a", {{"output", {{"port", 1}}}}}}}, {"x", "aab"}};
  EXPECT_TRUE(*c->Evaluate(JsonScope(yes)));
  EXPECT_FALSE(*c->Evaluate(JsonScope(no)));
}

TEST(IsTruthy, FalsyValues) {
  for (const Json& v : {Json(false), Json(nullptr), Json(0), Json(0u), Json(0.0), Json(""),
                        Json::array(), Json::object()}) {
    EXPECT_FALSE(IsTruthy(v)) << v.dump();
  }
  for (const Json& v : {Json(true), Json(1), Json(-1), Json(0.1), Json("0"), Json("false"),
                        Json::array({0}), Json::object({{"a", nullptr}})}) {
    EXPECT_TRUE(IsTruthy(v)) << v.dump();
  }
}

}  // namespace
}  // namespace baton::expr

namespace baton::expr {
namespace {

// Evaluates `pattern` (taken from data, as a step's output would give it) against
// `subject`.
Result<bool> MatchFromData(const std::string& subject, const std::string& pattern) {
  Result<Condition> cond = CompileCondition(Json("inputs.s matches inputs.p"));
  if (!cond.ok()) return cond.status();
  const Json root{{"inputs", {{"s", subject}, {"p", pattern}}}};  // the scope refers to it
  JsonScope scope(root);
  return cond->Evaluate(scope);
}

// Regression (found by fuzz_expr): std::regex's compiler overflowed a signed integer on
// a repetition count of 5555555555555555555 (UBSan). RE2 reads a count it cannot hold
// as literal text, and refuses counts past 1000 with a clear error.
TEST(Matches, RepetitionCountsAreBounded) {
  Result<bool> r = MatchFromData("x", "a{5555555555555555555}");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(*r);
  r = MatchFromData("x", "a{1001}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), errc::kConditionError);
  EXPECT_THAT(r.status().message(), HasSubstr("invalid regex 'a{1001}'"));
}

// Regression: with std::regex, "(a+)+$" against 40 a's and a b backtracked for hours on
// the engine's thread. A pattern from data is matched in linear time now.
TEST(Matches, CatastrophicBacktrackingPatternsRunInLinearTime) {
  Result<bool> r = MatchFromData(std::string(40, 'a') + "b", "(a+)+$");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(*r);
  r = MatchFromData(std::string(40, 'a'), "^(a|aa)+$");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*r);
}

// Regression: std::regex recursed once per character, so a few hundred kilobytes of step
// output overflowed the engine thread's stack.
TEST(Matches, ALongSubjectDoesNotRecurse) {
  Result<bool> r = MatchFromData(std::string(4 << 20, 'a') + "c", "^(a|b)*c$");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*r);
}

}  // namespace
}  // namespace baton::expr
