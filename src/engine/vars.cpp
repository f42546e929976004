// Runtime variables: a step's `set_vars`, rendered when it completes, become
// `{{ vars.NAME }}` for the steps that start after it. They live in the execution record,
// so they commit with the step's completion and survive a restart or a retry.
#include "engine/engine_impl.h"

#include "expr/template.h"

namespace baton {

using engine::StepState;

namespace {

// Past this a variable is data, not a setting: pass it as a step output instead.
constexpr size_t kMaxVarBytes = 64 * 1024;
constexpr size_t kMaxVars = 256;

}  // namespace

Status Engine::Impl::SetVars(const ExecPtr& ex, int step) {
  StepState& st = ex->steps[step];
  // The step's own output is readable while its variables render.
  const StepStatus was = st.rec.status;
  st.rec.status = StepStatus::kCompleted;
  Result<Json> rendered = [&] {
    engine::ExecScope scope(*ex);
    return expr::Render(st.def->extra().set_vars, scope);
  }();
  st.rec.status = was;
  if (!rendered.ok()) {
    return Status(rendered.status().code(),
                  "set_vars of step '" + st.def->id + "': " + rendered.status().message());
  }
  Json& vars = ex->rec.Set().vars;
  if (!vars.is_object()) vars = Json::object();
  for (auto& [name, value] : rendered->items()) {
    if (const size_t bytes = value.dump().size(); bytes > kMaxVarBytes) {
      return Status(errc::kValidation, "set_vars of step '" + st.def->id + "': '" + name + "' is " +
                                           std::to_string(bytes) + " bytes (at most " +
                                           std::to_string(kMaxVarBytes) + ")");
    }
    if (!vars.contains(name) && vars.size() >= kMaxVars) {
      return Status(errc::kValidation, "set_vars of step '" + st.def->id +
                                           "': the execution already has " +
                                           std::to_string(kMaxVars) + " variables");
    }
  }
  bool changed = false;
  for (auto& [name, value] : rendered->items()) {
    auto it = vars.find(name);
    if (it != vars.end() && *it == value) continue;
    Emit(*ex, "vars.set", step, {{"name", name}, {"value", value}}, st.rec.attempts);
    vars[name] = std::move(value);
    changed = true;
  }
  if (changed) MarkDirty(ex);
  return Status::Ok();
}

}  // namespace baton
