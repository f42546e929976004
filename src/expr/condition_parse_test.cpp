// Condition grammar: precedence, literals, structured nesting, compile errors with
// positions, and the references/source a compiled condition reports.
#include "expr/condition.h"

#include "expr/expr_test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>

namespace baton::expr {
namespace {

using ::testing::HasSubstr;
using testing_util::Eval;
using testing_util::When;

struct Case {
  std::string when;
  bool want;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.when << " => " << c.want;
}

class Grammar : public ::testing::TestWithParam<Case> {};

TEST_P(Grammar, Evaluates) {
  Result<bool> r = Eval(GetParam().when);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, GetParam().want);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Logic, Grammar, ::testing::Values(
    Case{R"(inputs.count == 3 && inputs.name == "llama")", true},
    Case{R"(inputs.count == 3 && inputs.name == "x")", false},
    Case{R"(inputs.count == 4 || inputs.name == "llama")", true},
    Case{"inputs.count == 4 || inputs.count == 5 || inputs.count == 3", true},
    Case{"true || true && false", true},                // && binds tighter than ||
    Case{"(true || true) && false", false},
    Case{"false && true || true", true},
    Case{"!inputs.flag", false},
    Case{"!!inputs.flag", true},
    Case{"!(inputs.count > 5)", true},
    Case{"!inputs.count == 4", true},                   // ! applies to the comparison
    Case{"(inputs.count > 1) == true", true},           // a sub-condition as a value
    Case{R"(inputs.count == 3 and (inputs.name == "x" or inputs.flag))", true},
    Case{"not inputs.off", true},
    Case{"not (inputs.flag and inputs.off)", true},
    Case{"inputs.count>=3&&inputs.name==\"llama\"", true},   // no spaces needed
    Case{"inputs.count in[1,2,3]", true},
    Case{R"(steps.a.status == "completed" && (steps.a.output.port > 0 || inputs.count in [1, 2]))",
         true}));

INSTANTIATE_TEST_SUITE_P(Truthiness, Grammar, ::testing::Values(
    Case{"inputs.name", true},
    Case{"inputs.count", true},
    Case{"steps.1st.output", true},
    Case{"inputs.blank", false},
    Case{"inputs.none", false},
    Case{"inputs.obj0", false},
    Case{"inputs.nothing", false},
    Case{"inputs.missing", false},                      // missing is false, not an error
    Case{"inputs.off", false},
    Case{"true", true},
    Case{"false", false},
    Case{"null", false},
    Case{"0", false},
    Case{"[0]", true},
    Case{"(inputs.flag)", true}));

INSTANTIATE_TEST_SUITE_P(Literals, Grammar, ::testing::Values(
    Case{"-1.5 < 0", true},
    Case{"1e3 == 1000", true},
    Case{"2.50 == 2.5", true},
    Case{"18446744073709551615 > 9223372036854775807", true},
    Case{"-9223372036854775808 < 0", true},
    Case{R"('it\'s' == "it's")", true},
    Case{R"("a\"b" == 'a"b')", true},
    Case{R"("tab\there" != "tab here")", true},
    Case{R"("\u00e9\ud83d\ude00" == "é😀")", true},
    Case{R"("" == inputs.blank)", true},
    Case{"[] == inputs.none", true},
    Case{R"([[1, 2], [3, 4]] == steps.a.output.matrix)", true},
    Case{R"([1, "a", true, null, [2]] contains null)", true}));

INSTANTIATE_TEST_SUITE_P(Paths, Grammar, ::testing::Values(
    Case{R"(steps.a.output.items[1].name == "second")", true},
    Case{"steps.a.output.matrix[1][0] == 3", true},
    Case{"steps.a.output.items[5].name exists", false},
    Case{"steps.1st.output == 7", true},
    Case{R"(steps.my-step.status == "failed")", true},
    Case{R"({"field": "steps.a.output.items[0].name", "op": "eq", "value": "first"})", true}));

INSTANTIATE_TEST_SUITE_P(Structured, Grammar, ::testing::Values(
    Case{R"({"all": [{"field": "inputs.count", "op": "eq", "value": 3},
                     {"field": "inputs.flag", "op": "is_true"}]})", true},
    Case{R"({"all": [{"field": "inputs.count", "op": "eq", "value": 3},
                     {"field": "inputs.off", "op": "is_true"}]})", false},
    Case{R"({"any": [{"field": "inputs.count", "op": "eq", "value": 4},
                     {"field": "inputs.flag", "op": "is_true"}]})", true},
    Case{R"({"any": [{"field": "inputs.count", "op": "eq", "value": 4},
                     {"field": "inputs.off", "op": "is_true"}]})", false},
    Case{R"({"not": {"field": "inputs.flag", "op": "is_true"}})", false},
    Case{R"({"not": {"not": {"field": "inputs.flag", "op": "is_true"}}})", true},
    Case{R"({"all": []})", true},
    Case{R"({"any": []})", false},
    Case{R"({"all": [{"any": [{"field": "inputs.off", "op": "is_true"},
                              {"not": {"field": "inputs.name", "op": "empty"}}]},
                     {"field": "steps.a.status", "op": "eq", "value": "completed"}]})", true},
    // Items of all/any may use the expression form.
    Case{R"({"all": ["inputs.count > 2", {"field": "inputs.flag", "op": "is_true"}]})", true},
    Case{R"({"not": "inputs.count > 2"})", false},
    Case{"true", true},                                  // a JSON boolean
    Case{"false", false}));
// clang-format on

struct CompileErrorCase {
  std::string when;
  std::string code;
  std::string message;  // exact, or a substring when it ends with "..."
};
void PrintTo(const CompileErrorCase& c, std::ostream* os) {
  *os << c.when;
}

class CompileErrors : public ::testing::TestWithParam<CompileErrorCase> {};

TEST_P(CompileErrors, AreReportedWithPosition) {
  Result<Condition> c = CompileCondition(When(GetParam().when));
  ASSERT_FALSE(c.ok()) << "compiled: " << GetParam().when;
  EXPECT_EQ(c.status().code(), GetParam().code) << c.status().ToString();
  const std::string& want = GetParam().message;
  if (want.ends_with("...")) {
    EXPECT_THAT(c.status().message(), HasSubstr(want.substr(0, want.size() - 3)));
  } else {
    EXPECT_EQ(c.status().message(), want);
  }
}

const std::string kV = errc::kValidation;
const std::string kC = errc::kConditionError;

// clang-format off
INSTANTIATE_TEST_SUITE_P(Expression, CompileErrors, ::testing::Values(
    CompileErrorCase{"a == (1", kV, "expected ')' at column 8 in 'a == (1'"},
    CompileErrorCase{"", kV, "expected a value at column 1 in ''"},
    CompileErrorCase{"a ==", kV, "expected a value at column 5 in 'a =='"},
    CompileErrorCase{"a = 1", kV, "expected '==' at column 3 in 'a = 1'"},
    CompileErrorCase{"a & b", kV, "expected '&&' at column 3 in 'a & b'"},
    CompileErrorCase{"a | b", kV, "expected '||' at column 3 in 'a | b'"},
    CompileErrorCase{"a b", kV, "unexpected 'b' at column 3 in 'a b'"},
    CompileErrorCase{"a == 1 2", kV, "unexpected '2' at column 8 in 'a == 1 2'"},
    CompileErrorCase{"a == 1)", kV, "unexpected ')' at column 7 in 'a == 1)'"},
    CompileErrorCase{"(a", kV, "expected ')' at column 3 in '(a'"},
    CompileErrorCase{"a && ", kV, "expected a value at column 6 in 'a && '"},
    CompileErrorCase{"!", kV, "expected a value at column 2 in '!'"},
    CompileErrorCase{"a not b", kV, "unexpected 'not' at column 3 in 'a not b'"},
    CompileErrorCase{"a exists 3", kV, "unexpected '3' at column 10 in 'a exists 3'"},
    CompileErrorCase{"in", kV, "expected a value at column 1 in 'in'"},
    CompileErrorCase{"a == contains", kV, "expected a value at column 6..."},
    CompileErrorCase{R"(a == "abc)", kV, "unterminated string at column 6..."},
    CompileErrorCase{R"(a == "x\q")", kV, "invalid escape '\\q' at column 8..."},
    CompileErrorCase{R"(a == "\u12")", kV, "expected 4 hex digits after '\\u'..."},
    CompileErrorCase{R"(a == "\ud800")", kV, "unpaired surrogate..."},
    CompileErrorCase{"a. == 1", kV, "invalid path 'a.': expected a name after '.'..."},
    CompileErrorCase{"a[x] == 1", kV, "invalid path 'a[x]'..."},
    CompileErrorCase{"a == [1, 2", kV, "expected ',' or ']' at column 11 in 'a == [1, 2'"},
    CompileErrorCase{"a in [1, b]", kV, "expected a literal at column 10..."},
    CompileErrorCase{"a == 01", kV, "invalid number '01' at column 6..."},
    CompileErrorCase{"a == -", kV, "unexpected '-' at column 6..."},
    CompileErrorCase{"a == #", kV, "unexpected '#' at column 6..."},
    // Literal operands are checked at compile time.
    CompileErrorCase{"a > true", kV, "operator gt needs a number or a string, got boolean at column 3..."},
    CompileErrorCase{"a between [1]", kV, "operator between needs [lo, hi]..."},
    CompileErrorCase{R"(a between [1, "z"])", kV, "operator between needs [lo, hi]..."},
    CompileErrorCase{"a in 3", kV, "operator in needs a list, got number..."},
    CompileErrorCase{"a starts_with 1", kV, "operator starts_with needs a string..."},
    CompileErrorCase{R"(a type_is "float")", kV, "operator type_is needs one of string, number..."},
    CompileErrorCase{R"(a matches "(")", kC, "invalid regex '('..."}));

INSTANTIATE_TEST_SUITE_P(Structured, CompileErrors, ::testing::Values(
    CompileErrorCase{R"({"field": "a", "op": "equals", "value": 1})", kV,
                     R"(unknown operator 'equals' in condition {"field":"a","op":"equals","value":1})"},
    CompileErrorCase{R"({"field": "a", "op": "eq", "value": 1, "extra": 2})", kV,
                     "unknown key 'extra'..."},
    CompileErrorCase{R"({"all": [], "field": "a"})", kV, "unexpected key 'field' next to 'all'..."},
    CompileErrorCase{R"({"all": 3})", kV, "'all' needs a list of conditions, got number..."},
    CompileErrorCase{R"({"any": {"field": "a", "op": "exists"}})", kV, "'any' needs a list..."},
    CompileErrorCase{R"({"field": "a.", "op": "eq", "value": 1})", kV, "invalid path 'a.'..."},
    CompileErrorCase{R"({"op": "eq", "value": 1})", kV, "'field' must be a path string..."},
    CompileErrorCase{R"({"field": "a", "value": 1})", kV, "'op' must be an operator name..."},
    CompileErrorCase{R"({"field": "a", "op": "eq"})", kV, "operator eq needs a 'value'..."},
    CompileErrorCase{R"({"field": "a", "op": "exists", "value": true})", kV,
                     "operator exists takes no 'value'..."},
    CompileErrorCase{"{}", kV, "empty condition..."},
    CompileErrorCase{R"({"field": "a", "op": "between", "value": [1]})", kV,
                     "operator between needs [lo, hi]..."},
    CompileErrorCase{R"({"field": "a", "op": "in", "value": "abc"})", kV,
                     "operator in needs a list, got string in condition..."},
    CompileErrorCase{R"({"field": "a", "op": "type_is", "value": "float"})", kV,
                     "operator type_is needs one of..."},
    CompileErrorCase{R"({"field": "a", "op": "matches", "value": "[a-"})", kC, "invalid regex '[a-'..."},
    CompileErrorCase{R"({"not": {"any": [{"field": "a", "op": "nope"}]}})", kV,
                     "unknown operator 'nope'..."},
    CompileErrorCase{R"({"all": ["a == (1"]})", kV, "expected ')' at column 8 in 'a == (1'"}));
// clang-format on

TEST(CompileCondition, RejectsOtherJsonTypes) {
  for (const Json& bad : {Json(42), Json(nullptr), Json::array({"a"})}) {
    Result<Condition> c = CompileCondition(bad);
    ASSERT_FALSE(c.ok()) << bad.dump();
    EXPECT_EQ(c.status().code(), errc::kValidation);
    EXPECT_THAT(c.status().message(), HasSubstr("must be a string or an object"));
  }
}

TEST(CompileCondition, DeepNestingIsAnErrorNotACrash) {
  for (const std::string& deep :
       {std::string(10000, '(') + "a" + std::string(10000, ')'), std::string(10000, '!') + "a",
        "a in " + std::string(10000, '[') + std::string(10000, ']')}) {
    Result<Condition> c = CompileCondition(deep);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), errc::kValidation);
    EXPECT_THAT(c.status().message(), HasSubstr("nested too deeply"));
  }
  Json nested = {{"field", "a"}, {"op", "exists"}};
  for (int i = 0; i < 1000; ++i) {
    Json wrapper = Json::object();
    wrapper["not"] = std::move(nested);
    nested = std::move(wrapper);
  }
  Result<Condition> c = CompileCondition(nested);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("nested too deeply"));
  // Moderate nesting is fine.
  EXPECT_TRUE(Eval(std::string(50, '(') + "inputs.flag" + std::string(50, ')')).value());
}

std::vector<std::string> RefTexts(const Condition& c) {
  std::vector<std::string> out;
  for (const Path& p : c.references()) out.push_back(p.text);
  return out;
}

TEST(CompileCondition, ReportsReferencesAndSourceOfExpressions) {
  const std::string text = R"(steps.a.output.n > 1 && (inputs.x[0] in [1, 2] || !vars.flag))";
  Result<Condition> c = CompileCondition(text);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->source(), text);
  EXPECT_EQ(RefTexts(*c),
            (std::vector<std::string>{"steps.a.output.n", "inputs.x[0]", "vars.flag"}));
  EXPECT_EQ(c->references()[0].root(), "steps");
  EXPECT_EQ(c->references()[1].segments[2].index, 0);

  Result<Condition> literal = CompileCondition(R"(1 < 2 && "a" in ["a"])");
  ASSERT_TRUE(literal.ok());
  EXPECT_TRUE(literal->references().empty());
}

TEST(CompileCondition, ReportsReferencesAndSourceOfStructuredConditions) {
  Json when = Json::parse(R"({"any": [{"field": "steps.b.status", "op": "eq", "value": "ok"},
                                      {"not": {"field": "inputs.y", "op": "exists"}},
                                      "steps.c.output.z > 2"]})");
  Result<Condition> c = CompileCondition(when);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->source(), when.dump());
  EXPECT_EQ(RefTexts(*c),
            (std::vector<std::string>{"steps.b.status", "inputs.y", "steps.c.output.z"}));
}

TEST(CompileCondition, BothFormsAgree) {
  // Same conditions written both ways give the same answers on several scopes.
  const std::pair<const char*, const char*> pairs[] = {
      {R"(x > 1 && !(y in ["a", "b"]))",
       R"({"all": [{"field": "x", "op": "gt", "value": 1},
                   {"not": {"field": "y", "op": "in", "value": ["a", "b"]}}]})"},
      {R"(x between [0, 10] || y starts_with "z")",
       R"({"any": [{"field": "x", "op": "between", "value": [0, 10]},
                   {"field": "y", "op": "starts_with", "value": "z"}]})"},
  };
  const Json scopes[] = {{{"x", 2}, {"y", "c"}},
                         {{"x", 2}, {"y", "a"}},
                         {{"x", 0}, {"y", "zed"}},
                         {{"x", 11}, {"y", "b"}},
                         {{"x", 1}, {"y", "q"}}};
  for (const auto& [expr, structured] : pairs) {
    Result<Condition> a = CompileCondition(expr);
    Result<Condition> b = CompileCondition(Json::parse(structured));
    ASSERT_TRUE(a.ok() && b.ok()) << a.status().ToString() << b.status().ToString();
    for (const Json& s : scopes) {
      JsonScope scope(s);
      EXPECT_EQ(a->Evaluate(scope).value(), b->Evaluate(scope).value()) << expr << " on " << s;
    }
  }
}

}  // namespace
}  // namespace baton::expr
