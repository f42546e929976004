// The `baton` command from the outside: help, exit codes, analyze, Ctrl-C.
#include "support/process_util.h"

#include <baton/json.h>

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <thread>

namespace baton::testing {
namespace {

namespace fs = std::filesystem;

// The pid a step wrote to `file`, waiting (bounded) for it; 0 if it never came.
pid_t WaitForPidFile(const std::string& file) {
  for (int i = 0; i < 400 && ReadFile(file).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  const std::string text = ReadFile(file);
  return text.empty() ? 0 : std::stoi(text);
}

// Waits (bounded) until `pid` is gone; a zombie (killed, not yet reaped by init) counts.
bool WaitGone(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    std::string stat = ReadFile("/proc/" + std::to_string(pid) + "/stat");
    if (kill(pid, 0) != 0 || stat.find(") Z ") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

TEST(Cli, EveryCommandHasHelp) {
  for (const char* cmd : {"run", "resume", "validate", "analyze"}) {
    ProcessResult r = RunProcess({BatonBin(), cmd, "--help"});
    EXPECT_EQ(r.exit_code, 0) << cmd;
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << cmd << ": " << r.out;
  }
  ProcessResult top = RunProcess({BatonBin(), "--help"});
  EXPECT_EQ(top.exit_code, 0);
  for (const char* cmd : {"run", "resume", "validate", "analyze"}) {
    EXPECT_NE(top.out.find(cmd), std::string::npos);
  }
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(RunProcess({BatonBin()}).exit_code, 2);
  EXPECT_EQ(RunProcess({BatonBin(), "run"}).exit_code, 2);
  EXPECT_EQ(RunProcess({BatonBin(), "frobnicate"}).exit_code, 2);
  ProcessResult missing = RunProcess({BatonBin(), "run", "/nonexistent/wf.yaml", "--ephemeral"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("/nonexistent/wf.yaml"), std::string::npos) << missing.err;
}

TEST(Cli, AnUnreadableCaFileIsAUsageError) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/wf.yaml", "name: ca\nsteps:\n  - {id: a, type: noop}\n");
  ProcessResult r = RunProcess({BatonBin(), "run", dir + "/wf.yaml", "--ephemeral"}, "",
                               {"BATON_CA_FILE=" + dir + "/missing.pem"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("BATON_CA_FILE: cannot read CA file '" + dir + "/missing.pem'"),
            std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

// An ephemeral run without --json writes no step or attempt records (nothing reads them
// back: EngineOptions::write_step_rows); it must still retry, report every event and end
// as a run that keeps them does.
TEST(Cli, AnEphemeralRunRetriesAndReportsEveryEvent) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/wf.yaml",
            "name: flaky\nsteps:\n  - {id: prep, type: noop}\n  - id: once\n"
            "    type: shell\n    run: \"test -f " +
                dir + "/marker || { touch " + dir +
                "/marker; exit 3; }\"\n    depends_on: [prep]\n"
                "    retry: {max_attempts: 2, initial_delay: 10ms}\n");
  ProcessResult r = RunProcess({BatonBin(), "run", dir + "/wf.yaml", "--ephemeral"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"step.completed prep attempt=1", "step.retrying once attempt=1",
                           "EXIT_NONZERO: exited with code 3", "step.started once attempt=2",
                           "step.completed once attempt=2", "execution.completed"}) {
    EXPECT_NE(r.err.find(line), std::string::npos) << line << "\n" << r.err;
  }
  fs::remove_all(dir);
}

TEST(Cli, AnalyzeShowsLayersCriticalPathAndSpeedup) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/wf.yaml", R"(
name: diamond
steps:
  - {id: a, type: wait, duration: 1s}
  - {id: b, type: wait, duration: 4s, depends_on: [a]}
  - {id: c, type: wait, duration: 2s, depends_on: [a]}
  - {id: d, type: wait, duration: 1s, depends_on: [b, c]}
)");
  ProcessResult r = RunProcess({BatonBin(), "analyze", dir + "/wf.yaml", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["layers"], Json::parse(R"([["a"], ["b", "c"], ["d"]])"));
  EXPECT_EQ(j["critical_path"], Json::parse(R"(["a", "b", "d"])"));
  EXPECT_EQ(j["max_parallelism"], 2);
  EXPECT_NEAR(j["estimated_speedup"].get<double>(), 8.0 / 6.0, 1e-6);
  ProcessResult text = RunProcess({BatonBin(), "analyze", dir + "/wf.yaml"});
  EXPECT_NE(text.out.find("a -> b -> d"), std::string::npos) << text.out;
  fs::remove_all(dir);
}

// Issue 16: the speedup ignored --parallel and did not say what it was made of. Four
// independent shell steps of 1 s each (a tenth of their timeout) and a wait step of 3 s
// that takes no slot.
TEST(Cli, AnalyzeEstimatesWithTheParallelSlotsAndSaysHow) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/wf.yaml", R"(
name: four
steps:
  - {id: a, type: shell, run: 'true', timeout: 10s}
  - {id: b, type: shell, run: 'true', timeout: 10s}
  - {id: c, type: shell, run: 'true', timeout: 10s}
  - {id: d, type: shell, run: 'true', timeout: 10s}
  - {id: pause, type: wait, duration: 3s}
)");
  auto analyze = [&](const char* parallel) {
    ProcessResult r =
        RunProcess({BatonBin(), "analyze", dir + "/wf.yaml", "--json", "--parallel", parallel});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.exit_code == 0 ? Json::parse(r.out) : Json::object();
  };
  Json one = analyze("1");  // the four shell steps one after another; the wait beside them
  EXPECT_EQ(one["parallel"], 1);
  EXPECT_EQ(one["sequential_estimate_ms"], 7000);
  EXPECT_EQ(one["parallel_estimate_ms"], 4000);
  EXPECT_NEAR(one["estimated_speedup"].get<double>(), 7.0 / 4.0, 1e-6);
  Json two = analyze("2");  // two rounds of two, within the wait's 3 s
  EXPECT_EQ(two["parallel_estimate_ms"], 3000);
  Json four = analyze("4");
  EXPECT_EQ(four["parallel_estimate_ms"], 3000);
  EXPECT_NEAR(four["unbounded_speedup"].get<double>(), 7.0 / 3.0, 1e-6);
  ProcessResult text = RunProcess({BatonBin(), "analyze", dir + "/wf.yaml", "-p", "1"});
  EXPECT_NE(text.out.find("with --parallel 1: 4s, an estimated speedup of 1.75x"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("Estimates: a wait step's duration, else a tenth of its timeout"),
            std::string::npos)
      << text.out;
  fs::remove_all(dir);
}

TEST(Cli, InterruptCancelsCleanlyAndLeavesNoProcess) {
  std::string dir = MakeTempDir();
  // The step starts a background child too: the whole process group must go.
  WriteFile(dir + "/wf.yaml", R"(
name: long
steps:
  - {id: sleeper, type: shell, cwd: ")" +
                                  dir + R"(", run: 'sleep 300 & echo $! > child.pid; wait'}
  - {id: never, type: noop, depends_on: [sleeper]}
)");
  std::string db = dir + "/state.db";
  pid_t pid =
      StartProcess({BatonBin(), "run", dir + "/wf.yaml", "--db", db, "--json"}, dir + "/out.log");
  ASSERT_GT(pid, 0);
  const pid_t child = WaitForPidFile(dir + "/child.pid");
  ASSERT_GT(child, 0) << ReadFile(dir + "/out.log");
  kill(pid, SIGINT);
  EXPECT_EQ(WaitProcess(pid), 1);
  std::string out = ReadFile(dir + "/out.log");
  EXPECT_NE(out.find("\"status\": \"cancelled\""), std::string::npos) << out;
  // SIGTERM went to the group; give the kernel a moment to reap, bounded.
  const bool gone = WaitGone(child);
  EXPECT_TRUE(gone) << "background child " << child << " outlived the cancelled step";
  fs::remove_all(dir);
}

// Regression (issue 11, defect 8): a step that ignores SIGTERM, then two Ctrl-Cs in quick
// succession: baton exited at once, leaving `sh` and `sleep` to PID 1 and the store
// saying `running`. The second signal kills the steps now and they are still recorded.
TEST(Cli, ASecondInterruptKillsTheStepsAndStillRecordsThem) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/wf.yaml", R"(
name: stubborn
steps:
  - {id: deaf, type: shell, cwd: ")" +
                                  dir +
                                  R"(", run: 'trap "" TERM; sleep 300 & echo $! > child.pid; wait'}
)");
  std::string db = dir + "/state.db";
  pid_t pid =
      StartProcess({BatonBin(), "run", dir + "/wf.yaml", "--db", db, "--json"}, dir + "/out.log");
  ASSERT_GT(pid, 0);
  const pid_t child = WaitForPidFile(dir + "/child.pid");
  ASSERT_GT(child, 0) << ReadFile(dir + "/out.log");
  kill(pid, SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  kill(pid, SIGINT);
  const int code = WaitProcess(pid);
  std::string out = ReadFile(dir + "/out.log");
  EXPECT_EQ(code, 1) << out;  // cancelled, not killed mid-way (130)
  EXPECT_NE(out.find("\"status\": \"cancelled\""), std::string::npos) << out;
  const bool gone = WaitGone(child);
  EXPECT_TRUE(gone) << "the step's child " << child << " outlived baton";
  if (!gone) kill(child, SIGKILL);
  ProcessResult resume = RunProcess({BatonBin(), "resume", "--db", db});
  EXPECT_NE(resume.err.find("nothing to resume"), std::string::npos) << resume.err;
  fs::remove_all(dir);
}

TEST(Cli, ResumeWithNothingToDoSaysSo) {
  std::string dir = MakeTempDir();
  ProcessResult r = RunProcess({BatonBin(), "resume", "--db", dir + "/empty.db"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("nothing to resume"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// Issue 16: `baton resume ID` of an unknown id said only "baton: execution ID".
TEST(Cli, ResumeOfAnUnknownExecutionNamesItAndTheDatabase) {
  std::string dir = MakeTempDir();
  ProcessResult r = RunProcess({BatonBin(), "resume", "nosuchid", "--db", dir + "/empty.db"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("baton resume: no execution 'nosuchid' in " + dir + "/empty.db"),
            std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

// Issue 16: `baton foo` said "A subcommand is required".
TEST(Cli, AnUnknownCommandIsNamedWithTheCommandsThereAre) {
  ProcessResult r = RunProcess({BatonBin(), "frobnicate", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("baton: unknown command 'frobnicate'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("run, resume, validate, analyze"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("server"), std::string::npos) << r.err;
  // A known command still parses as before.
  EXPECT_EQ(RunProcess({BatonBin(), "validate", "--help"}).exit_code, 0);
  // One level down too: `baton token foo` said "A subcommand is required".
  ProcessResult sub = RunProcess({BatonBin(), "token", "frobnicate"});
  EXPECT_EQ(sub.exit_code, 2);
  EXPECT_NE(sub.err.find("baton token: unknown command 'frobnicate'"), std::string::npos)
      << sub.err;
  EXPECT_NE(sub.err.find("create"), std::string::npos) << sub.err;
  EXPECT_NE(sub.err.find("Run 'baton token --help'"), std::string::npos) << sub.err;
  // A command's positional argument is not a command (`baton status ID`).
  ProcessResult status = RunProcess(
      {BatonBin(), "status", "nosuchid", "--server", "http://127.0.0.1:1", "--token", "bt_x"});
  EXPECT_EQ(status.err.find("unknown command"), std::string::npos) << status.err;
}

// Issue 16: a misspelt --input ran silently with the declared input's default.
TEST(Cli, AnUndeclaredInputIsRefusedNamingTheDeclaredOnes) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/wf.yaml",
            "name: w\ninputs:\n  model: {type: string, default: a}\n"
            "steps:\n  - {id: a, type: noop}\n");
  ProcessResult r =
      RunProcess({BatonBin(), "run", dir + "/wf.yaml", "--ephemeral", "--input", "modle=x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("input 'modle' is not declared by workflow 'w' (it declares: model)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(RunProcess({BatonBin(), "run", dir + "/wf.yaml", "--ephemeral", "--input", "model=x"})
                .exit_code,
            0);
  // A workflow that declares no inputs takes any.
  WriteFile(dir + "/free.yaml", "name: free\nsteps:\n  - {id: a, type: noop}\n");
  EXPECT_EQ(RunProcess({BatonBin(), "run", dir + "/free.yaml", "--ephemeral", "--input", "any=1"})
                .exit_code,
            0);
  fs::remove_all(dir);
}

// Issue 16: `validate` accepted heartbeat_timeout on a shell step, which then always failed.
TEST(Cli, ValidateRefusesAHeartbeatTimeoutOnAShellStep) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/wf.yaml",
            "name: w\nsteps:\n  - {id: a, type: shell, run: x, heartbeat_timeout: 5s}\n");
  ProcessResult r = RunProcess({BatonBin(), "validate", dir + "/wf.yaml"});
  EXPECT_EQ(r.exit_code, 2);
  const std::string said = r.out + r.err;
  EXPECT_NE(said.find("wf.yaml:3"), std::string::npos) << said;
  EXPECT_NE(said.find("heartbeat_timeout"), std::string::npos) << said;
  EXPECT_NE(said.find("applies to command steps"), std::string::npos) << said;
  fs::remove_all(dir);
}

TEST(Cli, RunJsonHasTheDocumentedShape) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/wf.yaml", R"(
name: shape
steps:
  - {id: a, name: Say x, type: shell, run: [echo, '{"x": 1}']}
output: {x: "{{ steps.a.output.x }}"}
)");
  ProcessResult r = RunProcess({BatonBin(), "run", dir + "/wf.yaml", "--ephemeral", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json j = Json::parse(r.out);
  for (const char* k : {"id", "workflow", "status", "progress", "output", "error", "steps"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_EQ(j["output"], (Json{{"x", 1}}));
  EXPECT_EQ(j["progress"], 100);
  const Json& s = j["steps"][0];
  EXPECT_EQ(s.value("name", ""), "Say x");  // as the server's detail has it
  for (const char* k :
       {"id", "status", "attempts", "output", "error", "started_at", "completed_at"}) {
    EXPECT_TRUE(s.contains(k)) << k;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace baton::testing
