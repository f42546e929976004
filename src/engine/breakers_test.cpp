// Circuit breakers: open after consecutive failures, fail fast while open, probe after
// recovery_timeout, close after successful probes; shared across executions; durable.
#include "support/sim_harness.h"

#include <gtest/gtest.h>

namespace baton {
namespace {

using testing::SimHarness;

constexpr const char* kCall = R"(
name: caller
steps:
  - id: call
    type: shell
    run: call
    retry: {max_attempts: 5, initial_delay: 1s, multiplier: 1}
    circuit_breaker: {key: dep, failure_threshold: 2, recovery_timeout: 10s}
)";

// The same dependency from another workflow, without retries: it fails fast.
constexpr const char* kOther = R"(
name: other
steps:
  - id: other
    type: shell
    run: other
    circuit_breaker: {key: dep, failure_threshold: 2, recovery_timeout: 10s}
)";

std::vector<std::string> BreakerEvents(const SimHarness& h, const std::string& id) {
  std::vector<std::string> out;
  for (const auto& e : h.log.events) {
    if (e.execution_id == id && e.type.rfind("breaker.", 0) == 0) out.push_back(e.type);
  }
  return out;
}

BreakerRecord Stored(SimHarness& h, const std::string& key) {
  for (const BreakerRecord& b : *h.store->ListBreakers(kDefaultNamespace)) {
    if (b.key == key) return b;
  }
  ADD_FAILURE() << "no stored breaker " << key;
  return {};
}

TEST(Breakers, OpensAfterTheThresholdAndTheRetryWaitsForTheProbeThatClosesIt) {
  SimHarness h;
  h.runner->script["call"] = {{10, "EXIT_NONZERO"}, {10, "EXIT_NONZERO"}, {10}};
  const TimeMs t0 = h.clock.Now();
  std::string id = h.Run(kCall);
  ASSERT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  // Three runs, no refused attempt: the retry after the trip waited for the probe time.
  ASSERT_EQ(h.runner->calls.size(), 3u);
  EXPECT_EQ(h.Step(id, "call").attempts, 3);
  const TimeMs opened = t0 + 10 + 1000 + 10;
  EXPECT_EQ(h.runner->calls[2].started, opened + 10'000);
  EXPECT_EQ(BreakerEvents(h, id),
            (std::vector<std::string>{"breaker.opened", "breaker.half_opened", "breaker.closed"}));
  BreakerRecord b = Stored(h, "dep");
  EXPECT_EQ(b.state, kBreakerClosed);
  EXPECT_EQ(b.trips, 1);
  EXPECT_EQ(b.failures, 0);
  EXPECT_EQ(b.opened_at, opened);
}

TEST(Breakers, AnOpenBreakerFailsOtherExecutionsFastWithoutRunningThem) {
  SimHarness h;
  h.runner->script["call"] = {{10, "EXIT_NONZERO"}};
  std::string first = h.StartOnly(kCall);
  h.loop->RunUntilIdle(h.clock.Now() + 2000);  // two failures: open until +10s
  ASSERT_EQ(Stored(h, "dep").state, kBreakerOpen);
  std::string second = h.StartOnly(kOther);
  h.loop->RunUntilIdle(h.clock.Now() + 100);
  ExecutionRecord e = h.Execution(second);
  EXPECT_EQ(e.status, ExecutionStatus::kFailed);
  EXPECT_EQ(h.runner->CallsFor("other"), 0);
  StepRecord st = h.Step(second, "other");
  EXPECT_EQ(st.error["code"], errc::kCircuitOpen);
  EXPECT_EQ(st.error["details"]["key"], "dep");
  EXPECT_EQ(st.error["details"]["probe_at"], Stored(h, "dep").probe_at);
  EXPECT_EQ(h.engine->Stats().circuit_open_rejections, 1u);
  // The dead letter says why.
  auto dead = *h.store->ListDeadLetters(second);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].code, errc::kCircuitOpen);
}

// Several instances: what another engine stored replaces this engine's copy only when
// it changed later.
TEST(Breakers, MergeTakesAStoredBreakerOnlyWhenItChangedLater) {
  SimHarness h;
  h.runner->script["call"] = {{10, "EXIT_NONZERO"}};
  h.StartOnly(kCall);
  h.loop->RunUntilIdle(h.clock.Now() + 2000);  // open here, until +10s
  BreakerRecord mine = Stored(h, "dep");
  ASSERT_EQ(mine.state, kBreakerOpen);
  BreakerRecord older = mine;
  older.state = kBreakerClosed;
  older.failures = 0;
  older.updated_at = mine.updated_at - 1;
  BreakerRecord elsewhere = mine;
  elsewhere.key = "other-dep";  // one only another instance used
  h.engine->MergeBreakers({older, elsewhere});
  auto list = h.engine->Breakers(kDefaultNamespace);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].key, "dep");
  EXPECT_EQ(list[0].state, kBreakerOpen);  // the older copy changed nothing
  EXPECT_EQ(list[1].key, "other-dep");
  BreakerRecord closed = older;
  closed.updated_at = mine.updated_at + 1;  // another instance reset it since
  h.engine->MergeBreakers({closed});
  EXPECT_EQ(h.engine->Breakers(kDefaultNamespace)[0].state, kBreakerClosed);
  // Closed here now: the next attempt runs.
  h.runner->script["other"] = {{10}};
  std::string next = h.StartOnly(kOther);
  h.loop->RunUntilIdle(h.clock.Now() + 100);
  EXPECT_EQ(h.Execution(next).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->CallsFor("other"), 1);
}

TEST(Breakers, AFailedProbeOpensItAgain) {
  SimHarness h;
  h.runner->script["call"] = {{10, "EXIT_NONZERO"}};  // always fails
  std::string id = h.Run(kCall);
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  // Attempts 1-2 trip it; 3, 4 and 5 are probes 10 s apart, each failing: no attempt
  // was refused, since every retry waited for the probe time.
  EXPECT_EQ(h.runner->CallsFor("call"), 5);
  BreakerRecord b = Stored(h, "dep");
  EXPECT_EQ(b.state, kBreakerOpen);
  EXPECT_EQ(b.trips, 4);
  EXPECT_EQ(b.last_error["code"], "EXIT_NONZERO");
}

TEST(Breakers, AnOpenBreakerSurvivesACrash) {
  SimHarness h;
  h.runner->script["call"] = {{10, "EXIT_NONZERO"}};
  h.StartOnly(kCall);
  h.loop->RunUntilIdle(h.clock.Now() + 2000);
  const TimeMs probe_at = Stored(h, "dep").probe_at;
  h.Crash();
  std::string after = h.StartOnly(kOther);
  h.loop->RunUntilIdle(h.clock.Now() + 100);
  EXPECT_EQ(h.Step(after, "other").error["code"], errc::kCircuitOpen);
  EXPECT_EQ(h.runner->CallsFor("other"), 0);
  // Past the probe time the next attempt probes, and its success closes the breaker.
  h.clock.Set(probe_at);
  h.runner->script["other"] = {{10}};
  std::string later = h.Run(kOther);
  EXPECT_EQ(h.Execution(later).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(Stored(h, "dep").state, kBreakerClosed);
}

TEST(Breakers, WhySaysWhichBreakerHoldsARetry) {
  SimHarness h;
  h.runner->script["other"] = {{10, "EXIT_NONZERO"}};
  constexpr const char* kTrip = R"(
name: trip
steps:
  - {id: other, type: shell, run: x, circuit_breaker: {key: dep, failure_threshold: 1}}
)";
  h.Run(kTrip);
  ASSERT_EQ(Stored(h, "dep").state, kBreakerOpen);
  constexpr const char* kPatient = R"(
name: patient
steps:
  - id: call
    type: shell
    run: call
    retry: {max_attempts: 3, initial_delay: 1s}
    circuit_breaker: {key: dep, failure_threshold: 1}
)";
  std::string id = h.StartOnly(kPatient);
  h.loop->RunUntilIdle(h.clock.Now() + 100);
  Result<std::vector<StepWait>> why = Status(errc::kNotFound, "not asked");
  h.loop->Post([&] { why = h.engine->Why(id); });
  h.loop->RunReady();
  ASSERT_TRUE(why.ok()) << why.status().ToString();
  ASSERT_EQ(why->size(), 1u);
  EXPECT_EQ((*why)[0].kind, "breaker");
  EXPECT_EQ((*why)[0].breaker, "dep");
  EXPECT_EQ((*why)[0].until, Stored(h, "dep").probe_at);
}

TEST(Breakers, AResetClosesItAndIsStored) {
  SimHarness h;
  h.runner->script["other"] = {{10, "EXIT_NONZERO"}};
  h.Run(kOther);
  h.Run(kOther);
  ASSERT_EQ(Stored(h, "dep").state, kBreakerOpen);
  Result<BreakerRecord> reset = Status(errc::kNotFound, "not asked");
  h.loop->Post([&] { reset = h.engine->ResetBreaker(kDefaultNamespace, "dep"); });
  h.loop->RunUntilIdle();
  ASSERT_TRUE(reset.ok());
  EXPECT_EQ(Stored(h, "dep").state, kBreakerClosed);
  EXPECT_EQ(Stored(h, "dep").failures, 0);
  h.loop->Post([&] { reset = h.engine->ResetBreaker(kDefaultNamespace, "nope"); });
  h.loop->RunReady();
  EXPECT_EQ(reset.status().code(), errc::kNotFound);
  h.runner->script["other"] = {{10}};
  EXPECT_EQ(h.Execution(h.Run(kOther)).status, ExecutionStatus::kCompleted);
}

TEST(Breakers, CancellationsDoNotCount) {
  SimHarness h;
  h.runner->script["other"] = {{10'000}};
  constexpr const char* kOne = R"(
name: one
steps:
  - {id: other, type: shell, run: x, circuit_breaker: {key: dep, failure_threshold: 1}}
)";
  std::string id = h.StartOnly(kOne);
  h.loop->RunUntilIdle(h.clock.Now() + 100);
  h.loop->Post([&] { ASSERT_TRUE(h.engine->Cancel(id, "test").ok()); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCancelled);
  EXPECT_TRUE(h.store->ListBreakers("")->empty() || Stored(h, "dep").state == kBreakerClosed);
}

TEST(Breakers, KeysDefaultToTheHttpHostAndTheCommandName) {
  SimHarness h;
  h.engine->SetRunner(StepType::kHttp, h.runner.get());
  h.engine->SetRunner(StepType::kCommand, h.runner.get());
  h.runner->script["get"] = {{10, "NETWORK"}};
  h.runner->script["train"] = {{10, "EXIT_NONZERO"}};
  constexpr const char* kCalls = R"(
name: calls
defaults:
  circuit_breaker: {failure_threshold: 1}
steps:
  - {id: get, type: http, request: {url: "https://user@API.example.com:8443/v1?q=1"}}
  - {id: train, type: command, command: train-model}
  - {id: local, type: shell, run: x}
)";
  h.Run(kCalls);
  std::vector<std::string> keys;
  for (const BreakerRecord& b : *h.store->ListBreakers("")) keys.push_back(b.key + "=" + b.state);
  EXPECT_EQ(keys, (std::vector<std::string>{"api.example.com:8443=open", "train-model=open"}));
}

TEST(Breakers, ATemplatedKeyIsRenderedPerExecution) {
  SimHarness h;
  h.runner->script["call"] = {{10, "EXIT_NONZERO"}};
  constexpr const char* kRegional = R"(
name: regional
inputs: {region: string}
steps:
  - {id: call, type: shell, run: x, circuit_breaker: {key: "db-{{ inputs.region }}", failure_threshold: 1}}
)";
  h.Run(kRegional, {{"region", "eu"}});
  h.runner->script["call"] = {{10}};
  std::string us = h.Run(kRegional, {{"region", "us"}});
  EXPECT_EQ(h.Execution(us).status, ExecutionStatus::kCompleted);  // another breaker
  EXPECT_EQ(Stored(h, "db-eu").state, kBreakerOpen);
}

}  // namespace
}  // namespace baton
