// The sink through which a runner reports one dispatch back to the engine.
#include "engine/engine_impl.h"

#include <array>

namespace baton {

std::string Engine::Impl::AssignmentIdOf(const std::string& exec_id, int step, int attempt) const {
  ExecPtr ex = Find(exec_id);
  if (!ex || step < 0 || static_cast<size_t>(step) >= ex->steps.size()) return {};
  return AssignmentIdFor(ex->rec.id, ex->steps[step].def->id, attempt);
}

// A runner holds the sink for as long as its step waits or runs, so each pending step pays
// for it: one block (the callbacks are one pointer to it) of 56 bytes, which with
// make_shared's 16 fits jemalloc's 80-byte class, and no string of its own. The usual
// assignment id, "<execution>/<step id>/<attempt>", is not kept: the reports carry the
// execution's id (kept inline), the step and the attempt, and the engine rebuilds the id
// when they arrive. What only a for_each instance needs, or an id of another form, is in
// FullSink. The reports copy what they need: they may outlive the sink.
struct Engine::Impl::AttemptSink : RunSink {
  static constexpr size_t kIdMax = 15;  // NewExecutionId's ids are 15 characters

  AttemptSink(std::shared_ptr<RunnerInbox> inbox, int step, int attempt, bool instance)
      : inbox(std::move(inbox)), step(step), attempt(attempt), instance(instance) {}

  std::shared_ptr<RunnerInbox> inbox;  // and through it the engine (inbox->impl)
  int step;
  int attempt;
  bool instance;  // a for_each instance's: reports go to OnInstanceDone
  uint8_t id_size = 0;
  std::array<char, kIdMax> id{};  // the execution's id, its first id_size characters

  // The execution's id, as the engine's handlers take it.
  virtual std::string ExecutionId() const { return std::string(id.data(), id_size); }
  // This dispatch's assignment id, or empty: the usual form, rebuilt on the loop.
  virtual std::string Assignment() const { return {}; }
  // What Started() reports against: an instance reports its step's attempt.
  virtual std::string AttemptId() const { return Assignment(); }

  // On the loop: `known` when the sink held the id, else the usual form.
  static std::string Resolve(Impl* impl, std::string known, const std::string& exec_id, int step,
                             int attempt) {
    return known.empty() ? impl->AssignmentIdOf(exec_id, step, attempt) : std::move(known);
  }

  void Started() override {
    Impl* impl = inbox->impl;
    Deliver(inbox, [impl, id = ExecutionId(), step = step, attempt = attempt,
                    attempt_id = AttemptId()]() mutable {
      impl->OnStarted(id, step, Resolve(impl, std::move(attempt_id), id, step, attempt));
    });
  }
  void Progress(int progress, Json data) override {
    if (instance) return;  // an instance's progress is not reported
    Impl* impl = inbox->impl;
    Deliver(inbox, [impl, id = ExecutionId(), step = step, attempt = attempt,
                    assignment = Assignment(), progress, data = std::move(data)]() mutable {
      impl->OnProgress(id, step, Resolve(impl, std::move(assignment), id, step, attempt), progress,
                       data);
    });
  }
  void Done(RunResult result) override {
    Impl* impl = inbox->impl;
    Deliver(inbox,
            [impl, id = ExecutionId(), step = step, attempt = attempt, assignment = Assignment(),
             instance = instance, result = std::move(result)]() mutable {
              std::string resolved = Resolve(impl, std::move(assignment), id, step, attempt);
              if (instance) {
                impl->OnInstanceDone(id, step, resolved, std::move(result));
              } else {
                impl->OnDone(id, step, resolved, std::move(result));
              }
            });
  }
};

struct Engine::Impl::FullSink : AttemptSink {
  FullSink(const AttemptSink& base, std::string execution_id, std::string assignment,
           std::string attempt_id)
      : AttemptSink(base),
        execution_id(std::move(execution_id)),
        assignment(std::move(assignment)),
        attempt_id(std::move(attempt_id)) {}
  std::string ExecutionId() const override { return execution_id; }
  std::string Assignment() const override { return assignment; }
  std::string AttemptId() const override { return instance ? attempt_id : assignment; }
  std::string execution_id;
  std::string assignment;
  std::string attempt_id;  // the step's attempt, which an instance reports against
};

RunCallbacks Engine::Impl::MakeAttemptSink(const RunRequest& req, int step, bool instance,
                                           const std::string& step_attempt_id) {
#if defined(__GLIBCXX__) && defined(__x86_64__)
  static_assert(sizeof(AttemptSink) <= 64, "AttemptSink + make_shared's block must fit 80 bytes");
#endif
  AttemptSink compact(inbox_, step, req.attempt, instance);
  const std::string& exec_id = req.execution_id;
  if (!instance && exec_id.size() <= AttemptSink::kIdMax &&
      IsAssignmentIdFor(req.assignment_id, exec_id, req.step_id, req.attempt)) {
    auto sink = std::make_shared<AttemptSink>(std::move(compact));
    sink->id_size = static_cast<uint8_t>(exec_id.size());
    std::copy(exec_id.begin(), exec_id.end(), sink->id.begin());
    return RunCallbacks(std::move(sink));
  }
  return RunCallbacks(
      std::make_shared<FullSink>(compact, exec_id, req.assignment_id, step_attempt_id));
}

void Engine::Impl::Deliver(const std::shared_ptr<RunnerInbox>& inbox,
                           std::function<void()> report) {
  {
    std::lock_guard lock(inbox->mu);
    inbox->reports.push_back(std::move(report));
    if (inbox->drain_posted) return;
    inbox->drain_posted = true;
  }
  inbox->loop->Post([inbox] {
    std::vector<std::function<void()>> reports;
    {
      std::lock_guard lock(inbox->mu);
      reports.swap(inbox->reports);
      inbox->drain_posted = false;
    }
    if (inbox->alive.expired()) return;
    TurnGuard turn(inbox->impl);
    for (auto& each : reports) each();
  });
}

}  // namespace baton
