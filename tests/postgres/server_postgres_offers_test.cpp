// Workers connected to one instance run the steps of executions held by another (several
// instances on one PostgreSQL database): a step no worker of its owner can take is
// offered through the database, taken by an instance whose worker can, and its result
// goes back to the owner. The taker dying, the owner dying and a cancel on the owner are
// each driven from outside with real processes.
#include "postgres/instances.h"
#include "support/execution_checks.h"

#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace baton::testing {
namespace {

constexpr const char* kRemote = R"(
name: remote
defaults:
  retry: {max_attempts: 5, initial_delay: 100ms}
steps:
  - {id: a, type: command, command: work}
  - {id: b, type: command, command: work, depends_on: [a]}
)";

struct OfferFixture {
  Instances in;
  std::string dir = MakeTempDir();
  std::string worker_token;
  std::vector<pid_t> workers;

  // `n` instances with a 1 s lease; a handler `work` that prints `first` (shell lines)
  // and sleeps `seconds`.
  void Start(int n, const char* seconds, const std::string& first = "") {
    in.Start(n, "1s");
    WriteFile(dir + "/work.sh", "#!/bin/sh\ncat >/dev/null\n" + first + "sleep " + seconds +
                                    "\necho '{\"ok\": true}'\n");
    chmod((dir + "/work.sh").c_str(), 0755);
    in.Create(0, kRemote);
    auto token = in.Api(0).Call("POST", "/api/v1/tokens", {{"name", "w"}, {"scopes", {"worker"}}});
    ASSERT_TRUE(token.ok()) << token.status().ToString();
    worker_token = (*token)["token"].get<std::string>();
  }
  // A worker connected to these instances' URLs (the first that answers).
  pid_t Worker(const std::string& id, const std::vector<size_t>& servers) {
    std::string urls;
    for (size_t i : servers) urls += (urls.empty() ? "" : ",") + in.servers[i]->url();
    pid_t pid =
        StartProcess({BatonBin(), "worker", "--server", urls, "--token", worker_token, "--id", id,
                      "--capacity", "8", "--handler", "work=" + dir + "/work.sh"},
                     dir + "/" + id + ".log");
    workers.push_back(pid);
    return pid;
  }
  std::string WorkerLog(const std::string& id) const { return ReadFile(dir + "/" + id + ".log"); }
  ~OfferFixture() {
    for (pid_t w : workers) {
      kill(w, SIGKILL);
      WaitProcess(w);
    }
  }
};

// Attempts of `step` in an execution, read through `api`.
int Attempts(const client::ApiClient& api, const std::string& id, const std::string& step) {
  auto e = api.Call("GET", "/api/v1/executions/" + id);
  if (!e.ok()) return -1;
  for (const Json& s : (*e)["steps"]) {
    if (s["id"] == step) return s.value("attempts", -1);
  }
  return -1;
}

TEST(PostgresOffers, AWorkerOfOneInstanceRunsTheStepsOfExecutionsHeldByAnother) {
  OfferFixture f;
  f.Start(2, "0.05");
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(f.in.Submit(0, "remote"));
    ASSERT_FALSE(ids.back().empty());
  }
  // No worker anywhere yet: the owner says where its step went.
  auto api = f.in.Api(0);
  WaitUntil(
      [&] {
        auto why = api.Call("GET", "/api/v1/executions/" + ids[0] + "/why");
        return why.ok() && why->dump().find("offered to the other instances") != std::string::npos;
      },
      10'000);
  auto why = api.Call("GET", "/api/v1/executions/" + ids[0] + "/why");
  ASSERT_TRUE(why.ok());
  EXPECT_NE(why->dump().find("offered to the other instances: no ONLINE worker handles work"),
            std::string::npos)
      << why->dump();
  // A worker connects to the other instance only.
  ASSERT_GT(f.Worker("w-b", {1}), 0);
  for (const std::string& id : ids) {
    WaitForExecutionStatus(api, id, "completed");
    ExpectCompletedOnce(api, id, {"a", "b"});
    EXPECT_EQ(Attempts(api, id, "a"), 1) << id;
    EXPECT_EQ(Attempts(api, id, "b"), 1) << id;
  }
  // The taker's assignments name its worker.
  auto assignments = f.in.Api(1).Call("GET", "/api/v1/assignments?status=all&execution=" + ids[0]);
  ASSERT_TRUE(assignments.ok()) << assignments.status().ToString();
  EXPECT_NE(assignments->dump().find("w-b"), std::string::npos) << assignments->dump();
  EXPECT_EQ(f.in.servers[0]->log().find("held by instance"), std::string::npos);
}

TEST(PostgresOffers, TheProgressOfAStepOnAnotherInstancesWorkerReachesTheOwner) {
  OfferFixture f;
  f.Start(2, "30", "echo '{\"progress\": 40, \"checkpoint\": {\"at\": 4}}'\n");
  ASSERT_GT(f.Worker("w-b", {1}), 0);
  const std::string id = f.in.Submit(0, "remote");
  ASSERT_FALSE(id.empty());
  auto api = f.in.Api(0);
  auto progress = [&] {
    auto e = api.Call("GET", "/api/v1/executions/" + id);
    return e.ok() ? (*e)["steps"][0].value("progress", -1) : -1;
  };
  EXPECT_TRUE(WaitUntil([&] { return progress() == 40; }, 15'000)) << progress();
  auto e = api.Call("GET", "/api/v1/executions/" + id);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)["steps"][0]["status"], "running") << e->dump();
}

TEST(PostgresOffers, ACancelOnTheOwnerStopsTheStepOnAnotherInstancesWorker) {
  OfferFixture f;
  f.Start(2, "30");
  ASSERT_GT(f.Worker("w-b", {1}), 0);
  const std::string id = f.in.Submit(0, "remote");
  ASSERT_FALSE(id.empty());
  auto api = f.in.Api(0);
  WaitUntil([&] { return f.WorkerLog("w-b").find("started") != std::string::npos; }, 15'000);
  ASSERT_NE(f.WorkerLog("w-b").find("started"), std::string::npos) << f.WorkerLog("w-b");
  auto cancelled = api.Call("POST", "/api/v1/executions/" + id + "/cancel", Json::object());
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  WaitForExecutionStatus(api, id, "cancelled");
  // The taker learns at its next renewal (a third of the lease) and tells its worker.
  WaitUntil([&] { return f.WorkerLog("w-b").find("cancelled by the server") != std::string::npos; },
            10'000);
  EXPECT_NE(f.WorkerLog("w-b").find("cancelled by the server"), std::string::npos)
      << f.WorkerLog("w-b");
}

TEST(PostgresOffers, AStepWhoseTakerDiesRunsAgainOnTheInstanceItsWorkerMovesTo) {
  OfferFixture f;
  f.Start(3, "1.5");
  // The worker is on i2 and moves to i3 when i2 dies; the executions are i1's.
  ASSERT_GT(f.Worker("w-b", {1, 2}), 0);
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(f.in.Submit(0, "remote"));
    ASSERT_FALSE(ids.back().empty());
  }
  WaitUntil([&] { return f.WorkerLog("w-b").find("started") != std::string::npos; }, 15'000);
  f.in.servers[1]->Kill9();
  auto api = f.in.Api(0);
  for (const std::string& id : ids) {
    WaitForExecutionStatus(api, id, "completed");
    ExpectCompletedOnce(api, id, {"a", "b"});
  }
  EXPECT_NE(f.WorkerLog("w-b").find("connected to " + f.in.servers[2]->url()), std::string::npos)
      << f.WorkerLog("w-b");
}

TEST(PostgresOffers, TheOwnerDyingHandsItsOffersToTheInstanceThatTakesItsExecutionsOver) {
  OfferFixture f;
  f.Start(2, "1");
  // The worker stays on i2 throughout; i1 holds the executions and dies mid-step.
  ASSERT_GT(f.Worker("w-b", {1}), 0);
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(f.in.Submit(0, "remote"));
    ASSERT_FALSE(ids.back().empty());
  }
  WaitUntil([&] { return f.WorkerLog("w-b").find("started") != std::string::npos; }, 15'000);
  f.in.servers[0]->Kill9();
  auto api = f.in.Api(1);
  for (const std::string& id : ids) {
    WaitForExecutionStatus(api, id, "completed");
    if (::testing::Test::HasFailure()) {
      std::fprintf(stderr, "%s\n--- worker\n%s\n", f.in.servers[1]->log().c_str(),
                   f.WorkerLog("w-b").c_str());
      return;
    }
    ExpectCompletedOnce(api, id, {"a", "b"});
    // The step running when its owner died was not run again: the new owner took over
    // the offer and collected the result the taker reported.
    EXPECT_EQ(Attempts(api, id, "a"), 1) << id;
  }
}

// The failover of issue 14 in one run: three instances, two workers, a steady stream of
// submissions spread over the instances that are up; kill -9 of one instance, a freeze
// of another past its lease (SIGSTOP, then SIGCONT), then kill -9 of that one. Every
// execution accepted ends completed on the last instance, no step completes twice, and
// every event log is gap-free.
TEST(PostgresOffers, ThreeInstancesAndTwoWorkersUnderAStreamOfSubmissionsSurviveKillsAndAFreeze) {
  OfferFixture f;
  f.Start(3, "0.1");
  f.in.Create(0, R"(
name: mixed
defaults:
  retry: {max_attempts: 10, initial_delay: 100ms}
steps:
  - {id: a, type: shell, run: "echo 1"}
  - {id: b, type: command, command: work, depends_on: [a]}
  - {id: c, type: shell, run: "sleep 0.1; echo 3", depends_on: [b]}
)");
  ASSERT_GT(f.Worker("w-1", {0, 2}), 0);
  ASSERT_GT(f.Worker("w-2", {1, 2}), 0);
  std::mutex mu;
  std::vector<std::string> ids;
  std::vector<size_t> up = {0, 1, 2};  // instances submitted to
  std::atomic<bool> stop{false};
  std::thread stream([&] {
    for (size_t n = 0; !stop; ++n) {
      size_t target;
      {
        std::lock_guard lock(mu);
        target = up[n % up.size()];
      }
      const std::string id = f.in.Submit(target, "mixed");
      if (!id.empty()) {
        std::lock_guard lock(mu);
        ids.push_back(id);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
    }
  });
  auto take_down = [&](size_t i) {
    std::lock_guard lock(mu);
    std::erase(up, i);
  };
  auto submitted = [&] {
    std::lock_guard lock(mu);
    return ids.size();
  };
  WaitUntil([&] { return submitted() >= 20; }, 30'000);
  take_down(0);
  f.in.servers[0]->Kill9();
  const size_t after_kill = submitted();
  WaitUntil([&] { return submitted() >= after_kill + 20; }, 30'000);
  take_down(1);
  const auto takeovers = [&] {
    const std::string log = f.in.servers[2]->log();
    size_t n = 0;
    for (size_t at = log.find("took over"); at != std::string::npos;
         at = log.find("took over", at + 1)) {
      ++n;
    }
    return n;
  };
  const size_t taken_before = takeovers();
  f.in.servers[1]->Signal(SIGSTOP);
  // Frozen past its lease: the last instance takes its executions.
  EXPECT_TRUE(WaitUntil([&] { return takeovers() > taken_before; }, 30'000));
  f.in.servers[1]->Signal(SIGCONT);
  {
    std::lock_guard lock(mu);
    up.push_back(1);
  }
  const size_t after_freeze = submitted();
  WaitUntil([&] { return submitted() >= after_freeze + 20; }, 30'000);
  take_down(1);
  f.in.servers[1]->Kill9();
  const size_t after_second_kill = submitted();
  WaitUntil([&] { return submitted() >= after_second_kill + 10; }, 30'000);
  stop = true;
  stream.join();
  ASSERT_GE(ids.size(), 70u);
  auto api = f.in.Api(2);
  for (const std::string& id : ids) {
    WaitForExecutionStatus(api, id, "completed");
    if (::testing::Test::HasFailure()) {
      std::fprintf(stderr, "%s\n", f.in.servers[2]->log().c_str());
      return;
    }
    ExpectCompletedOnce(api, id, {"a", "b", "c"});
  }
}

}  // namespace
}  // namespace baton::testing
