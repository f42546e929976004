// The scenario runner: every folder under tests/scenarios/ holds a workflow file and
// expect.json, the outcome it must have when run through the real `baton` binary.
//
// expect.json keys (all optional but exit_code):
//   command        "run" (default) | "validate" | "analyze"
//   args           extra arguments, e.g. ["--input", "model_id=m1"]
//   exit_code      the process exit code
//   status, error_code, output              of the execution (--json)
//   steps          {id: {status, attempts, output, error_code, error_contains}}
//   overlap        [[a, b], ...] pairs of steps whose run intervals overlap
//   before         [[a, b], ...] a completed before b started
//   stderr_contains / stdout_contains       substrings
//   stderr_lacks   substrings stderr must not have
#include "support/process_util.h"

#include <baton/json.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace baton::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> ScenarioNames() {
  std::vector<std::string> names;
  fs::path root = fs::path(SourceDir()) / "tests" / "scenarios";
  if (!fs::exists(root)) return names;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (entry.is_directory() && fs::exists(entry.path() / "expect.json")) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string WorkflowFile(const fs::path& dir) {
  for (const char* name : {"workflow.yaml", "workflow.yml", "workflow.json"}) {
    if (fs::exists(dir / name)) return (dir / name).string();
  }
  return (dir / "workflow.yaml").string();
}

const Json* FindStep(const Json& execution, const std::string& id) {
  for (const auto& s : execution["steps"]) {
    if (s["id"] == id) return &s;
  }
  return nullptr;
}

class Scenario : public ::testing::TestWithParam<std::string> {};

TEST_P(Scenario, HasExpectedOutcome) {
  fs::path dir = fs::path(SourceDir()) / "tests" / "scenarios" / GetParam();
  Json expect = Json::parse(ReadFile((dir / "expect.json").string()));
  std::string command = expect.value("command", "run");
  std::vector<std::string> argv = {BatonBin(), command, WorkflowFile(dir)};
  if (command == "run") {
    argv.insert(argv.end(), {"--json", "--ephemeral"});
  }
  for (const auto& a : expect.value("args", Json::array())) argv.push_back(a.get<std::string>());
  ProcessResult r = RunProcess(argv, dir.string());
  SCOPED_TRACE("stderr:\n" + r.err);

  EXPECT_EQ(r.exit_code, expect.value("exit_code", 0));
  for (const auto& s : expect.value("stderr_contains", Json::array())) {
    EXPECT_NE(r.err.find(s.get<std::string>()), std::string::npos) << "stderr lacks: " << s;
  }
  for (const auto& s : expect.value("stderr_lacks", Json::array())) {
    EXPECT_EQ(r.err.find(s.get<std::string>()), std::string::npos) << "stderr has: " << s;
  }
  for (const auto& s : expect.value("stdout_contains", Json::array())) {
    EXPECT_NE(r.out.find(s.get<std::string>()), std::string::npos) << "stdout lacks: " << s;
  }
  if (command != "run" || !(expect.contains("status") || expect.contains("steps"))) return;

  Json ex = Json::parse(r.out, nullptr, false);
  ASSERT_FALSE(ex.is_discarded()) << "stdout is not JSON:\n" << r.out;
  if (expect.contains("status")) {
    EXPECT_EQ(ex["status"], expect["status"]);
  }
  if (expect.contains("error_code")) {
    ASSERT_TRUE(ex["error"].is_object()) << ex.dump(2);
    EXPECT_EQ(ex["error"]["code"], expect["error_code"]);
  }
  if (expect.contains("output")) {
    EXPECT_EQ(ex["output"], expect["output"]);
  }
  const Json steps_want = expect.value("steps", Json::object());  // items() needs it alive
  for (const auto& [id, want] : steps_want.items()) {
    const Json* got = FindStep(ex, id);
    ASSERT_NE(got, nullptr) << "no step " << id;
    SCOPED_TRACE("step " + id + ": " + got->dump());
    if (want.contains("status")) {
      EXPECT_EQ((*got)["status"], want["status"]);
    }
    if (want.contains("attempts")) {
      EXPECT_EQ((*got)["attempts"], want["attempts"]);
    }
    if (want.contains("output")) {
      EXPECT_EQ((*got)["output"], want["output"]);
    }
    if (want.contains("error_code")) {
      if (want["error_code"].is_null()) {
        EXPECT_TRUE((*got)["error"].is_null());
      } else {
        ASSERT_TRUE((*got)["error"].is_object());
        EXPECT_EQ((*got)["error"]["code"], want["error_code"]);
      }
    }
    if (want.contains("error_contains")) {
      ASSERT_TRUE((*got)["error"].is_object());
      EXPECT_NE((*got)["error"]["message"].get<std::string>().find(want["error_contains"]),
                std::string::npos);
    }
  }
  auto interval = [&](const std::string& id) {
    const Json* s = FindStep(ex, id);
    EXPECT_NE(s, nullptr) << id;
    if (!s || (*s)["started_at"].is_null() || (*s)["completed_at"].is_null()) {
      return std::make_pair(std::string(), std::string());
    }
    // ISO times of one fixed width compare as strings.
    return std::make_pair((*s)["started_at"].get<std::string>(),
                          (*s)["completed_at"].get<std::string>());
  };
  for (const auto& pair : expect.value("overlap", Json::array())) {
    auto a = interval(pair[0]), b = interval(pair[1]);
    EXPECT_TRUE(a.first < b.second && b.first < a.second)
        << pair.dump() << " did not overlap: " << a.first << ".." << a.second << " vs " << b.first
        << ".." << b.second;
  }
  for (const auto& pair : expect.value("before", Json::array())) {
    auto a = interval(pair[0]), b = interval(pair[1]);
    EXPECT_LE(a.second, b.first) << pair.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Scenario, ::testing::ValuesIn(ScenarioNames()),
                         [](const auto& param_info) {
                           std::string n = param_info.param;
                           std::replace_if(
                               n.begin(), n.end(), [](char c) { return !isalnum(c); }, '_');
                           return n;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Scenario);

}  // namespace
}  // namespace baton::testing
