// Result caching through `baton run --db`: the cache outlives the run, and a kill -9 after
// the cached step completed loses neither its result nor its entry.
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

int Lines(const std::string& file) {
  int n = 0;
  for (char c : ReadFile(file)) n += c == '\n';
  return n;
}

// `extract` counts its runs in `runs` and prints JSON; `after` optionally hangs.
std::string Workflow(const std::string& dir, const std::string& after) {
  return "name: etl\n"
         "steps:\n"
         "  - id: extract\n"
         "    type: shell\n"
         "    cwd: " +
         dir +
         "\n"
         "    run: 'echo run >> runs; echo \"{\\\"rows\\\": 42}\"'\n"
         "    cache: {ttl: 1h}\n"
         "  - id: after\n"
         "    type: shell\n"
         "    cwd: " +
         dir + "\n    depends_on: [extract]\n    run: '" + after + "'\n";
}

Json StepOf(const Json& run, const std::string& id) {
  for (const Json& s : run["steps"]) {
    if (s["id"] == id) return s;
  }
  return Json();
}

TEST(CacheCli, RunWithADatabaseReusesTheCacheAcrossRuns) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/wf.yaml", Workflow(dir, "true"));
  const std::string db = dir + "/state.db";
  ProcessResult first = RunProcess({BatonBin(), "run", dir + "/wf.yaml", "--db", db, "--json"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  ProcessResult second = RunProcess({BatonBin(), "run", dir + "/wf.yaml", "--db", db, "--json"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(Lines(dir + "/runs"), 1);
  Json step = StepOf(Json::parse(second.out), "extract");
  EXPECT_EQ(step["status"], "cached") << second.out;
  EXPECT_EQ(step["output"]["rows"], 42);
  // --ephemeral has no cache to reuse: it runs again.
  ProcessResult fresh = RunProcess({BatonBin(), "run", dir + "/wf.yaml", "--ephemeral", "--json"});
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_EQ(Lines(dir + "/runs"), 2);
  fs::remove_all(dir);
}

TEST(CacheCli, AKill9AfterTheCachedStepKeepsItsEntry) {
  std::string dir = MakeTempDir();
  WriteFile(dir + "/wf.yaml", Workflow(dir, "echo $$ > after.pid; exec sleep 300"));
  const std::string db = dir + "/state.db";
  pid_t pid =
      StartProcess({BatonBin(), "run", dir + "/wf.yaml", "--db", db, "--json"}, dir + "/out.log");
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 400 && ReadFile(dir + "/after.pid").empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  const std::string sleeper = ReadFile(dir + "/after.pid");
  ASSERT_FALSE(sleeper.empty()) << ReadFile(dir + "/out.log");
  kill(pid, SIGKILL);
  WaitProcess(pid);
  kill(std::stoi(sleeper), SIGKILL);
  ASSERT_EQ(Lines(dir + "/runs"), 1);

  WriteFile(dir + "/wf.yaml", Workflow(dir, "true"));
  ProcessResult again = RunProcess({BatonBin(), "run", dir + "/wf.yaml", "--db", db, "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(StepOf(Json::parse(again.out), "extract")["status"], "cached") << again.out;
  EXPECT_EQ(Lines(dir + "/runs"), 1);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace baton::testing
