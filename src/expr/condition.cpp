// Condition entry points and the pieces shared by both front ends: the operator table
// and the construction (with compile-time checks) of AST nodes.
#include "expr/condition.h"

#include "expr/condition_ast.h"

#include <re2/re2.h>

#include <array>
#include <utility>

namespace baton::expr {
namespace {

struct OpInfo {
  Op op;
  const char* name;
  bool takes_value;
};

constexpr std::array<OpInfo, 22> kOps = {{
    {Op::kEq, "eq", true},
    {Op::kNeq, "neq", true},
    {Op::kGt, "gt", true},
    {Op::kGte, "gte", true},
    {Op::kLt, "lt", true},
    {Op::kLte, "lte", true},
    {Op::kBetween, "between", true},
    {Op::kIn, "in", true},
    {Op::kNotIn, "not_in", true},
    {Op::kContains, "contains", true},
    {Op::kNotContains, "not_contains", true},
    {Op::kStartsWith, "starts_with", true},
    {Op::kEndsWith, "ends_with", true},
    {Op::kMatches, "matches", true},
    {Op::kExists, "exists", false},
    {Op::kNotExists, "not_exists", false},
    {Op::kEmpty, "empty", false},
    {Op::kNotEmpty, "not_empty", false},
    {Op::kIsTrue, "is_true", false},
    {Op::kIsFalse, "is_false", false},
    {Op::kIsNull, "is_null", false},
    {Op::kTypeIs, "type_is", true},
}};

constexpr std::array<const char*, 7> kTypeNames = {"string", "number", "integer", "boolean",
                                                   "object", "array",  "null"};

const OpInfo& Info(Op op) {
  return kOps[static_cast<size_t>(op)];
}

Status Invalid(Op op, const std::string& what) {
  return Status(errc::kValidation, std::string("operator ") + OpName(op) + " " + what);
}

// Checks a literal right operand against what the operator can use.
Status CheckLiteral(Op op, const Json& v, ConditionNode* node) {
  auto got = [&] { return ", got " + TypeName(&v); };
  switch (op) {
    case Op::kGt:
    case Op::kGte:
    case Op::kLt:
    case Op::kLte:
      if (!v.is_number() && !v.is_string())
        return Invalid(op, "needs a number or a string" + got());
      break;
    case Op::kBetween: {
      bool ok = v.is_array() && v.size() == 2 &&
                ((v[0].is_number() && v[1].is_number()) || (v[0].is_string() && v[1].is_string()));
      if (!ok) {
        return Invalid(op, "needs [lo, hi] with two numbers or two strings, got " +
                               v.dump(-1, ' ', false, Json::error_handler_t::replace));
      }
      break;
    }
    case Op::kIn:
    case Op::kNotIn:
      if (!v.is_array()) return Invalid(op, "needs a list" + got());
      break;
    case Op::kStartsWith:
    case Op::kEndsWith:
      if (!v.is_string()) return Invalid(op, "needs a string" + got());
      break;
    case Op::kMatches: {
      if (!v.is_string()) return Invalid(op, "needs a regex string" + got());
      auto re = CompileRegex(v.get<std::string>());
      if (!re.ok()) return re.status();
      node->regex = std::move(re).value();
      break;
    }
    case Op::kTypeIs:
      if (!v.is_string() || !IsTypeName(v.get<std::string>())) {
        return Invalid(op,
                       "needs one of string, number, integer, boolean, object, array, null, got " +
                           v.dump(-1, ' ', false, Json::error_handler_t::replace));
      }
      break;
    default:
      break;
  }
  return Status::Ok();
}

}  // namespace

const char* OpName(Op op) {
  return Info(op).name;
}

std::optional<Op> OpFromName(std::string_view name) {
  for (const OpInfo& info : kOps) {
    if (name == info.name) return info.op;
  }
  return std::nullopt;
}

bool OpTakesValue(Op op) {
  return Info(op).takes_value;
}

bool IsTypeName(std::string_view name) {
  for (const char* t : kTypeNames) {
    if (name == t) return true;
  }
  return false;
}

std::string TypeName(const Json* value) {
  if (value == nullptr) return "missing";
  switch (value->type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "number";
    case Json::value_t::string:
      return "string";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "binary";
  }
}

// RE2, not std::regex: matching takes time linear in the subject and no recursion, so
// neither a pattern taken from step output ("(a+)+$") nor a long subject can stall or
// overflow the engine's thread; std::regex did both, and its compiler overflowed a
// signed integer on a repetition count (found by fuzz_expr).
constexpr int64_t kMaxRegexMemory = 8 << 20;

Result<std::shared_ptr<const re2::RE2>> CompileRegex(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(kMaxRegexMemory);
  auto re = std::make_shared<const re2::RE2>(pattern, options);
  if (!re->ok()) {
    return Status(errc::kConditionError,
                  "invalid regex '" + pattern + "' for operator matches: " + re->error());
  }
  return std::shared_ptr<const re2::RE2>(std::move(re));
}

Result<NodePtr> MakeCompare(Op op, Operand lhs, std::optional<Operand> rhs) {
  if (OpTakesValue(op) != rhs.has_value()) {
    return Invalid(op, OpTakesValue(op) ? "needs a value" : "takes no value");
  }
  auto node = std::make_shared<ConditionNode>();
  node->kind = ConditionNode::Kind::kCompare;
  node->op = op;
  if (rhs && rhs->kind == Operand::Kind::kLiteral) {
    Status st = CheckLiteral(op, rhs->literal, node.get());
    if (!st.ok()) return st;
  }
  node->lhs = std::move(lhs);
  node->rhs = std::move(rhs);
  return NodePtr(std::move(node));
}

NodePtr MakeTruthy(Operand operand) {
  auto node = std::make_shared<ConditionNode>();
  node->kind = ConditionNode::Kind::kTruthy;
  node->lhs = std::move(operand);
  return node;
}

NodePtr MakeGroup(ConditionNode::Kind kind, std::vector<NodePtr> children) {
  auto node = std::make_shared<ConditionNode>();
  node->kind = kind;
  node->children = std::move(children);
  return node;
}

Result<Condition> CompileCondition(const Json& when) {
  Condition cond;
  Result<NodePtr> root = Status(errc::kValidation, "unreachable");
  if (when.is_string()) {
    cond.source_ = when.get<std::string>();
    root = ParseExpression(cond.source_, &cond.references_);
  } else if (when.is_object() || when.is_boolean()) {
    cond.source_ = when.dump(-1, ' ', false, Json::error_handler_t::replace);
    root = CompileStructured(when, &cond.references_);
  } else {
    return Status(errc::kValidation,
                  "a condition must be a string or an object, got " + TypeName(&when));
  }
  if (!root.ok()) return root.status();
  cond.root_ = std::move(root).value();
  return cond;
}

Result<bool> Condition::Evaluate(const Scope& scope) const {
  if (!root_) return true;
  return EvaluateNode(*root_, scope);
}

bool IsTruthy(const Json& value) {
  switch (value.type()) {
    case Json::value_t::boolean:
      return value.get<bool>();
    case Json::value_t::number_integer:
      return value.get<int64_t>() != 0;
    case Json::value_t::number_unsigned:
      return value.get<uint64_t>() != 0;
    case Json::value_t::number_float:
      return value.get<double>() != 0.0;
    case Json::value_t::string:  // Json::empty() is false for every string
      return !value.get_ref<const std::string&>().empty();
    case Json::value_t::array:
    case Json::value_t::object:
      return !value.empty();
    default:  // null, discarded, binary
      return false;
  }
}

}  // namespace baton::expr
