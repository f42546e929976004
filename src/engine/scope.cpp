// Template and condition lookups over one execution's live state.
#include "engine/engine_impl.h"

namespace baton::engine {

const Json* ExecScope::Find(const expr::Path& path) const {
  const std::string& root = path.root();
  if (root == "inputs") return expr::Walk(ex_.Input(), path, 1);
  if (root == "execution") {
    // Built when a template asks, not kept per execution: most never do.
    const Json& execution = temporaries_.emplace_back(
        Json{{"id", ex_.rec.id}, {"workflow", ex_.def->name}, {"version", ex_.def->version}});
    return expr::Walk(execution, path, 1);
  }
  if (root == "vars") {
    // A variable a step set shadows the definition's constant of the same name.
    if (path.segments.size() >= 2 && ex_.rec.vars().is_object() &&
        ex_.rec.vars().contains(path.segments[1].key)) {
      return expr::Walk(ex_.rec.vars(), path, 1);
    }
    return expr::Walk(ex_.def->vars, path, 1);
  }
  if (root == "item") return item_ ? expr::Walk(*item_, path, 1) : nullptr;
  if (root == "item_index") {
    return item_ && path.segments.size() == 1 ? &temporaries_.emplace_back(item_index_) : nullptr;
  }
  if (root != "steps" || path.segments.size() < 3) return nullptr;
  const auto& index = ex_.StepIndex();
  auto it = index.find(path.segments[1].key);
  if (it == index.end()) return nullptr;
  const StepState& st = ex_.steps[it->second];
  const std::string& field = path.segments[2].key;
  const bool has_output = st.rec.status == StepStatus::kCompleted ||
                          st.rec.status == StepStatus::kCached ||
                          ((st.rec.status == StepStatus::kFailed) && !st.rec.output.is_null());
  if (field == "output") return has_output ? expr::Walk(st.rec.output, path, 3) : nullptr;
  if (path.segments.size() != 3) {
    if (field == "error" && !st.rec.error.is_null()) return expr::Walk(st.rec.error, path, 3);
    return nullptr;
  }
  if (field == "status") return &temporaries_.emplace_back(ToString(st.rec.status));
  if (field == "attempts") return &temporaries_.emplace_back(st.rec.attempts);
  if (field == "exit_code") {
    return st.rec.exit_code < 0 ? nullptr : &temporaries_.emplace_back(st.rec.exit_code);
  }
  if (field == "stderr") return &temporaries_.emplace_back(st.rec.stderr_tail);
  if (field == "error") return st.rec.error.is_null() ? nullptr : &st.rec.error;
  return nullptr;
}

}  // namespace baton::engine
