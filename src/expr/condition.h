// Conditions (`when`): an expression string or a structured object, compiled to one AST.
//
// Expression form: paths (`steps.a.output.n`, `inputs.x`), literals (numbers, "..." or
// '...' strings, true, false, null, [lists]), `== != > >= < <= in`, `&& || !`,
// parentheses (`and`, `or`, `not`, `not in` also accepted); a bare path is truthy per
// IsTruthy. Every operator is also usable by name: `x contains "a"`, `x between [1, 5]`,
// and without an operand `x exists`, `x is_true`. Structured form: {field, op, value},
// {all: [...]}, {any: [...]}, {not: ...}. The 22 operators: eq, neq, gt, gte, lt, lte,
// between, in, not_in, contains, not_contains, starts_with, ends_with, matches, exists,
// not_exists, empty, not_empty, is_true, is_false, is_null, type_is.
#pragma once

#include "expr/path.h"

#include <memory>
#include <vector>

namespace baton::expr {

struct ConditionNode;  // defined in condition.cpp

class Condition {
 public:
  Condition() = default;  // always true
  // Evaluates against `scope`. Type mismatches (ordering a string against a number,
  // `matches` on a non-string, ...) and bad regexes are errors with code CONDITION_ERROR
  // naming the operator and both types; never a crash.
  Result<bool> Evaluate(const Scope& scope) const;
  // Paths this condition reads (for validation: only upstream steps may be named).
  const std::vector<Path>& references() const { return references_; }
  const std::string& source() const { return source_; }

 private:
  friend Result<Condition> CompileCondition(const Json& when);
  std::shared_ptr<const ConditionNode> root_;
  std::vector<Path> references_;
  std::string source_;
};

// Compiles a `when` value (string or object; a JSON boolean is a constant). Parse errors
// are VALIDATION errors with a message saying what was expected and where ("expected ')'
// at column 14"); a literal regex that does not compile is a CONDITION_ERROR.
Result<Condition> CompileCondition(const Json& when);

// Truthiness for bare paths: false, null, 0, "", [] and {} are false.
bool IsTruthy(const Json& value);

}  // namespace baton::expr
