// A deterministic engine harness: virtual time, an in-memory store, and a scripted
// runner whose attempts take virtual time and succeed or fail as told.
#pragma once

#include <baton/engine.h>
#include <baton/event_loop.h>
#include <baton/memory_store.h>
#include <baton/store.h>
#include <baton/workflow.h>

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace baton::testing {

struct Outcome {
  Outcome(int64_t duration = 10, std::string code = "", Json out = nullptr)
      : duration_ms(duration), error_code(std::move(code)), output(std::move(out)) {}
  int64_t duration_ms;
  std::string error_code;  // empty = success
  Json output;
  int64_t progress_every_ms = 0;  // > 0: reports progress this often while it runs
};

// Runs `shell` steps in virtual time. The script is keyed by step id; attempt N takes
// outcome N-1 (the last one repeats).
class ScriptedRunner final : public Runner {
 public:
  explicit ScriptedRunner(EventLoop* loop) : loop_(loop) {}
  std::map<std::string, std::vector<Outcome>> script;
  struct Call {
    std::string step_id;
    int attempt;
    TimeMs started;
    Json spec;
  };
  std::vector<Call> calls;
  std::vector<std::string> cancelled;
  int running = 0;
  int max_running = 0;

  void Start(const RunRequest& req, RunCallbacks cb) override {
    calls.push_back({req.step_id, req.attempt, loop_->Now(), *req.spec});
    Outcome o;
    auto it = script.find(req.step_id);
    if (it != script.end() && !it->second.empty()) {
      o = it->second[std::min<size_t>(req.attempt - 1, it->second.size() - 1)];
    }
    // Per-request overrides (a for_each instance renders them from its item).
    if (auto w = req.spec->find("with"); w != req.spec->end() && w->is_object()) {
      if (w->contains("sim_ms")) o.duration_ms = (*w)["sim_ms"].get<int64_t>();
      if (w->value("sim_fail", false)) o.error_code = "EXIT_NONZERO";
      if (w->contains("sim_output")) o.output = (*w)["sim_output"];
    }
    ++running;
    max_running = std::max(max_running, running);
    cb.Started();
    const RunCallbacks done = cb;
    TimerId t =
        loop_->ScheduleAfter(Duration(o.duration_ms), [this, o, done, id = req.assignment_id] {
          pending_.erase(id);
          --running;
          RunResult r;
          r.output = o.output;
          if (!o.error_code.empty()) r.status = Status(o.error_code, "scripted failure");
          done.Done(std::move(r));
        });
    pending_[req.assignment_id] = {t, done};
    if (o.progress_every_ms > 0) {
      ReportProgress(req.assignment_id, o.progress_every_ms, 0, std::move(cb));
    }
  }
  void Cancel(const std::string& assignment_id) override {
    cancelled.push_back(assignment_id);
    auto it = pending_.find(assignment_id);
    if (it == pending_.end()) return;
    loop_->CancelTimer(it->second.first);
    auto done = it->second.second;
    pending_.erase(it);
    --running;
    RunResult r;
    r.status = Status(errc::kCancelled, "cancelled");
    done.Done(std::move(r));
  }
  // Progress every `every` ms for as long as the assignment is pending.
  void ReportProgress(const std::string& id, int64_t every, int n, RunCallbacks report) {
    loop_->ScheduleAfter(Duration(every), [this, id, every, n, report = std::move(report)] {
      if (!pending_.count(id)) return;
      report.Progress(std::min(n + 1, 99), Json{{"tick", n + 1}});
      ReportProgress(id, every, n + 1, report);
    });
  }
  int CallsFor(const std::string& step) const {
    int n = 0;
    for (const auto& c : calls) n += c.step_id == step;
    return n;
  }

 private:
  EventLoop* loop_;
  std::map<std::string, std::pair<TimerId, RunCallbacks>> pending_;
};

class EventLog final : public ExecutionObserver {
 public:
  std::vector<EventRecord> events;
  std::vector<ExecutionProgress> progress;
  void OnEvent(const EventRecord& e, const ExecutionProgress& p) override {
    events.push_back(e);
    progress.push_back(p);
  }
  std::vector<std::string> TypesFor(const std::string& step) const {
    std::vector<std::string> out;
    for (const auto& e : events)
      if (e.step_id == step) out.push_back(e.type);
    return out;
  }
};

inline std::shared_ptr<const WorkflowDef> MustParse(const std::string& yaml) {
  ParseOutcome out = ParseWorkflow(yaml, "test.yaml");
  EXPECT_TRUE(out.ok()) << out.ToStatus().message();
  if (!out.ok()) return nullptr;
  return std::make_shared<const WorkflowDef>(std::move(*out.workflow));
}

struct SimHarness {
  SimClock clock{1'700'000'000'000};
  std::unique_ptr<SimEventLoop> loop = std::make_unique<SimEventLoop>(&clock);
  std::unique_ptr<Store> store = NewMemoryStore();
  std::unique_ptr<Committer> committer = NewSyncCommitter(store.get());
  std::unique_ptr<ScriptedRunner> runner = std::make_unique<ScriptedRunner>(loop.get());
  EventLog log;
  std::unique_ptr<Engine> engine;

  explicit SimHarness(EngineOptions options = {}) { Reset(options); }

  // What kill -9 leaves: the store. The engine, its loop's pending work and the
  // runner's processes are gone; a fresh engine starts over the same store.
  void Crash(EngineOptions options = {}) {
    engine.reset();
    runner.reset();
    loop = std::make_unique<SimEventLoop>(&clock);
    runner = std::make_unique<ScriptedRunner>(loop.get());
    Reset(options);
  }

  void Reset(EngineOptions options = {}) {
    if (options.random_seed == 0) options.random_seed = 42;
    engine = std::make_unique<Engine>(loop.get(), committer.get(), options);
    // After a Crash() the store has events: numbering continues after them.
    EXPECT_TRUE(SeedEventPositions(store.get(), engine.get()).ok());
    EXPECT_TRUE(LoadBreakers(store.get(), engine.get()).ok());
    EXPECT_TRUE(LoadPools(store.get(), engine.get()).ok());
    EXPECT_TRUE(LoadCache(store.get(), engine.get()).ok());
    // Command steps too: a worker's attempt, scripted the same way (heartbeat timeouts
    // apply to command steps only).
    engine->SetRunner(StepType::kShell, runner.get());
    engine->SetRunner(StepType::kCommand, runner.get());
    engine->AddObserver(&log);
  }

  std::string Run(const std::string& yaml, Json input = Json::object()) {
    std::string id = StartOnly(yaml, std::move(input));
    loop->RunUntilIdle();
    return id;
  }
  std::string StartOnly(const std::string& yaml, Json input = Json::object()) {
    StartRequest req;
    req.workflow = MustParse(yaml);
    if (!req.workflow) return "";
    auto resolved = ResolveInputs(*req.workflow, input, {});
    EXPECT_TRUE(resolved.ok()) << resolved.status().message();
    req.input = resolved.ok() ? *resolved : input;
    return Start(req);
  }
  // Starts `req` on the loop and returns its id ("" on failure, which it reports).
  std::string Start(const StartRequest& req) {
    std::string id;
    loop->Post([&] {
      auto r = engine->Start(req);
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      if (r.ok()) id = *r;
    });
    loop->RunReady();
    return id;
  }
  ExecutionRecord Execution(const std::string& id) { return *store->GetExecution(id); }
  StepRecord Step(const std::string& id, const std::string& step) {
    for (auto& s : *store->GetSteps(id))
      if (s.step_id == step) return s;
    ADD_FAILURE() << "no step " << step;
    return {};
  }
};

}  // namespace baton::testing
