// Dead-letter entries the engine writes, their fingerprints, and how a retry resolves
// them (replayed, linked to the attempt the new run starts at).
#include "engine/engine_impl.h"
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::SimHarness;

TEST(DeadLetterFingerprint, MasksWhatVariesBetweenOccurrences) {
  EXPECT_EQ(DeadLetterFingerprint("EXIT_NONZERO", "exit status 3"), "EXIT_NONZERO: exit status N");
  EXPECT_EQ(DeadLetterFingerprint("HTTP_ERROR", "GET https://api.example.com/v2/items/8812 -> 503"),
            DeadLetterFingerprint("HTTP_ERROR", "GET https://api.example.com/v2/items/17 -> 502"));
  EXPECT_EQ(DeadLetterFingerprint("E", "cannot open '/tmp/a b/c.txt': no such file"),
            "E: cannot open '?': no such file");
  EXPECT_EQ(DeadLetterFingerprint("E", "request 3f2a9c1e-77b0-4d7e-9a43-0c6f1e2d5b88 failed"),
            "E: request X failed");
  EXPECT_EQ(DeadLetterFingerprint("E", "  lots   of\n\tspace  "), "E: lots of space");
  // Different messages and different codes stay apart.
  EXPECT_NE(DeadLetterFingerprint("E", "connection refused"),
            DeadLetterFingerprint("E", "connection reset"));
  EXPECT_NE(DeadLetterFingerprint("A", "boom"), DeadLetterFingerprint("B", "boom"));
  // Bounded, and cut on a UTF-8 character boundary.
  std::string huge;
  for (int i = 0; i < 500; ++i) huge += "é ";
  const std::string fp = DeadLetterFingerprint("E", huge);
  EXPECT_LE(fp.size(), 200u);
  EXPECT_NE(static_cast<unsigned char>(fp.back()) & 0xC0, 0x80);
  EXPECT_EQ(DeadLetterFingerprint("E", ""), "E:");
}

constexpr const char* kPipeline = R"(
name: pipeline
version: 2
steps:
  - {id: fetch, type: shell, run: fetch}
  - {id: load, type: shell, run: "load {{ steps.fetch.output.rows }}", depends_on: [fetch],
     retry: {max_attempts: 2, initial_delay: 1s}}
)";

TEST(EngineDeadLetters, AnEntryCarriesTheWorkflowTheAttemptsAndTheirTimes) {
  SimHarness h;
  h.runner->script["fetch"] = {{10, "", Json{{"rows", 5}}}};
  h.runner->script["load"] = {{100, "EXIT_NONZERO"}};
  std::string id = h.Run(kPipeline);
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  auto dl = *h.store->ListDeadLetters(id);
  ASSERT_EQ(dl.size(), 1u);
  const DeadLetterRecord& d = dl[0];
  EXPECT_GT(d.id, 0);
  EXPECT_EQ(d.ns, kDefaultNamespace);
  EXPECT_EQ(d.workflow, "pipeline");
  EXPECT_EQ(d.step_id, "load");
  // Resolved: the template's value is passed to the shell as an argument.
  EXPECT_EQ(d.input["args"], Json::array({5})) << d.input.dump();
  EXPECT_EQ(d.code, "EXIT_NONZERO");
  EXPECT_EQ(d.fingerprint, "EXIT_NONZERO: scripted failure");
  EXPECT_EQ(d.first_attempt, 1);
  EXPECT_EQ(d.last_attempt, 2);
  ASSERT_EQ(d.errors.size(), 2u);
  EXPECT_EQ(d.errors[0]["attempt"], 1);
  // Attempt 1 failed at 10 + 100 ms, attempt 2 a 1 s backoff and 100 ms later.
  EXPECT_EQ(d.first_failed_at - d.errors[0]["at"].get<TimeMs>(), 0);
  EXPECT_EQ(d.last_failed_at - d.first_failed_at, 1100);
  EXPECT_EQ(d.status, kDeadLetterOpen);
}

// Loads the stored execution (and its dead letters) and retries it from `from`.
Status RetryWithDeadLetters(SimHarness& h, const std::string& id, const std::string& from) {
  Status out;
  h.loop->Post([&] {
    auto events = *h.store->GetEvents(id, 0, 0);
    out = h.engine->Retry(h.Execution(id), *h.store->GetSteps(id), *h.store->GetAttempts(id),
                          events.back().seq, {}, from, *h.store->ListDeadLetters(id));
  });
  h.loop->RunReady();
  return out;
}

TEST(EngineDeadLetters, ARetryReplaysTheEntryAndAFailureAgainIsANewLinkedEntry) {
  SimHarness h;
  h.runner->script["fetch"] = {{10, "", Json{{"rows", 5}}}};
  h.runner->script["load"] = {{10, "EXIT_NONZERO"}};
  std::string id = h.Run(kPipeline);
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);

  ASSERT_TRUE(RetryWithDeadLetters(h, id, "load").ok());
  h.loop->RunUntilIdle();
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);  // it fails again
  auto dl = *h.store->ListDeadLetters(id);
  ASSERT_EQ(dl.size(), 2u);
  EXPECT_EQ(dl[0].status, kDeadLetterReplayed);
  EXPECT_EQ(dl[0].replay_attempt, 3);  // attempts 1 and 2 spent; the replay starts at 3
  EXPECT_GT(dl[0].resolved_at, 0);
  EXPECT_EQ(dl[1].status, kDeadLetterOpen);
  EXPECT_EQ(dl[1].first_attempt, 3);  // the link: the run the replay started
  EXPECT_EQ(dl[1].last_attempt, 4);
  EXPECT_EQ(dl[1].errors.size(), 2u);  // a fresh budget: only this run's errors

  auto events = *h.store->GetEvents(id, 0, 0);
  Json retried;
  for (const EventRecord& e : events) {
    if (e.type == "execution.retried") retried = e.data;
  }
  EXPECT_EQ(retried["from"], "load");
  EXPECT_EQ(retried["dead_letters_replayed"], Json::array({dl[0].id}));

  // Only open entries are resolved: the replayed one is left as it is by another retry.
  ASSERT_TRUE(RetryWithDeadLetters(h, id, "").ok());
  h.loop->RunUntilIdle();
  dl = *h.store->ListDeadLetters(id);
  ASSERT_EQ(dl.size(), 3u);
  EXPECT_EQ(dl[0].replay_attempt, 3);
  EXPECT_EQ(dl[1].status, kDeadLetterReplayed);
  EXPECT_EQ(dl[1].replay_attempt, 5);
}

}  // namespace
}  // namespace baton
