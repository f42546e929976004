// Crash recovery through the real binary: kill -9 `baton run` at named points, then
// `baton resume`, and check the invariants in the database:
//   every step completed exactly once in the store, the execution reached a terminal
//   state, and the event log is gap-free.
#include "support/process_util.h"

#include <baton/sqlite_store.h>
#include <baton/store.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <map>
#include <thread>

namespace baton::testing {
namespace {

namespace fs = std::filesystem;

// Every step's command sleeps 50 ms so that its start and its end reach the engine in
// separate turns (reports that arrive together share one, Engine::Impl::Deliver): the
// run then has at least 7 batches and commits (b's and c's starts may share one), and
// every crash point below is reached unless the engine stalls for 50 ms. The sleeps time
// nothing the test checks; without them a fast step's start and end could share a turn
// on a loaded machine, and point 7 was once never reached.
const char* kWorkflow = R"(
name: crashy
defaults:
  timeout: 30s
steps:
  - {id: a, type: shell, run: [sh, -c, 'sleep 0.05; echo "a $BATON_ATTEMPT" >> effects.log; echo "{\"n\": 1}"']}
  - {id: b, type: shell, run: [sh, -c, 'touch started_b; sleep 0.3; echo "b $BATON_ATTEMPT" >> effects.log; echo "{\"n\": 2}"'], depends_on: [a]}
  - {id: c, type: shell, run: [sh, -c, 'sleep 0.05; echo "c $BATON_ATTEMPT" >> effects.log; echo "{\"n\": 3}"'], depends_on: [a]}
  - {id: d, type: shell, run: [sh, -c, 'sleep 0.05; echo "d $1" >> effects.log', d, "{{ steps.b.output.n }}"], depends_on: [b, c]}
  - {id: e, type: noop, depends_on: [d], with: {sum: "{{ steps.c.output.n }}"}}
output: {n: "{{ steps.e.output.sum }}"}
)";

class CrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    WriteFile(dir_ + "/wf.yaml", kWorkflow);
    db_ = dir_ + "/state.db";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<std::string> RunArgv() {
    return {BatonBin(), "run", dir_ + "/wf.yaml", "--db", db_, "--json", "-p", "2"};
  }

  // Resumes until nothing is left, then checks the invariants.
  void ResumeAndCheck() {
    ProcessResult r = RunProcess({BatonBin(), "resume", "--db", db_, "--json"}, dir_);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    CheckInvariants();
  }

  void CheckInvariants() {
    auto store = OpenSqliteStore(db_);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto execs = (*store)->ListExecutions({});
    ASSERT_TRUE(execs.ok());
    ASSERT_EQ(execs->size(), 1u);
    const ExecutionRecord& ex = execs->front();
    EXPECT_EQ(ex.status, ExecutionStatus::kCompleted) << ex.error.dump();
    EXPECT_EQ(ex.output, (Json{{"n", 3}}));
    auto steps = *(*store)->GetSteps(ex.id);
    ASSERT_EQ(steps.size(), 5u);
    for (const auto& s : steps) EXPECT_EQ(s.status, StepStatus::kCompleted) << s.step_id;
    std::map<std::string, int> completed_attempts;
    for (const auto& a : *(*store)->GetAttempts(ex.id)) {
      if (a.status == StepStatus::kCompleted) ++completed_attempts[a.step_id];
    }
    auto events = *(*store)->GetEvents(ex.id, 0, 1'000'000);
    std::map<std::string, int> completed_events;
    int ends = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      EXPECT_EQ(events[i].seq, static_cast<int64_t>(i + 1)) << "gap in the event log";
      if (events[i].type == "step.completed") ++completed_events[events[i].step_id];
      if (events[i].type == "execution.completed") ++ends;
    }
    EXPECT_EQ(ends, 1);
    for (const char* id : {"a", "b", "c", "d", "e"}) {
      EXPECT_EQ(completed_attempts[id], 1) << id;
      EXPECT_EQ(completed_events[id], 1) << id;
    }
  }

  std::string dir_;
  std::string db_;
};

TEST_F(CrashTest, KillWhileAStepRuns) {
  pid_t pid = StartProcess(RunArgv(), dir_ + "/run.log", {}, dir_);
  ASSERT_GT(pid, 0);
  // Wait (bounded) until step b's process is running, then kill -9 the engine.
  for (int i = 0; i < 400 && !fs::exists(dir_ + "/started_b"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(fs::exists(dir_ + "/started_b")) << ReadFile(dir_ + "/run.log");
  kill(pid, SIGKILL);
  EXPECT_EQ(WaitProcess(pid), 128 + SIGKILL);
  ResumeAndCheck();
  auto store = OpenSqliteStore(db_);
  auto ex = (*(*store)->ListExecutions({})).front();
  int restarts = 0;
  for (const auto& a : *(*store)->GetAttempts(ex.id)) {
    restarts += a.error.is_object() && a.error.value("code", "") == "ENGINE_RESTART";
  }
  EXPECT_GE(restarts, 1);
}

class CrashAtPoint : public CrashTest,
                     public ::testing::WithParamInterface<std::pair<const char*, int>> {};

TEST_P(CrashAtPoint, ResumeCompletesEveryStepExactlyOnce) {
  auto [point, n] = GetParam();
  std::string spec = std::string(point) + ":" + std::to_string(n);
  ProcessResult r = RunProcess(RunArgv(), dir_, {"BATON_CRASH_AT=" + spec});
  EXPECT_EQ(r.exit_code, 128 + SIGKILL) << "never reached " << spec << "\n" << r.err;
  ResumeAndCheck();
}

// Killed inside the very first transaction: the execution never began, so there is
// nothing to resume, and nothing half-written either.
TEST_F(CrashTest, KilledBeforeTheFirstCommitLeavesNothing) {
  ProcessResult r = RunProcess(RunArgv(), dir_, {"BATON_CRASH_AT=store.before_commit:1"});
  EXPECT_EQ(r.exit_code, 128 + SIGKILL);
  {
    auto store = OpenSqliteStore(db_);  // closed before resume: one owner at a time
    ASSERT_TRUE(store.ok());
    EXPECT_TRUE((*(*store)->ListExecutions({})).empty());
  }
  ProcessResult resume = RunProcess({BatonBin(), "resume", "--db", db_}, dir_);
  EXPECT_EQ(resume.exit_code, 0);
  EXPECT_NE(resume.err.find("nothing to resume"), std::string::npos) << resume.err;
}

// Regression (issue 11, defect 7): `baton resume` on the database of a running `baton
// run` ran its running step a second time, concurrently, and the first process then
// died on a UNIQUE constraint. One process owns a database file: the second is refused
// at once, naming the holder, and the first finishes alone.
TEST_F(CrashTest, ASecondProcessOnTheSameDatabaseIsRefused) {
  // The step holds until the test opens its gate, so the first process surely owns the
  // database while the others try (however slow the machine or the sanitizer).
  WriteFile(dir_ + "/held.yaml", R"(
name: held
steps:
  - {id: hold, type: shell, run: 'echo "hold $BATON_ATTEMPT" >> effects.log; touch started; while [ ! -e gate ]; do sleep 0.05; done'}
)");
  pid_t pid = StartProcess({BatonBin(), "run", dir_ + "/held.yaml", "--db", db_, "--json"},
                           dir_ + "/run.log", {}, dir_);
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 800 && !fs::exists(dir_ + "/started"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ASSERT_TRUE(fs::exists(dir_ + "/started")) << ReadFile(dir_ + "/run.log");
  ProcessResult resume = RunProcess({"timeout", "60", BatonBin(), "resume", "--db", db_}, dir_);
  EXPECT_NE(resume.exit_code, 0);
  EXPECT_NE(resume.err.find("in use by another baton process (pid " + std::to_string(pid)),
            std::string::npos)
      << resume.err;
  // `timeout`: a server that wrongly started would serve forever.
  ProcessResult server = RunProcess(
      {"timeout", "60", BatonBin(), "server", "--listen", "127.0.0.1:0", "--db", db_}, dir_);
  EXPECT_NE(server.exit_code, 0);
  EXPECT_NE(server.err.find("in use by another baton process"), std::string::npos) << server.err;
  WriteFile(dir_ + "/gate", "");
  EXPECT_EQ(WaitProcess(pid), 0) << ReadFile(dir_ + "/run.log");
  // The step ran once: the refused processes dispatched nothing.
  EXPECT_EQ(ReadFile(dir_ + "/effects.log"), "hold 1\n");
}

INSTANTIATE_TEST_SUITE_P(Points, CrashAtPoint,
                         ::testing::Values(std::make_pair("engine.after_commit", 2),
                                           std::make_pair("engine.after_commit", 4),
                                           std::make_pair("engine.after_commit", 7),
                                           std::make_pair("store.before_commit", 2),
                                           std::make_pair("store.before_commit", 3),
                                           std::make_pair("store.before_commit", 6)),
                         [](const auto& param_info) {
                           std::string n = std::string(param_info.param.first) + "_" +
                                           std::to_string(param_info.param.second);
                           for (char& c : n) c = isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return n;
                         });

}  // namespace
}  // namespace baton::testing
