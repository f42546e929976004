// Child workflows: a `type: workflow` step starts another workflow as an execution of its
// own (parent_id, parent_step, parent_attempt) and completes with its output.
//
// Durability comes from turns, not from extra records: the child's start is written in
// the same batch as the parent step's dispatch, and the child's terminal state in the
// same batch as the parent step's result. So after a crash a running parent step always
// has its child in the store (recovered, it is linked again: the same child, never a
// second one), and a finished child has always handed its result over.
#include "engine/engine_impl.h"

#include <algorithm>

namespace baton {

using engine::ExecState;
using engine::StepState;

namespace {

// The child a running workflow step waits for: its parent step and attempt.
bool IsChildOf(const ExecState& child, const ExecState& parent, int step) {
  const StepState& st = parent.steps[step];
  return child.ParentId() == parent.rec.id && child.ParentStep() == st.def->id &&
         child.ParentAttempt() == st.rec.attempts;
}

}  // namespace

void Engine::Impl::BeginChild(const ExecPtr& ex, int step, const Json& spec) {
  StepState& st = ex->steps[step];
  const std::string name = spec.value("workflow", "");
  const int version = spec.contains("version") && spec["version"].is_number_integer()
                          ? spec["version"].get<int>()
                          : 0;
  auto fail = [&](const std::string& code, const std::string& message) {
    FailAttempt(ex, step, StepStatus::kFailed, Status(code, message), {{"workflow", name}});
  };
  if (!options_.child_workflows) {
    return fail(errc::kUnsupportedStepType,
                "child workflows cannot start here (this engine has no workflow catalog)");
  }
  // Nesting and cycles, along the chain of running ancestors (a running child's parents
  // are all running, so all in memory).
  int depth = 1;
  std::string chain = ex->def->name;
  for (const ExecState* a = ex.get(); a != nullptr;) {
    if (a->def->name == name) {
      return fail(errc::kValidation, "child workflow cycle: " + chain + " -> " + name +
                                         " (a workflow may not start itself)");
    }
    ExecPtr up = a->ParentId().empty() ? nullptr : Find(a->ParentId());
    a = up.get();
    if (a != nullptr) {
      chain = a->def->name + " -> " + chain;
      ++depth;
    }
  }
  if (depth + 1 > options_.max_child_depth) {
    return fail(errc::kValidation, "child workflows nest deeper than " +
                                       std::to_string(options_.max_child_depth) + " (" + chain +
                                       " -> " + name + ")");
  }
  Result<std::shared_ptr<const WorkflowDef>> def =
      options_.child_workflows(ex->rec.ns, name, version);
  if (!def.ok()) return fail(def.status().code(), def.status().message());
  Json provided = spec.contains("input") ? spec["input"] : Json::object();
  if (!provided.is_object()) {
    return fail(errc::kValidation, std::string("input of child workflow '") + name +
                                       "' must be an object, got " + provided.type_name());
  }
  Result<Json> input = ResolveInputs(**def, provided, {});
  if (!input.ok()) {
    return fail(errc::kValidation,
                "input of child workflow '" + name + "': " + input.status().message());
  }
  // The step waits for the child before the child starts: a child that finishes within
  // its own start (a failing first step) already answers this step.
  const std::string child_id = NewExecutionId(loop_->Now());
  st.Guards().child_id = child_id;
  st.rec.status = StepStatus::kRunning;
  MarkStepDirty(ex, step);
  Emit(*ex, "step.started", step,
       {{"child_id", child_id}, {"workflow", (*def)->name}, {"version", (*def)->version}},
       st.rec.attempts);
  StartRequest child;
  child.workflow = *def;
  child.input = std::move(input.value());
  child.execution_id = child_id;
  child.parent_id = ex->rec.id;
  child.parent_step = st.def->id;
  child.parent_attempt = st.rec.attempts;
  child.priority = static_cast<Priority>(ex->rec.priority);
  child.ns = ex->rec.ns;
  Result<std::string> started = Start(std::move(child));  // in this turn: one batch with ours
  if (!started.ok() && st.ChildId() == child_id) {
    st.guards->child_id.clear();
    fail(started.status().code(), started.status().message());
  }
}

void Engine::Impl::AdoptChild(const ExecPtr& child) {
  children_[child->ParentId()].push_back(child->rec.id);
  ExecPtr parent = Find(child->ParentId());
  if (!parent || parent->finished) return;
  auto it = parent->StepIndex().find(child->ParentStep());
  if (it == parent->StepIndex().end()) return;
  const StepState& st = parent->steps[it->second];
  if (st.in_flight && st.ChildId().empty()) LinkChild(parent, it->second);
}

void Engine::Impl::LinkChild(const ExecPtr& ex, int step) {
  auto it = children_.find(ex->rec.id);
  if (it == children_.end()) return;  // not recovered yet: AdoptChild links it
  for (const std::string& id : it->second) {
    ExecPtr child = Find(id);
    if (child && !child->finished && IsChildOf(*child, *ex, step)) {
      ex->steps[step].Guards().child_id = id;
      return;
    }
  }
}

Engine::Impl::ExecPtr Engine::Impl::WaitingParent(const ExecState& child, int* step) const {
  ExecPtr parent = Find(child.ParentId());
  if (!parent || parent->finished) return nullptr;
  auto index = parent->StepIndex().find(child.ParentStep());
  if (index == parent->StepIndex().end()) return nullptr;
  const StepState& st = parent->steps[index->second];
  // Only the child the step waits for now: not one of an attempt that already ended
  // (timed out, cancelled), whose cancellation lands later.
  if (!st.in_flight || st.ChildId() != child.rec.id) return nullptr;
  *step = index->second;
  return parent;
}

void Engine::Impl::EndChild(const ExecState& child) {
  if (auto it = children_.find(child.ParentId()); it != children_.end()) {
    auto& ids = it->second;
    ids.erase(std::remove(ids.begin(), ids.end(), child.rec.id), ids.end());
    if (ids.empty()) children_.erase(it);
  }
  int step = 0;
  ExecPtr parent = WaitingParent(child, &step);
  if (!parent) return;
  StepState& st = parent->steps[step];
  st.guards->child_id.clear();
  RunResult result;
  if (child.rec.status == ExecutionStatus::kCompleted) {
    result.output = child.rec.output();
  } else {
    const Json& error = child.rec.error();
    const std::string why = error.is_object() ? error.value("code", std::string()) + ": " +
                                                    error.value("message", std::string())
                                              : std::string(ToString(child.rec.status));
    result.status = Status(errc::kChildFailed, "child workflow '" + child.def->name +
                                                   "' (execution " + child.rec.id + ") " +
                                                   ToString(child.rec.status) + ": " + why);
    result.error_details = {{"child_id", child.rec.id},
                            {"workflow", child.def->name},
                            {"status", ToString(child.rec.status)},
                            {"error", error}};
  }
  ApplyResult(parent, step, std::move(result));
}

void Engine::Impl::ReportChildProgress(const ExecState& child) {
  int step = 0;
  ExecPtr parent = WaitingParent(child, &step);
  if (!parent) return;
  StepState& st = parent->steps[step];
  // 100 is the step's own, once it finishes.
  const int percent = std::clamp(ProgressOf(child).percent, 0, 99);
  if (percent == st.rec.progress) return;
  parent->progress_sum += percent - st.rec.progress;
  st.rec.progress = percent;
  MarkStepDirty(parent, step);
  Emit(*parent, "step.progress", step,
       {{"progress", percent}, {"data", {{"child_id", child.rec.id}}}}, st.rec.attempts);
  ReportChildProgress(*parent);  // ... and so on up
}

void Engine::Impl::StopChild(const ExecPtr& ex, int step, const std::string& reason) {
  StepState& st = ex->steps[step];
  if (st.ChildId().empty()) return;
  const std::string id = std::move(st.guards->child_id);
  st.guards->child_id.clear();  // its end no longer answers this step
  ExecPtr child = Find(id);
  if (!child || child->finished) return;
  CancelOpenSteps(child, "parent execution stopped the child");
  FinishExecution(child, ExecutionStatus::kCancelled,
                  {{"code", errc::kCancelled}, {"message", reason}});
}

std::vector<std::string> Engine::Impl::RunningChildren(const std::string& id) const {
  auto it = children_.find(id);
  return it == children_.end() ? std::vector<std::string>{} : it->second;
}

}  // namespace baton
