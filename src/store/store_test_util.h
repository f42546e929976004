// Helpers shared by the store tests (header-only; not part of the library).
#pragma once

#include <baton/store.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

namespace baton::testing {

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "baton-store-XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    EXPECT_NE(made, nullptr) << "mkdtemp failed";
    path_ = tmpl;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// prefix + n. (Spelled out because `"e" + std::to_string(n)` trips GCC 12's false
// -Wrestrict positive at -O3.)
inline std::string Id(std::string_view prefix, int64_t n) {
  std::string out(prefix);
  out += std::to_string(n);
  return out;
}

inline EventRecord Event(const std::string& execution, int64_t seq, std::string type = "test",
                         std::string step = "") {
  EventRecord e;
  e.execution_id = execution;
  e.seq = seq;
  e.type = std::move(type);
  e.step_id = std::move(step);
  e.data = Json{{"seq", seq}};
  e.time = 1000 + seq;
  e.attempt = static_cast<int>(seq % 3);  // round-trips like every other field
  return e;
}

inline ExecutionRecord Execution(const std::string& id, ExecutionStatus status, TimeMs created_at,
                                 const std::string& workflow = "wf") {
  ExecutionRecord e;
  e.id = id;
  e.workflow = workflow;
  e.status = status;
  e.created_at = created_at;
  e.definition = std::make_shared<const std::string>(Json{{"name", workflow}}.dump());
  return e;
}

inline StepRecord Step(const std::string& execution, const std::string& step,
                       StepStatus status = StepStatus::kPending, int index = 0) {
  StepRecord s;
  s.execution_id = execution;
  s.step_id = step;
  s.status = status;
  s.index = index;
  return s;
}

inline AttemptRecord Attempt(const std::string& execution, const std::string& step, int attempt = 1,
                             StepStatus status = StepStatus::kRunning) {
  AttemptRecord a;
  a.execution_id = execution;
  a.step_id = step;
  a.attempt = attempt;
  a.status = status;
  return a;
}

// A dead letter of `step` of `execution`, appended (id 0).
inline DeadLetterRecord DeadLetter(const std::string& execution, const std::string& step,
                                   Json input, Json errors, TimeMs created_at) {
  DeadLetterRecord d;
  d.execution_id = execution;
  d.step_id = step;
  d.input = std::move(input);
  d.errors = std::move(errors);
  d.created_at = created_at;
  return d;
}

// A worker; an assignment (its first placement, no checkpoint) and a reassignment (no
// checkpoint) of execution ex1's step "train" in namespace team-a.
inline WorkerRecord Worker(const std::string& ns, const std::string& id) {
  WorkerRecord w;
  w.id = id;
  w.ns = ns;
  w.node = "node-" + id;
  w.host = "10.0.0.7";
  w.version = "0.3.1";
  w.capacity = 4;
  w.commands = {"train", "evaluate"};
  w.tags = {"gpu", "a100"};
  w.status = "ONLINE";
  w.session = "process-" + id;
  w.registered_at = 100;
  w.last_heartbeat = 150;
  w.updated_at = 150;
  return w;
}

inline AssignmentRecord Assignment(const std::string& dispatch_id, TimeMs created,
                                   const std::string& worker = "w1",
                                   const std::string& status = "running",
                                   const std::string& execution = "ex1") {
  AssignmentRecord a;
  a.dispatch_id = dispatch_id;
  a.id = dispatch_id;
  a.ns = "team-a";
  a.execution_id = execution;
  a.step_id = "train";
  a.attempt = 1;
  a.command = "train";
  a.worker_id = worker;
  a.status = status;
  a.created_at = created;
  a.updated_at = created;
  return a;
}

inline ReassignmentRecord Reassignment(const std::string& id, const std::string& dispatch_id,
                                       TimeMs at, const std::string& from, const std::string& to) {
  ReassignmentRecord r;
  r.id = id;
  r.ns = "team-a";
  r.dispatch_id = dispatch_id;
  r.assignment_id = dispatch_id + ".r1";
  r.execution_id = "ex1";
  r.step_id = "train";
  r.from_worker = from;
  r.to_worker = to;
  r.reason = "worker_unhealthy";
  r.at = at;
  return r;
}

}  // namespace baton::testing
