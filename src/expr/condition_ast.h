// Internal: the condition AST shared by both front ends (expression string and
// structured object) and the evaluator. Not part of the module's API.
#pragma once

#include "expr/condition.h"

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace re2 {
class RE2;
}  // namespace re2

namespace baton::expr {

enum class Op {
  kEq,
  kNeq,
  kGt,
  kGte,
  kLt,
  kLte,
  kBetween,
  kIn,
  kNotIn,
  kContains,
  kNotContains,
  kStartsWith,
  kEndsWith,
  kMatches,
  kExists,
  kNotExists,
  kEmpty,
  kNotEmpty,
  kIsTrue,
  kIsFalse,
  kIsNull,
  kTypeIs,
};

// Canonical lower_snake name ("gt"), used in messages for both forms.
const char* OpName(Op op);
std::optional<Op> OpFromName(std::string_view name);
// False for the unary operators (exists, empty, is_true, ...).
bool OpTakesValue(Op op);

using NodePtr = std::shared_ptr<const ConditionNode>;

// One side of a comparison.
struct Operand {
  enum class Kind { kPath, kLiteral, kCondition };
  Kind kind = Kind::kLiteral;
  Path path;          // kPath
  Json literal;       // kLiteral
  NodePtr condition;  // kCondition: a parenthesised sub-expression, compared as a boolean
};

struct ConditionNode {
  enum class Kind { kAll, kAny, kNot, kTruthy, kCompare };
  Kind kind = Kind::kAll;
  std::vector<NodePtr> children;  // kAll / kAny: any number (empty all = true); kNot: one
  Op op = Op::kEq;                // kCompare
  Operand lhs;                    // kTruthy, kCompare
  std::optional<Operand> rhs;     // kCompare, present iff OpTakesValue(op)
  // kMatches with a literal pattern: compiled once here rather than per evaluation.
  std::shared_ptr<const re2::RE2> regex;
};

// Builds a comparison node. A literal right operand is checked now (between needs
// [lo, hi], in a list, type_is a known type name, matches a valid regex, ...) so that
// mistakes surface at validation time. Errors: VALIDATION, or CONDITION_ERROR for an
// invalid regex; callers add where the condition came from.
Result<NodePtr> MakeCompare(Op op, Operand lhs, std::optional<Operand> rhs);

NodePtr MakeTruthy(Operand operand);
NodePtr MakeGroup(ConditionNode::Kind kind, std::vector<NodePtr> children);

// Compiles a regex (RE2 syntax); CONDITION_ERROR naming the pattern when invalid or
// when it would need more than kMaxRegexMemory to run.
Result<std::shared_ptr<const re2::RE2>> CompileRegex(const std::string& pattern);

// Whether `name` is a type_is type (string, number, integer, boolean, object, array, null).
bool IsTypeName(std::string_view name);

// Type name for messages: "number" for every numeric kind, "missing" for nullptr.
std::string TypeName(const Json* value);

// Front ends. Both append every path read to `refs`.
Result<NodePtr> ParseExpression(std::string_view text, std::vector<Path>* refs);
// Accepts an object, a boolean, or a string (delegated to ParseExpression), so that
// all/any/not lists may mix both forms.
Result<NodePtr> CompileStructured(const Json& when, std::vector<Path>* refs, int depth = 0);

// Nesting deeper than this is rejected at compile time so that recursive parsing and
// evaluation cannot exhaust the stack.
inline constexpr int kMaxConditionDepth = 128;

Result<bool> EvaluateNode(const ConditionNode& node, const Scope& scope);

}  // namespace baton::expr
