// For the coordinator's tests: a worker channel that records what it is sent, a committer
// that holds batches until the test releases them, and a fixture that drives one
// coordinator over a memory store in virtual time (SimClock + SimEventLoop).
//
// Dispatch ids are the engine's "<execution>/<step>/<attempt>": Start("ex1") dispatches
// "ex1/download/1" for command model.download in namespace "default".
#pragma once

#include <baton/event_loop.h>
#include <baton/memory_store.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/held_committer.h"
#include "workers/coordinator.h"

namespace baton::workers::testing {

inline constexpr TimeMs kStart = 1'767'607'200'000;
inline constexpr const char* kCommand = "model.download";

class TestChannel final : public WorkerChannel {
 public:
  std::vector<protocol::ServerMessage> sent;
  bool closed = false;

  void Send(const protocol::ServerMessage& m) override { sent.push_back(m); }
  void Close() override { closed = true; }

  template <class T>
  std::vector<T> All() const {
    std::vector<T> out;
    for (const auto& m : sent) {
      if (const T* x = std::get_if<T>(&m)) out.push_back(*x);
    }
    return out;
  }
  std::vector<protocol::Command> Commands() const { return All<protocol::Command>(); }
  std::vector<protocol::CommandCancel> Cancels() const { return All<protocol::CommandCancel>(); }
};

// Keeps every batch until Release(): then commits them in order (or, given an error,
// commits none and reports the error to each).
using HoldingCommitter = baton::testing::HeldCommitter;

// What the runner's callbacks reported for one dispatch.
struct Outcome {
  int started = 0;
  std::vector<std::pair<int, Json>> progress;
  std::vector<RunResult> done;
};

struct WorkerSpec {
  int capacity = 2;
  std::string node{};  // empty: the worker id
  std::vector<std::string> tags{};
  std::string ns = "default";
  std::string session{};  // the process's `sessionId`; empty sends none
};

struct DispatchSpec {
  int priority = 1;
  Json target{};  // the step's `target`, or null
};

class CoordinatorFixture {
 public:
  explicit CoordinatorFixture(CoordinatorOptions options = {}, bool hold_commits = false)
      : options_(options) {
    if (hold_commits) {
      auto holding = std::make_unique<HoldingCommitter>(store.get());
      holding_committer = holding.get();
      committer = std::move(holding);
    } else {
      committer = NewSyncCommitter(store.get());
    }
    NewCoordinator();
  }

  SimClock clock{kStart};
  SimEventLoop loop{&clock};
  std::unique_ptr<Store> store = NewMemoryStore();
  std::unique_ptr<Committer> committer;
  HoldingCommitter* holding_committer = nullptr;  // when built with hold_commits
  std::unique_ptr<Coordinator> coordinator;
  std::map<std::string, Outcome> outcomes;                 // by dispatch id
  std::vector<std::pair<std::string, std::string>> stale;  // (execution, step) reported

  // A coordinator as a restarted process builds it: fresh, then Load() of the store.
  void Restart() {
    NewCoordinator();
    ASSERT_TRUE(coordinator->Load(store.get()).ok());
  }

  // ---- virtual time ----
  TimeMs now() const { return clock.Now(); }
  // Runs every timer due up to `t` at its own time, then what they posted, and leaves the
  // clock at `t`.
  void RunUntil(TimeMs t) {
    loop.RunUntilIdle(t);
    if (clock.Now() < t) clock.Set(t);
    loop.RunReady();
  }
  // `workers` send a heartbeat now and then every heartbeat_interval until `t` (after the
  // timers due at that time); the others stay silent. The clock ends at `t`.
  void HeartbeatsUntil(const std::vector<std::string>& workers, TimeMs t) {
    for (TimeMs at = now(); at <= t; at += options_.heartbeat_interval.count()) {
      RunUntil(at);
      for (const std::string& w : workers) EXPECT_TRUE(Heartbeat(w).ok()) << w;
    }
    RunUntil(t);
  }

  // ---- the worker side ----
  std::shared_ptr<TestChannel> Connect(const std::string& id, WorkerSpec spec = {}) {
    auto ch = std::make_shared<TestChannel>();
    EXPECT_TRUE(Register(id, spec, ch).ok()) << id;
    loop.RunReady();
    return ch;
  }
  Result<protocol::Registered> Register(const std::string& id, const WorkerSpec& spec,
                                        std::shared_ptr<TestChannel> ch) {
    protocol::Register r;
    r.worker_id = id;
    r.node_id = spec.node;
    r.capacity = spec.capacity;
    r.commands = {kCommand};
    r.tags = spec.tags;
    r.session_id = spec.session;
    return coordinator->Register(spec.ns, r, std::move(ch));
  }
  Status Send(const std::string& worker, const protocol::WorkerMessage& m) {
    Status s = coordinator->OnMessage(worker, m);
    loop.RunReady();
    return s;
  }
  Status Heartbeat(const std::string& worker, bool draining = false) {
    return Send(worker, protocol::Heartbeat{0, 2,
                                            draining ? protocol::WorkerStatus::kDraining
                                                     : protocol::WorkerStatus::kOnline});
  }
  Status Ack(const std::string& worker, const std::string& assignment, bool accepted = true) {
    protocol::CommandAck m;
    m.assignment_id = assignment;
    m.status = accepted ? protocol::AckStatus::kAccepted : protocol::AckStatus::kRejected;
    return Send(worker, m);
  }
  Status Progress(const std::string& worker, const std::string& assignment, int progress,
                  Json checkpoint = nullptr, Json data = nullptr) {
    protocol::CommandProgress m;
    m.assignment_id = assignment;
    m.progress = progress;
    m.checkpoint = std::move(checkpoint);
    m.data = std::move(data);
    return Send(worker, m);
  }
  Status Succeed(const std::string& worker, const std::string& assignment,
                 Json output = Json{{"ok", 1}}) {
    return Send(worker, protocol::CommandResult::Success(assignment, std::move(output)));
  }
  Status Fail(const std::string& worker, const std::string& assignment,
              protocol::CommandError error) {
    return Send(worker, protocol::CommandResult::Failure(assignment, std::move(error)));
  }

  // ---- the engine side ----
  static std::string DispatchId(const std::string& execution) { return execution + "/download/1"; }
  RunRequest Request(const std::string& execution, const DispatchSpec& spec = {}) const {
    RunRequest req;
    req.execution_id = execution;
    req.step_id = "download";
    req.assignment_id = DispatchId(execution);
    req.type = StepType::kCommand;
    req.ns = "default";
    req.priority = spec.priority;
    req.step_index = 2;
    req.timeout = Duration(600'000);
    Json rendered = {{"command", kCommand}, {"resource", "llama-3-8b"}, {"data", {{"url", "u"}}}};
    if (!spec.target.is_null()) rendered["target"] = spec.target;
    req.spec = MakeSpec(std::move(rendered));
    return req;
  }
  RunCallbacks Callbacks(const std::string& dispatch_id) {
    RunFunctions cb;
    cb.on_started = [this, dispatch_id] { ++outcomes[dispatch_id].started; };
    cb.on_progress = [this, dispatch_id](int p, Json data) {
      outcomes[dispatch_id].progress.emplace_back(p, std::move(data));
    };
    cb.on_done = [this, dispatch_id](RunResult r) {
      outcomes[dispatch_id].done.push_back(std::move(r));
    };
    return cb;
  }
  // Runner::Start of execution's download step; returns the dispatch id.
  std::string Start(const std::string& execution, const DispatchSpec& spec = {}) {
    return Run(&Runner::Start, execution, spec);
  }
  // Runner::Prepare of execution's download step, in the engine's turn that writes
  // `batch`; returns the dispatch id. (The engine then commits the batch: CommitEngine.)
  std::string Prepare(const std::string& execution, WriteBatch& batch,
                      const DispatchSpec& spec = {}) {
    RunRequest req = Request(execution, spec);
    coordinator->runner()->Prepare(req, batch);
    loop.RunReady();
    return req.assignment_id;
  }
  void CommitEngine(const WriteBatch& batch) { ASSERT_TRUE(store->Commit(batch).ok()); }
  void Cancel(const std::string& dispatch_id) {
    coordinator->runner()->Cancel(dispatch_id);
    loop.RunReady();
  }
  // Start(), and the worker it went to accepts it.
  std::string StartAccepted(const std::string& execution) {
    const std::string id = Start(execution);
    EXPECT_TRUE(Ack(Stored(id).worker_id, id).ok()) << id;
    return id;
  }
  // Runner::Reattach, as the engine's recovery does after a restart.
  std::string Reattach(const std::string& execution, const DispatchSpec& spec = {}) {
    return Run(&Runner::Reattach, execution, spec);
  }
  // The dispatch's single on_done (a failure when there is none, or more than one).
  RunResult Done(const std::string& dispatch_id) {
    const std::vector<RunResult>& done = outcomes[dispatch_id].done;
    EXPECT_EQ(done.size(), 1u) << dispatch_id;
    return done.empty() ? RunResult{Status("NONE", "no on_done"), {}, {}, -1, {}} : done.back();
  }
  bool IsDone(const std::string& dispatch_id) { return !outcomes[dispatch_id].done.empty(); }

  // ---- what the registry and the store say ----
  WorkerState StateOf(const std::string& worker) const {
    const WorkerEntry* w = coordinator->registry().Find(worker);
    EXPECT_NE(w, nullptr) << worker;
    return w == nullptr ? WorkerState::kOffline : w->state;
  }
  AssignmentRecord Stored(const std::string& dispatch_id) const {
    Result<AssignmentRecord> a = store->GetAssignment(dispatch_id);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? *a : AssignmentRecord{};
  }
  std::string StoredWorkerStatus(const std::string& worker) const {
    for (const WorkerRecord& w : *store->ListWorkers("")) {
      if (w.id == worker) return w.status;
    }
    return "(not stored)";
  }
  // Oldest first.
  std::vector<ReassignmentRecord> Moves(const std::string& dispatch_id) const {
    ReassignmentFilter f;
    f.dispatch_id = dispatch_id;
    std::vector<ReassignmentRecord> out = *store->ListReassignments(f);
    std::reverse(out.begin(), out.end());
    return out;
  }

 private:
  std::string Run(void (Runner::*how)(const RunRequest&, RunCallbacks),
                  const std::string& execution, const DispatchSpec& spec) {
    RunRequest req = Request(execution, spec);
    (coordinator->runner()->*how)(req, Callbacks(req.assignment_id));
    loop.RunReady();
    return req.assignment_id;
  }
  void NewCoordinator() {
    coordinator.reset();
    coordinator = std::make_unique<Coordinator>(&loop, committer.get(), options_);
    coordinator->SetStaleHandler([this](const std::string& execution, const std::string& step,
                                        Json) { stale.emplace_back(execution, step); });
  }

  CoordinatorOptions options_;
};

}  // namespace baton::workers::testing
