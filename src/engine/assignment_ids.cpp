// Assignment ids: how the engine forms them, and how a step holds its current one.
#include "engine/engine_impl.h"

#include <charconv>

namespace baton {

std::string AssignmentIdFor(const std::string& exec_id, const std::string& step_id, int attempt) {
  return exec_id + "/" + step_id + "/" + std::to_string(attempt);
}

namespace engine {

std::string AssignmentOf(const ExecState& ex, const StepState& st) {
  if (st.assignment_implied) return AssignmentIdFor(ex.rec.id, st.def->id, st.rec.attempts);
  return st.rec.assignment_id;
}

bool IsCurrentAssignment(const ExecState& ex, const StepState& st, std::string_view assignment) {
  if (!st.assignment_implied) return assignment == st.rec.assignment_id;
  // "<execution>/<step id>/<attempt>", compared part by part.
  auto take = [&assignment](std::string_view part) {
    if (!assignment.starts_with(part)) return false;
    assignment.remove_prefix(part.size());
    return true;
  };
  char digits[16];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, st.rec.attempts);
  return ec == std::errc() && take(ex.rec.id) && take("/") && take(st.def->id) && take("/") &&
         assignment == std::string_view(digits, static_cast<size_t>(end - digits));
}

void SetAssignment(const ExecState& ex, StepState& st, std::string id) {
  st.assignment_implied = id == AssignmentIdFor(ex.rec.id, st.def->id, st.rec.attempts);
  if (st.assignment_implied) {
    st.rec.assignment_id.clear();
    st.rec.assignment_id.shrink_to_fit();
  } else {
    st.rec.assignment_id = std::move(id);
  }
}

void PinAssignment(const ExecState& ex, StepState& st) {
  if (!st.assignment_implied) return;
  st.rec.assignment_id = AssignmentOf(ex, st);
  st.assignment_implied = false;
}

void ClearAssignment(StepState& st) {
  st.assignment_implied = false;
  st.rec.assignment_id.clear();
}

}  // namespace engine
}  // namespace baton
