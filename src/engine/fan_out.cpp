// for_each: one runner instance per item of a rendered array, at most `--parallel` (and
// the workflow's max_parallel) at a time. The step's output is the instances' outputs in
// item order. The first instance that fails cancels the others and fails the attempt,
// so a retry runs every item again. Timeouts and cancellation stop every instance.
#include "engine/engine_impl.h"

#include "expr/template.h"

namespace baton {

using engine::ExecState;
using engine::FanOut;
using engine::StepState;

namespace {
constexpr size_t kMaxItems = 10'000;  // a bound, like every other input size
}  // namespace

void Engine::Impl::BeginFanOut(const ExecPtr& ex, int step, Runner* runner) {
  StepState& st = ex->steps[step];
  const StepDef& def = *st.def;
  st.resolved_input = nullptr;  // the definition's spec: items render per instance
  engine::ExecScope scope(*ex);
  Result<Json> items = expr::Render(def.for_each, scope);
  if (!items.ok()) return FailAttempt(ex, step, StepStatus::kFailed, items.status(), nullptr);
  if (!items->is_array()) {
    return FailAttempt(
        ex, step, StepStatus::kFailed,
        Status(errc::kTemplateError,
               std::string("for_each must yield an array, got ") + items->type_name()),
        nullptr);
  }
  if (items->size() > kMaxItems) {
    return FailAttempt(
        ex, step, StepStatus::kFailed,
        Status(errc::kValidation, "for_each yielded " + std::to_string(items->size()) +
                                      " items; the limit is " + std::to_string(kMaxItems)),
        nullptr);
  }
  if (items->empty()) {
    RunResult done;
    done.output = Json::array();
    return ApplyResult(ex, step, std::move(done));
  }
  FanOut& fan = *(st.Guards().fan = std::make_unique<FanOut>());
  fan.outputs = Json::array();
  fan.outputs.get_ref<Json::array_t&>().resize(items->size());
  fan.items = std::move(items.value());
  StartInstances(ex, step, runner);
}

void Engine::Impl::StartInstances(const ExecPtr& ex, int step, Runner* runner) {
  StepState& st = ex->steps[step];
  const StepDef& def = *st.def;
  FanOut& fan = *st.Fan();
  size_t limit = static_cast<size_t>(capacity_);
  if (ex->def->max_parallel > 0)
    limit = std::min(limit, static_cast<size_t>(ex->def->max_parallel));
  while (fan.live.size() < limit && fan.next < fan.items.size()) {
    const size_t i = fan.next++;
    Json spec;
    {
      engine::ExecScope scope(*ex, &fan.items[i], static_cast<int64_t>(i));
      Result<Json> rendered = expr::Render(def.spec, scope);
      if (!rendered.ok()) {
        StopInstances(ex, step, runner);
        return FailAttempt(ex, step, StepStatus::kFailed, rendered.status(), {{"item_index", i}});
      }
      spec = std::move(rendered.value());
    }
    RunRequest req;
    req.execution_id = ex->rec.id;
    req.step_id = def.id;
    req.attempt = st.rec.attempts;
    req.assignment_id = AssignmentOf(*ex, st) + "#" + std::to_string(i);
    req.type = def.type;
    req.timeout = def.timeout.value_or(Duration(0));
    if (def.type == StepType::kShell) AddShellEnv(*ex, step, static_cast<int64_t>(i), spec);
    req.spec = MakeSpec(std::move(spec));
    req.ns = ex->rec.ns;
    req.priority = ex->rec.priority;
    req.step_index = step;
    fan.live.emplace(req.assignment_id, i);
    StartAssignment(ex, step, runner, std::move(req), /*instance=*/true);
  }
}

void Engine::Impl::OnInstanceDone(const std::string& exec_id, int step,
                                  const std::string& assignment, RunResult result) {
  ExecPtr ex = Find(exec_id);
  if (!ex || ex->finished) return;
  StepState& st = ex->steps[step];
  if (!st.in_flight || !st.Fan()) return;
  auto it = st.Fan()->live.find(assignment);
  if (it == st.Fan()->live.end()) return;  // stale: an earlier attempt's instance
  const size_t i = it->second;
  st.Fan()->live.erase(it);
  Runner* runner = runners_.at(st.def->type);
  TurnGuard turn(this);
  if (!result.status.ok()) {
    StopInstances(ex, step, runner);
    Json details = {{"item_index", i}};
    if (!result.error_details.is_null()) details["instance"] = std::move(result.error_details);
    st.rec.exit_code = result.exit_code;
    if (!result.stderr_text.empty()) st.rec.stderr_tail = result.stderr_text;
    return FailAttempt(
        ex, step, StepStatus::kFailed,
        Status(result.status.code(), "item " + std::to_string(i) + ": " + result.status.message()),
        std::move(details));
  }
  FanOut& fan = *st.Fan();
  fan.outputs[i] = std::move(result.output);
  ++fan.done;
  if (fan.done == fan.items.size()) {
    RunResult done;
    done.output = std::move(fan.outputs);
    return ApplyResult(ex, step, std::move(done));
  }
  const int progress = static_cast<int>(fan.done * 100 / fan.items.size());
  ex->progress_sum += std::min(progress, 99) - st.rec.progress;
  st.rec.progress = std::min(progress, 99);
  MarkStepDirty(ex, step);
  Emit(*ex, "step.progress", step,
       {{"progress", st.rec.progress}, {"done", fan.done}, {"total", fan.items.size()}},
       st.rec.attempts);
  StartInstances(ex, step, runner);
}

void Engine::Impl::StopInstances(const ExecPtr& ex, int step, Runner* runner) {
  StepState& st = ex->steps[step];
  FanOut* fan = st.Fan();
  if (!fan) return;
  std::vector<std::string> live;
  for (const auto& [assignment, item] : fan->live) live.push_back(assignment);
  fan->live.clear();
  fan->next = fan->items.size();  // start nothing more
  AddEffect([runner, live = std::move(live)] {
    for (const auto& a : live) runner->Cancel(a);
  });
}

}  // namespace baton
