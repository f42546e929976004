// The dead-letter queue from outside: GET/POST/DELETE /api/v1/dlq... and `baton dlq`
// against the real server, including a replay that survives a kill -9.
#include "server/views.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace baton {
namespace {

using client::ApiClient;
using testing::MakeTempDir;
using testing::ProcessResult;
using testing::RunProcess;
using testing::ServerProcess;
using testing::WaitForExecutionStatus;
using testing::WaitUntil;

// `load` fails (exit 3) until the file `ready` exists; `report` needs it.
std::string Workflow(const std::string& ready) {
  return "name: ingest\nsteps:\n"
         "  - {id: fetch, type: noop}\n"
         "  - id: load\n"
         "    type: shell\n"
         "    run: ['sh', '-c', 'test -f \"$0\" || exit 3', '" +
         ready +
         "']\n"
         "    depends_on: [fetch]\n"
         "  - {id: report, type: noop, depends_on: [load]}\n";
}

class ServerDlq : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    ready_ = dir_ + "/ready";
    server_ = std::make_unique<ServerProcess>(dir_);
    ASSERT_TRUE(server_->ok()) << server_->log();
    auto r =
        server_->Admin().Send("POST", "/api/v1/workflows", Workflow(ready_), "application/yaml");
    ASSERT_TRUE(r.ok() && r->status == 201) << (r.ok() ? r->body : r.status().ToString());
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  // Runs `ingest` until it fails; its id.
  std::string FailedExecution() {
    auto r = server_->Admin().Call("POST", "/api/v1/executions", {{"workflow", "ingest"}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return "";
    std::string id = r->value("id", "");
    WaitForExecutionStatus(server_->Admin(), id, "failed");
    return id;
  }
  Json Dlq(const std::string& query = "") {
    auto r = server_->Admin().Call("GET", "/api/v1/dlq" + query);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Json();
  }
  int64_t EntryOf(const std::string& execution) {
    Json list = Dlq("?status=any&execution=" + execution);
    return list["entries"].empty() ? 0 : list["entries"].back()["id"].get<int64_t>();
  }
  void MakeReady() { std::ofstream(ready_) << "ok\n"; }
  ProcessResult Cli(std::vector<std::string> args) { return server_->Cli(std::move(args)); }

  std::string dir_, ready_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerDlq, ListsFiltersPagesAndCountsEntries) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(FailedExecution());

  Json list = Dlq();
  ASSERT_EQ(list["entries"].size(), 3u) << list.dump();
  const Json& e = list["entries"][0];
  EXPECT_EQ(e["status"], "open");
  EXPECT_EQ(e["execution_id"], ids[0]);
  EXPECT_EQ(e["workflow"], "ingest");
  EXPECT_EQ(e["version"], 1);
  EXPECT_EQ(e["step_id"], "load");
  EXPECT_EQ(e["code"], "EXIT_NONZERO");
  EXPECT_EQ(e["fingerprint"].get<std::string>().rfind("EXIT_NONZERO:", 0), 0u) << e.dump();
  EXPECT_EQ(e["errors"].size(), 1u);
  EXPECT_EQ(e["error"]["code"], "EXIT_NONZERO");
  EXPECT_EQ(e["input"]["run"][3], ready_);  // the resolved definition
  EXPECT_EQ(e["attempts"]["first"], 1);
  EXPECT_FALSE(e["first_failed_at"].get<std::string>().empty());
  EXPECT_TRUE(list["next_cursor"].is_null());

  EXPECT_EQ(Dlq("?step=load")["entries"].size(), 3u);
  EXPECT_EQ(Dlq("?step=fetch")["entries"].size(), 0u);
  EXPECT_EQ(Dlq("?workflow=other")["entries"].size(), 0u);
  EXPECT_EQ(Dlq("?code=EXIT_NONZERO&execution=" + ids[1])["entries"].size(), 1u);
  EXPECT_EQ(Dlq("?since=2999-01-01T00:00:00Z")["entries"].size(), 0u);
  Json page = Dlq("?limit=2");
  ASSERT_EQ(page["entries"].size(), 2u);
  ASSERT_TRUE(page["next_cursor"].is_string());
  Json rest = Dlq("?limit=2&cursor=" + page["next_cursor"].get<std::string>());
  ASSERT_EQ(rest["entries"].size(), 1u);
  EXPECT_EQ(rest["entries"][0]["execution_id"], ids[2]);

  // One fingerprint for the three: the same failure, whatever the execution.
  Json stats = Dlq("/stats");
  EXPECT_EQ(stats["total"], 3);
  ASSERT_EQ(stats["by_fingerprint"].size(), 1u) << stats.dump();
  EXPECT_EQ(stats["by_fingerprint"][0]["count"], 3);
  EXPECT_EQ(stats["by_workflow"], Json::parse(R"([{"workflow":"ingest","count":3}])"));
  EXPECT_EQ(stats["by_step"][0]["step_id"], "load");
  EXPECT_EQ(Dlq("/stats?workflow=other")["total"], 0);

  // `baton dlq list` and `stats` print them; --json is the API's body.
  ProcessResult cli = Cli({"dlq", "list"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find(ids[2]), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("EXIT_NONZERO"), std::string::npos) << cli.out;
  cli = Cli({"dlq", "stats", "--json"});
  ASSERT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(Json::parse(cli.out)["total"], 3);
  cli = Cli({"dlq", "show", std::to_string(EntryOf(ids[0]))});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("load"), std::string::npos) << cli.out;
}

TEST_F(ServerDlq, AReplayRunsTheExecutionFromTheStepOnceAndDiscardKeepsTheEntry) {
  const std::string a = FailedExecution();
  const std::string b = FailedExecution();
  const int64_t entry = EntryOf(a);
  ASSERT_GT(entry, 0);
  MakeReady();

  ApiClient admin = server_->Admin();
  auto replay = admin.Call("POST", "/api/v1/dlq/" + std::to_string(entry) + "/replay");
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_EQ((*replay)["entry"]["status"], "replayed");
  EXPECT_EQ((*replay)["entry"]["replay"]["attempt"], 2);
  EXPECT_EQ((*replay)["execution"]["id"], a);
  Json done = WaitForExecutionStatus(admin, a, "completed");
  EXPECT_EQ(done["steps"][1]["attempts"], 2);
  EXPECT_EQ(done["steps"][0]["attempts"], 1);  // fetch completed: kept

  // Only open entries are replayed or discarded.
  auto again = admin.Send("POST", "/api/v1/dlq/" + std::to_string(entry) + "/replay", "");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, 409) << again->body;
  EXPECT_NE(again->body.find("already replayed"), std::string::npos) << again->body;

  ProcessResult cli = Cli({"dlq", "discard", std::to_string(EntryOf(b))});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  Json gone = *admin.Call("GET", "/api/v1/dlq/" + std::to_string(EntryOf(b)));
  EXPECT_EQ(gone["status"], "discarded");
  EXPECT_FALSE(gone["resolved_at"].is_null());
  EXPECT_EQ(Dlq()["entries"].size(), 0u);  // neither is open
  EXPECT_EQ(Dlq("?status=any")["entries"].size(), 2u);
  EXPECT_EQ(Dlq("?status=discarded")["entries"].size(), 1u);
  EXPECT_EQ(admin.Send("DELETE", "/api/v1/dlq/" + std::to_string(EntryOf(b)), "")->status, 409);
  // b's execution was never run again.
  EXPECT_EQ((*admin.Call("GET", "/api/v1/executions/" + b))["status"], "failed");

  auto metrics = admin.Send("GET", "/metrics");
  ASSERT_TRUE(metrics.ok());
  for (const char* line : {"baton_dead_letters_total{event=\"written\"} 2",
                           "baton_dead_letters_total{event=\"replayed\"} 1",
                           "baton_dead_letters_total{event=\"discarded\"} 1"}) {
    EXPECT_NE(metrics->body.find(line), std::string::npos) << line << "\n" << metrics->body;
  }
}

TEST_F(ServerDlq, AReplayThatFailsAgainLeavesANewEntryLinkedToTheOld) {
  const std::string a = FailedExecution();
  const int64_t first = EntryOf(a);
  ApiClient admin = server_->Admin();
  ProcessResult cli = Cli({"dlq", "replay", std::to_string(first)});
  ASSERT_EQ(cli.exit_code, 0) << cli.err << cli.out;
  WaitForExecutionStatus(admin, a, "failed");
  ASSERT_TRUE(WaitUntil([&] { return EntryOf(a) != first; }));
  const int64_t second = EntryOf(a);

  Json old_entry = *admin.Call("GET", "/api/v1/dlq/" + std::to_string(first));
  EXPECT_EQ(old_entry["status"], "replayed");
  EXPECT_EQ(old_entry["replay"]["entry_id"], second) << old_entry.dump();
  Json new_entry = *admin.Call("GET", "/api/v1/dlq/" + std::to_string(second));
  EXPECT_EQ(new_entry["status"], "open");
  EXPECT_EQ(new_entry["replay_of"], first) << new_entry.dump();
  EXPECT_EQ(new_entry["attempts"]["first"], 2);
}

TEST_F(ServerDlq, BulkReplayKeepsItsRateAndReportsProgress) {
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) ids.push_back(FailedExecution());
  MakeReady();
  ApiClient admin = server_->Admin();
  auto r = admin.Send("POST", "/api/v1/dlq/replay",
                      R"({"filter": {"workflow": "ingest", "step": "load"}, "per_second": 4})");
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->status, 202) << r->body;
  Json job = Json::parse(r->body)["replay"];
  EXPECT_EQ(job["matched"], 4);
  const std::string url = "/api/v1/dlq/replays/" + job["id"].get<std::string>();
  ASSERT_TRUE(WaitUntil([&] {
    auto j = admin.Call("GET", url);
    return j.ok() && (*j)["state"] == "done";
  }));
  job = *admin.Call("GET", url);
  EXPECT_EQ(job["replayed"], 4) << job.dump();
  EXPECT_EQ(job["failed"], 0) << job.dump();
  for (const std::string& id : ids) WaitForExecutionStatus(admin, id, "completed");

  // Four replays at 4 per second: the last begins at least 750 ms after the first.
  std::vector<TimeMs> at;
  Json replayed = Dlq("?status=replayed");
  for (const Json& e : replayed["entries"]) {
    auto t = ParseTime(e["resolved_at"].get<std::string>());
    ASSERT_TRUE(t.ok());
    at.push_back(*t);
  }
  ASSERT_EQ(at.size(), 4u) << replayed.dump();
  std::sort(at.begin(), at.end());
  EXPECT_GE(at.back() - at.front(), 700) << "replays were not spread out";
  EXPECT_EQ((*admin.Call("GET", "/api/v1/dlq/replays"))["replays"].size(), 1u);
}

TEST_F(ServerDlq, BadRequestsAreRefusedAndOtherNamespacesSeeNothing) {
  const std::string a = FailedExecution();
  const int64_t entry = EntryOf(a);
  ApiClient admin = server_->Admin();
  struct Case {
    const char* method;
    std::string path;
    std::string body;
    int status;
  } cases[] = {
      {"GET", "/api/v1/dlq?status=lost", "", 400},
      {"GET", "/api/v1/dlq?since=yesterday", "", 400},
      {"GET", "/api/v1/dlq?cursor=x1", "", 400},
      {"GET", "/api/v1/dlq?limit=0", "", 400},
      {"GET", "/api/v1/dlq/abc", "", 404},
      {"GET", "/api/v1/dlq/99999", "", 404},
      {"POST", "/api/v1/dlq/99999/replay", "", 404},
      {"POST", "/api/v1/dlq/replay", R"({"per_second": 0})", 400},
      {"POST", "/api/v1/dlq/replay", R"({"per_second": 5, "filter": {"wrkflow": "x"}})", 400},
      {"POST", "/api/v1/dlq/replay", R"({"per_second": 5, "filter": {"status": "any"}})", 400},
      {"POST", "/api/v1/dlq/replay", R"({"per_second": 5, "limit": 100000})", 400},
      {"POST", "/api/v1/dlq/replay", R"({"per_second": 5, "filter": {"step": 7.5}})", 400},
      {"POST", "/api/v1/dlq/replay", "[1]", 400},
      {"GET", "/api/v1/dlq/replays/replay-404", "", 404},
  };
  for (const Case& c : cases) {
    auto r = admin.Send(c.method, c.path, c.body);
    ASSERT_TRUE(r.ok()) << c.path;
    EXPECT_EQ(r->status, c.status) << c.method << " " << c.path << " " << c.body << ": " << r->body;
  }
  EXPECT_EQ(Dlq()["entries"].size(), 1u);  // nothing changed
  EXPECT_EQ(Dlq()["entries"][0]["status"], "open");

  auto other = admin.Call("POST", "/api/v1/tokens",
                          {{"name", "team b"}, {"scopes", {"write"}}, {"namespace", "team-b"}});
  ASSERT_TRUE(other.ok());
  ApiClient b = server_->As((*other)["token"]);
  EXPECT_EQ((*b.Call("GET", "/api/v1/dlq"))["entries"].size(), 0u);
  EXPECT_EQ((*b.Call("GET", "/api/v1/dlq/stats"))["total"], 0);
  EXPECT_EQ(b.Call("GET", "/api/v1/dlq/" + std::to_string(entry)).status().code(), "NOT_FOUND");
  EXPECT_EQ(b.Call("POST", "/api/v1/dlq/" + std::to_string(entry) + "/replay").status().code(),
            "NOT_FOUND");
  EXPECT_EQ(b.Send("DELETE", "/api/v1/dlq/" + std::to_string(entry), "")->status, 404);
  auto bulk = b.Send("POST", "/api/v1/dlq/replay", R"({"per_second": 100})");
  ASSERT_TRUE(bulk.ok());
  EXPECT_EQ(Json::parse(bulk->body)["replay"]["matched"], 0);
  EXPECT_EQ(Dlq()["entries"][0]["status"], "open");
}

// The replay and the entry's new status commit together: after a kill -9 right after
// the replay was answered, the entry is replayed and the execution carries on.
TEST_F(ServerDlq, AReplaySurvivesAKill9) {
  const std::string a = FailedExecution();
  const int64_t entry = EntryOf(a);
  MakeReady();
  auto replay = server_->Admin().Call("POST", "/api/v1/dlq/" + std::to_string(entry) + "/replay");
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  server_->Kill9();
  server_->Restart();
  ASSERT_TRUE(server_->ok()) << server_->log();
  ApiClient admin = server_->Admin();
  Json done = WaitForExecutionStatus(admin, a, "completed");
  Json e = *admin.Call("GET", "/api/v1/dlq/" + std::to_string(entry));
  EXPECT_EQ(e["status"], "replayed");
  EXPECT_EQ(Dlq()["entries"].size(), 0u);
  EXPECT_EQ(Dlq("?status=any")["entries"].size(), 1u);  // no second entry, no second run
  EXPECT_LE(done["steps"][1]["attempts"].get<int>(), 3);
}

TEST_F(ServerDlq, HelpExplainsTheCommands) {
  ProcessResult help = Cli({"dlq", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* word : {"list", "show", "stats", "replay", "discard"}) {
    EXPECT_NE(help.out.find(word), std::string::npos) << word << "\n" << help.out;
  }
}

}  // namespace
}  // namespace baton
