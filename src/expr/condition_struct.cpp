// Structured condition form: {field, op, value}, {all: [...]}, {any: [...]}, {not: ...}.
#include "expr/condition_ast.h"

namespace baton::expr {
namespace {

std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Status Invalid(const std::string& what, const Json& where) {
  return Status(errc::kValidation, what + " in condition " + Dump(where));
}

Result<NodePtr> CompileGroup(const Json& when, const std::string& key, std::vector<Path>* refs,
                             int depth) {
  if (when.size() != 1) {
    for (auto it = when.begin(); it != when.end(); ++it) {
      if (it.key() != key)
        return Invalid("unexpected key '" + it.key() + "' next to '" + key + "'", when);
    }
  }
  const Json& body = when.at(key);
  if (key == "not") {
    Result<NodePtr> child = CompileStructured(body, refs, depth + 1);
    if (!child.ok()) return child.status();
    return MakeGroup(ConditionNode::Kind::kNot, {std::move(child).value()});
  }
  if (!body.is_array()) {
    return Invalid("'" + key + "' needs a list of conditions, got " + TypeName(&body), when);
  }
  std::vector<NodePtr> children;
  for (const Json& item : body) {
    Result<NodePtr> child = CompileStructured(item, refs, depth + 1);
    if (!child.ok()) return child.status();
    children.push_back(std::move(child).value());
  }
  return MakeGroup(key == "all" ? ConditionNode::Kind::kAll : ConditionNode::Kind::kAny,
                   std::move(children));
}

Result<NodePtr> CompileLeaf(const Json& when, std::vector<Path>* refs) {
  for (auto it = when.begin(); it != when.end(); ++it) {
    const std::string& k = it.key();
    if (k != "field" && k != "op" && k != "value") {
      return Invalid("unknown key '" + k + "' (expected field, op, value, all, any or not)", when);
    }
  }
  auto field = when.find("field");
  if (field == when.end() || !field->is_string()) {
    return Invalid("'field' must be a path string", when);
  }
  auto op_name = when.find("op");
  if (op_name == when.end() || !op_name->is_string()) {
    return Invalid("'op' must be an operator name", when);
  }
  std::optional<Op> op = OpFromName(op_name->get<std::string>());
  if (!op) return Invalid("unknown operator '" + op_name->get<std::string>() + "'", when);

  Result<Path> path = ParsePath(field->get<std::string>());
  if (!path.ok()) return Invalid(path.status().message(), when);

  auto value = when.find("value");
  std::optional<Operand> rhs;
  if (OpTakesValue(*op)) {
    if (value == when.end()) {
      return Invalid(std::string("operator ") + OpName(*op) + " needs a 'value'", when);
    }
    rhs = Operand{Operand::Kind::kLiteral, {}, *value, nullptr};
  } else if (value != when.end()) {
    return Invalid(std::string("operator ") + OpName(*op) + " takes no 'value'", when);
  }
  refs->push_back(path.value());
  Result<NodePtr> node = MakeCompare(
      *op, Operand{Operand::Kind::kPath, std::move(path).value(), {}, nullptr}, std::move(rhs));
  if (!node.ok()) {
    return Status(node.status().code(), node.status().message() + " in condition " + Dump(when));
  }
  return node;
}

}  // namespace

Result<NodePtr> CompileStructured(const Json& when, std::vector<Path>* refs, int depth) {
  if (depth > kMaxConditionDepth) return Invalid("conditions nested too deeply", when);
  if (when.is_string()) return ParseExpression(when.get_ref<const std::string&>(), refs);
  if (when.is_boolean()) {
    return MakeTruthy(Operand{Operand::Kind::kLiteral, {}, when, nullptr});
  }
  if (!when.is_object()) {
    return Status(errc::kValidation, "a condition must be a string or an object, got " +
                                         TypeName(&when) + ": " + Dump(when));
  }
  if (when.empty()) {
    return Invalid("empty condition (expected {field, op, value}, all, any or not)", when);
  }
  for (const char* key : {"all", "any", "not"}) {
    if (when.contains(key)) return CompileGroup(when, key, refs, depth);
  }
  return CompileLeaf(when, refs);
}

}  // namespace baton::expr
