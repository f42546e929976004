// libFuzzer target: `when` conditions, `{{ }}` templates and their shell rewriting, all
// evaluated against a scope with a few values.
#include "expr/condition.h"
#include "expr/template.h"
#include "model/shell_template.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace {

const baton::Json& ScopeRoot() {
  static const baton::Json root = {
      {"inputs", {{"x", "a b"}, {"n", 3}, {"list", {1, 2, 3}}, {"flag", true}}},
      {"steps", {{"a", {{"output", {{"path", "/m"}, {"port", 8080}}}, {"status", "completed"}}}}},
      {"execution", {{"id", "e1"}}}};
  return root;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  baton::expr::JsonScope scope(ScopeRoot());
  if (auto cond = baton::expr::CompileCondition(baton::Json(text)); cond.ok()) {
    (void)cond->Evaluate(scope);
  }
  (void)baton::expr::Render(baton::Json(text), scope);
  std::vector<baton::expr::Path> refs;
  (void)baton::expr::CollectReferences(baton::Json(text), &refs);
  baton::model::ShellTemplateSplit split = baton::model::SplitShellTemplates(text, 1);
  (void)split.args.size();
  return 0;
}
