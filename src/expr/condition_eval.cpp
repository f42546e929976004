// Evaluation of the condition AST: the 22 operators over resolved JSON values.
//
// A missing path resolves to nullptr. eq/neq/in/not_in/type_is/is_null treat it as null
// (it has no value); ordering and string operators report it as type "missing" so the
// user learns which path did not resolve instead of getting a silent false.
#include "expr/condition_ast.h"

#include <re2/re2.h>

#include <compare>
#include <cstdint>

namespace baton::expr {
namespace {

const Json& NullJson() {
  static const Json kNull;
  return kNull;
}

const Json& OrNull(const Json* v) {
  return v != nullptr ? *v : NullJson();
}

// Exact for integer/integer (signed or not), via double when either side is a float.
std::partial_ordering CompareNumbers(const Json& a, const Json& b) {
  if (a.is_number_float() || b.is_number_float()) return a.get<double>() <=> b.get<double>();
  bool au = a.is_number_unsigned();
  bool bu = b.is_number_unsigned();
  if (au && bu) return a.get<uint64_t>() <=> b.get<uint64_t>();
  if (!au && !bu) return a.get<int64_t>() <=> b.get<int64_t>();
  if (au) {
    int64_t bi = b.get<int64_t>();
    if (bi < 0) return std::partial_ordering::greater;
    return a.get<uint64_t>() <=> static_cast<uint64_t>(bi);
  }
  int64_t ai = a.get<int64_t>();
  if (ai < 0) return std::partial_ordering::less;
  return static_cast<uint64_t>(ai) <=> b.get<uint64_t>();
}

// JSON equality, except that numbers compare by value (1 == 1.0), also inside
// arrays and objects.
bool Equal(const Json& a, const Json& b) {
  if (a.is_number() && b.is_number()) return CompareNumbers(a, b) == 0;
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Equal(a[i], b[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto other = b.find(it.key());
      if (other == b.end() || !Equal(it.value(), *other)) return false;
    }
    return true;
  }
  return a == b;
}

class Evaluator {
 public:
  Evaluator(const ConditionNode& node, const Json* lhs, const Json* rhs)
      : node_(node), a_(lhs), b_(rhs) {}

  Result<bool> Apply() {
    const Op op = node_.op;
    switch (op) {
      case Op::kEq:
        return Equal(OrNull(a_), OrNull(b_));
      case Op::kNeq:
        return !Equal(OrNull(a_), OrNull(b_));
      case Op::kGt:
      case Op::kGte:
      case Op::kLt:
      case Op::kLte:
        return Ordering(op);
      case Op::kBetween:
        return Between();
      case Op::kIn:
      case Op::kNotIn: {
        if (b_ == nullptr || !b_->is_array()) return NeedsRight("a list");
        bool found = false;
        for (const Json& item : *b_) found = found || Equal(OrNull(a_), item);
        return op == Op::kIn ? found : !found;
      }
      case Op::kContains:
      case Op::kNotContains: {
        Result<bool> found = Contains();
        if (!found.ok() || op == Op::kContains) return found;
        return !*found;
      }
      case Op::kStartsWith:
      case Op::kEndsWith: {
        if (!BothStrings()) return TypeError();
        const std::string& s = a_->get_ref<const std::string&>();
        const std::string& affix = b_->get_ref<const std::string&>();
        return op == Op::kStartsWith ? s.starts_with(affix) : s.ends_with(affix);
      }
      case Op::kMatches:
        return Matches();
      case Op::kExists:
        return a_ != nullptr && !a_->is_null();
      case Op::kNotExists:
        return a_ == nullptr || a_->is_null();
      case Op::kEmpty:
        return IsEmpty();
      case Op::kNotEmpty:
        return !IsEmpty();
      case Op::kIsTrue:
        return a_ != nullptr && a_->is_boolean() && a_->get<bool>();
      case Op::kIsFalse:
        return a_ != nullptr && a_->is_boolean() && !a_->get<bool>();
      case Op::kIsNull:
        return a_ == nullptr || a_->is_null();
      case Op::kTypeIs:
        return TypeIs();
    }
    return Status(errc::kConditionError, "unknown operator");
  }

 private:
  Result<bool> Ordering(Op op) {
    Result<std::partial_ordering> ord = Compare(a_, b_);
    if (!ord.ok()) return ord.status();
    switch (op) {
      case Op::kGt:
        return *ord > 0;
      case Op::kGte:
        return *ord >= 0;
      case Op::kLt:
        return *ord < 0;
      default:
        return *ord <= 0;
    }
  }

  Result<bool> Between() {
    if (b_ == nullptr || !b_->is_array() || b_->size() != 2) return NeedsRight("[lo, hi]");
    Result<std::partial_ordering> lo = Compare(a_, &(*b_)[0]);
    if (!lo.ok()) return lo.status();
    Result<std::partial_ordering> hi = Compare(a_, &(*b_)[1]);
    if (!hi.ok()) return hi.status();
    return *lo >= 0 && *hi <= 0;
  }

  // Numbers with numbers, strings with strings (bytewise); anything else is an error.
  Result<std::partial_ordering> Compare(const Json* x, const Json* y) {
    if (x != nullptr && y != nullptr) {
      if (x->is_number() && y->is_number()) return CompareNumbers(*x, *y);
      if (x->is_string() && y->is_string()) {
        return std::partial_ordering(x->get_ref<const std::string&>() <=>
                                     y->get_ref<const std::string&>());
      }
    }
    return TypeError(x, y);
  }

  Result<bool> Contains() {
    if (a_ != nullptr && a_->is_string() && b_ != nullptr && b_->is_string()) {
      return a_->get_ref<const std::string&>().find(b_->get_ref<const std::string&>()) !=
             std::string::npos;
    }
    if (a_ != nullptr && a_->is_array()) {
      for (const Json& item : *a_) {
        if (Equal(item, OrNull(b_))) return true;
      }
      return false;
    }
    if (a_ != nullptr && a_->is_object() && b_ != nullptr && b_->is_string()) {
      return a_->contains(b_->get_ref<const std::string&>());
    }
    return TypeError();
  }

  Result<bool> Matches() {
    if (!BothStrings()) return TypeError();
    std::shared_ptr<const re2::RE2> re = node_.regex;
    if (!re) {  // pattern came from a path: compile now
      auto compiled = CompileRegex(b_->get<std::string>());
      if (!compiled.ok()) return compiled.status();
      re = std::move(compiled).value();
    }
    // Search, not full match: anchor with ^ and $ to match the whole string.
    return re2::RE2::PartialMatch(a_->get_ref<const std::string&>(), *re);
  }

  bool IsEmpty() const {
    if (a_ == nullptr || a_->is_null()) return true;
    if (a_->is_string()) return a_->get_ref<const std::string&>().empty();
    if (a_->is_array() || a_->is_object()) return a_->empty();
    return false;  // numbers and booleans are values, never empty
  }

  Result<bool> TypeIs() {
    if (b_ == nullptr || !b_->is_string() || !IsTypeName(b_->get<std::string>())) {
      return NeedsRight("a type name (string, number, integer, boolean, object, array, null)");
    }
    const std::string& t = b_->get_ref<const std::string&>();
    const Json& v = OrNull(a_);
    if (t == "number") return v.is_number();
    if (t == "integer") return v.is_number_integer();
    if (t == "string") return v.is_string();
    if (t == "boolean") return v.is_boolean();
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    return v.is_null();
  }

  bool BothStrings() const {
    return a_ != nullptr && a_->is_string() && b_ != nullptr && b_->is_string();
  }

  Status TypeError() const { return TypeError(a_, b_); }

  Status TypeError(const Json* x, const Json* y) const {
    std::string msg = std::string("operator ") + OpName(node_.op) + " cannot compare " +
                      TypeName(x) + " with " + TypeName(y);
    return Status(errc::kConditionError, msg + MissingNote());
  }

  Status NeedsRight(const std::string& what) const {
    return Status(errc::kConditionError, std::string("operator ") + OpName(node_.op) + " needs " +
                                             what + ", got " + TypeName(b_) + MissingNote());
  }

  // Names the path(s) that did not resolve, the likely cause of a type error.
  std::string MissingNote() const {
    std::string note;
    auto add = [&](const Json* v, const Operand* o) {
      if (v == nullptr && o != nullptr && o->kind == Operand::Kind::kPath) {
        note += " ('" + o->path.text + "' does not exist)";
      }
    };
    add(a_, &node_.lhs);
    add(b_, node_.rhs ? &*node_.rhs : nullptr);
    return note;
  }

  const ConditionNode& node_;
  const Json* a_;
  const Json* b_;
};

// Points `*out` at the operand's value (nullptr when a path is missing). `storage`
// holds the boolean of a parenthesised sub-condition.
Status Resolve(const Operand& operand, const Scope& scope, Json* storage, const Json** out) {
  switch (operand.kind) {
    case Operand::Kind::kPath:
      *out = scope.Find(operand.path);
      return Status::Ok();
    case Operand::Kind::kLiteral:
      *out = &operand.literal;
      return Status::Ok();
    case Operand::Kind::kCondition: {
      Result<bool> r = EvaluateNode(*operand.condition, scope);
      if (!r.ok()) return r.status();
      *storage = *r;
      *out = storage;
      return Status::Ok();
    }
  }
  return Status::Ok();
}

}  // namespace

Result<bool> EvaluateNode(const ConditionNode& node, const Scope& scope) {
  switch (node.kind) {
    case ConditionNode::Kind::kAll:
    case ConditionNode::Kind::kAny: {
      // Short-circuits, so `a exists && a > 1` never compares a missing value.
      const bool any = node.kind == ConditionNode::Kind::kAny;
      for (const NodePtr& child : node.children) {
        Result<bool> r = EvaluateNode(*child, scope);
        if (!r.ok() || *r == any) return r;
      }
      return !any;
    }
    case ConditionNode::Kind::kNot: {
      Result<bool> r = EvaluateNode(*node.children.front(), scope);
      if (!r.ok()) return r;
      return !*r;
    }
    case ConditionNode::Kind::kTruthy: {
      Json storage;
      const Json* v = nullptr;
      Status st = Resolve(node.lhs, scope, &storage, &v);
      if (!st.ok()) return st;
      return v != nullptr && IsTruthy(*v);
    }
    case ConditionNode::Kind::kCompare: {
      Json lhs_storage, rhs_storage;
      const Json* lhs = nullptr;
      const Json* rhs = nullptr;
      Status st = Resolve(node.lhs, scope, &lhs_storage, &lhs);
      if (!st.ok()) return st;
      if (node.rhs) {
        st = Resolve(*node.rhs, scope, &rhs_storage, &rhs);
        if (!st.ok()) return st;
      }
      return Evaluator(node, lhs, rhs).Apply();
    }
  }
  return Status(errc::kConditionError, "invalid condition node");
}

}  // namespace baton::expr
