// Assignment ids: how the engine forms them, and how a step holds its current one.
#include "engine/engine_impl.h"

#include <charconv>

namespace baton {

std::string AssignmentIdFor(const std::string& exec_id, const std::string& step_id, int attempt) {
  return exec_id + "/" + step_id + "/" + std::to_string(attempt);
}

bool IsAssignmentIdFor(std::string_view id, std::string_view exec_id, std::string_view step_id,
                       int attempt) {
  // Part by part, without building the id: this runs for every report and dispatch.
  auto take = [&id](std::string_view part) {
    if (!id.starts_with(part)) return false;
    id.remove_prefix(part.size());
    return true;
  };
  char digits[16];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, attempt);
  return ec == std::errc() && take(exec_id) && take("/") && take(step_id) && take("/") &&
         id == std::string_view(digits, static_cast<size_t>(end - digits));
}

namespace engine {

std::string AssignmentOf(const ExecState& ex, const StepState& st) {
  if (st.assignment_implied) return AssignmentIdFor(ex.rec.id, st.def->id, st.rec.attempts);
  return st.rec.assignment_id;
}

bool IsCurrentAssignment(const ExecState& ex, const StepState& st, std::string_view assignment) {
  if (!st.assignment_implied) return assignment == st.rec.assignment_id;
  return IsAssignmentIdFor(assignment, ex.rec.id, st.def->id, st.rec.attempts);
}

void SetAssignment(const ExecState& ex, StepState& st, std::string id) {
  if (IsAssignmentIdFor(id, ex.rec.id, st.def->id, st.rec.attempts)) {
    ImplyAssignment(st);
  } else {
    st.assignment_implied = false;
    st.rec.assignment_id = std::move(id);
  }
}

void ImplyAssignment(StepState& st) {
  st.assignment_implied = true;
  st.rec.assignment_id.clear();
  st.rec.assignment_id.shrink_to_fit();
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
