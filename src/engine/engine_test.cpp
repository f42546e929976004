#include "support/sim_harness.h"

#include <set>

namespace baton {
namespace {

using testing::Outcome;
using testing::SimHarness;

TEST(Engine, RunsChainPassingDataAlong) {
  SimHarness h;
  h.runner->script["download"] = {{100, "", Json{{"path", "/models/m1"}}}};
  h.runner->script["start"] = {{100, "", Json{{"port", 8080}}}};
  std::string id = h.Run(R"(
name: chain
inputs: {model_id: {type: string, required: true}}
steps:
  - {id: download, type: shell, run: [dl, "{{ inputs.model_id }}"]}
  - {id: start, type: shell, run: [start, "{{ steps.download.output.path }}"], depends_on: [download]}
  - {id: route, type: noop, depends_on: [start], with: {port: "{{ steps.start.output.port }}", url: "http://h:{{ steps.start.output.port }}"}}
output: {endpoint: "{{ steps.route.output.url }}"}
)",
                         {{"model_id", "m1"}});
  ExecutionRecord ex = h.Execution(id);
  EXPECT_EQ(ex.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(ex.output, (Json{{"endpoint", "http://h:8080"}}));
  ASSERT_EQ(h.runner->calls.size(), 2u);
  EXPECT_EQ(h.runner->calls[0].spec["run"], (Json{"dl", "m1"}));
  EXPECT_EQ(h.runner->calls[1].spec["run"], (Json{"start", "/models/m1"}));
  EXPECT_EQ(h.Step(id, "route").output["port"], 8080);  // whole template keeps the type
  EXPECT_EQ(h.log.progress.back().percent, 100);
}

TEST(Engine, TemplatesSeeTheExecutionsIdWorkflowAndVersion) {
  SimHarness h;
  std::string id = h.Run(R"(
name: whoami
steps:
  - {id: me, type: noop, with: {id: "{{ execution.id }}", at: "{{ execution.workflow }}/v{{ execution.version }}"}}
output: {id: "{{ steps.me.output.id }}", at: "{{ steps.me.output.at }}"}
)");
  ExecutionRecord ex = h.Execution(id);
  EXPECT_EQ(ex.status, ExecutionStatus::kCompleted);
  EXPECT_EQ(ex.output, (Json{{"id", id}, {"at", "whoami/v" + std::to_string(ex.version)}}));
}

// What a submit answers from (no store read): the record as the engine's batches say,
// the same the store has once they are durable; gone once a finished one is.
TEST(Engine, RecordIsWhatTheSubmittedBatchesSay) {
  SimHarness h;
  h.runner->script["work"] = {{100}};
  std::string id = h.StartOnly(R"(
name: held
steps:
  - {id: work, type: shell, run: "true"}
)");
  std::optional<ExecutionRecord> live = h.engine->Record(id);
  ASSERT_TRUE(live.has_value());
  EXPECT_EQ(live->status, ExecutionStatus::kRunning);
  EXPECT_EQ(live->status, h.Execution(id).status);
  EXPECT_EQ(live->created_at, h.Execution(id).created_at);
  EXPECT_EQ(live->workflow, "held");
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_FALSE(h.engine->Record(id).has_value());
  EXPECT_FALSE(h.engine->Record("no-such-execution").has_value());
}

TEST(Engine, DiamondMiddleStepsOverlap) {
  SimHarness h;
  h.runner->script["b"] = {{1000}};
  h.runner->script["c"] = {{1000}};
  std::string id = h.Run(R"(
name: diamond
steps:
  - {id: a, type: shell, run: "true"}
  - {id: b, type: shell, run: "true", depends_on: [a]}
  - {id: c, type: shell, run: "true", depends_on: [a]}
  - {id: d, type: shell, run: "true", depends_on: [b, c]}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->max_running, 2);
  // b and c start at the same virtual instant; d after both.
  EXPECT_EQ(h.runner->calls[1].started, h.runner->calls[2].started);
  EXPECT_EQ(h.runner->calls[3].started - h.runner->calls[1].started, 1000);
}

TEST(Engine, RetriesWithExponentialBackoffInVirtualTime) {
  SimHarness h;
  h.runner->script["flaky"] = {{10, "EXIT_NONZERO"}, {10, "EXIT_NONZERO"}, {10, ""}};
  std::string id = h.Run(R"(
name: retry
steps:
  - id: flaky
    type: shell
    run: "true"
    retry: {max_attempts: 3, initial_delay: 1h, multiplier: 2, max_delay: 10h}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  ASSERT_EQ(h.runner->calls.size(), 3u);
  EXPECT_EQ(h.runner->calls[1].started - h.runner->calls[0].started, 10 + 3'600'000);
  EXPECT_EQ(h.runner->calls[2].started - h.runner->calls[1].started, 10 + 7'200'000);
  auto attempts = *h.store->GetAttempts(id);
  ASSERT_EQ(attempts.size(), 3u);
  EXPECT_EQ(attempts[0].status, StepStatus::kFailed);
  EXPECT_EQ(attempts[2].status, StepStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "flaky").attempts, 3);
}

TEST(Engine, ExhaustedRetriesFailAndGoToDeadLetters) {
  SimHarness h;
  h.runner->script["bad"] = {{10, "EXIT_NONZERO"}};
  std::string id = h.Run(R"(
name: exhausted
steps:
  - {id: bad, type: shell, run: "false", retry: {max_attempts: 2, initial_delay: 1s}}
  - {id: after, type: shell, run: "true", depends_on: [bad]}
)");
  ExecutionRecord ex = h.Execution(id);
  EXPECT_EQ(ex.status, ExecutionStatus::kFailed);
  EXPECT_EQ(ex.error["code"], "EXIT_NONZERO");
  EXPECT_EQ(ex.error["step"], "bad");
  EXPECT_EQ(h.Step(id, "after").status, StepStatus::kSkipped);
  auto dlq = *h.store->ListDeadLetters(id);
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].errors.size(), 2u);
  EXPECT_EQ(dlq[0].input["run"], "false");
}

TEST(Engine, RetryOnLimitsWhichCodesRetry) {
  SimHarness h;
  h.runner->script["s"] = {{10, "EXIT_NONZERO"}};
  std::string id = h.Run(R"(
name: retry-on
steps:
  - {id: s, type: shell, run: "false", retry: {max_attempts: 5, retry_on: [TIMEOUT]}}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  EXPECT_EQ(h.runner->CallsFor("s"), 1);
}

TEST(Engine, StepTimeoutCancelsTheAttemptAndRetries) {
  SimHarness h;
  h.runner->script["slow"] = {{60'000}, {100}};
  std::string id = h.Run(R"(
name: timeout
steps:
  - {id: slow, type: shell, run: "sleep 60", timeout: 5s, retry: {max_attempts: 2, initial_delay: 1s}}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  ASSERT_EQ(h.runner->cancelled.size(), 1u);
  auto attempts = *h.store->GetAttempts(id);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].status, StepStatus::kTimeout);
  EXPECT_EQ(attempts[0].error["code"], "TIMEOUT");
  EXPECT_EQ(h.runner->calls[1].started - h.runner->calls[0].started, 5000 + 1000);
}

TEST(Engine, HeartbeatTimeoutFailsASilentAttemptAndRetries) {
  SimHarness h;
  Outcome talking(20'000);
  talking.progress_every_ms = 2000;  // well within the 5 s heartbeat_timeout
  h.runner->script["work"] = {{60'000}, talking};
  std::string id = h.Run(R"(
name: heartbeat
steps:
  - {id: work, type: command, command: work, heartbeat_timeout: 5s, retry: {max_attempts: 2, initial_delay: 1s}}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  auto attempts = *h.store->GetAttempts(id);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].status, StepStatus::kFailed);
  EXPECT_EQ(attempts[0].error["code"], "HEARTBEAT_TIMEOUT");
  EXPECT_EQ(attempts[1].status, StepStatus::kCompleted);
  ASSERT_EQ(h.runner->cancelled.size(), 1u);  // the silent attempt was stopped
  // Failed 5 s after it started, retried 1 s later; the talking attempt ran its 20 s.
  EXPECT_EQ(h.runner->calls[1].started - h.runner->calls[0].started, 5000 + 1000);
}

TEST(Engine, HeartbeatTimeoutWithoutRetryFailsTheStep) {
  SimHarness h;
  h.runner->script["work"] = {{60'000}};
  std::string id = h.Run(R"(
name: heartbeat
steps:
  - {id: work, type: command, command: work, heartbeat_timeout: 3s}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  StepRecord s = h.Step(id, "work");
  EXPECT_EQ(s.status, StepStatus::kFailed);
  EXPECT_EQ(s.error["code"], "HEARTBEAT_TIMEOUT");
  EXPECT_NE(s.error["message"].get<std::string>().find("no progress for 3s"), std::string::npos)
      << s.error.dump();
}

TEST(Engine, StaleResultIsLoggedAndChangesNothing) {
  SimHarness h;
  h.runner->script["work"] = {{10'000}};
  std::string id = h.StartOnly(R"(
name: stale
steps:
  - {id: work, type: shell, run: "true"}
)");
  h.loop->Post([&] {
    h.engine->RecordStaleResult(id, "work", Json{{"assignmentId", "x.r1"}, {"worker", "w1"}});
    h.engine->RecordStaleResult(id, "nope", Json::object());        // unknown step: no-op
    h.engine->RecordStaleResult("nobody", "work", Json::object());  // unknown execution
  });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  auto types = h.log.TypesFor("work");
  ASSERT_NE(std::find(types.begin(), types.end(), "step.stale_result"), types.end());
  for (const auto& e : h.log.events) {
    if (e.type == "step.stale_result") {
      EXPECT_EQ(e.data["worker"], "w1");
    }
  }
}

TEST(Engine, StepTimeoutWithoutRetryEndsTimeout) {
  SimHarness h;
  h.runner->script["slow"] = {{60'000}};
  std::string id = h.Run(R"(
name: timeout
steps:
  - {id: slow, type: shell, run: "sleep 60", timeout: 5s}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  EXPECT_EQ(h.Step(id, "slow").status, StepStatus::kTimeout);
}

TEST(Engine, ExecutionTimeoutCancelsRunningSteps) {
  SimHarness h;
  h.runner->script["a"] = {{10'000}};
  std::string id = h.Run(R"(
name: exec-timeout
timeout: 2s
steps:
  - {id: a, type: shell, run: "sleep 10"}
  - {id: b, type: shell, run: "true", depends_on: [a]}
)");
  ExecutionRecord ex = h.Execution(id);
  EXPECT_EQ(ex.status, ExecutionStatus::kTimeout);
  EXPECT_EQ(ex.completed_at - ex.started_at, 2000);
  EXPECT_EQ(h.Step(id, "a").status, StepStatus::kCancelled);
  EXPECT_EQ(h.Step(id, "b").status, StepStatus::kCancelled);
  EXPECT_EQ(h.runner->cancelled.size(), 1u);
}

TEST(Engine, OptionalStepFailureDoesNotFailExecution) {
  SimHarness h;
  h.runner->script["opt"] = {{10, "EXIT_NONZERO"}};
  std::string id = h.Run(R"(
name: optional
steps:
  - {id: opt, type: shell, run: "false", optional: true}
  - {id: next, type: shell, run: "true", depends_on: [opt], trigger_rule: all_done}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "opt").status, StepStatus::kFailed);
  EXPECT_EQ(h.Step(id, "next").status, StepStatus::kCompleted);
}

TEST(Engine, ConditionsSkipAndSkipsPropagate) {
  SimHarness h;
  h.runner->script["probe"] = {{10, "", Json{{"port", 0}}}};
  std::string id = h.Run(R"(
name: cond
steps:
  - {id: probe, type: shell, run: "true"}
  - {id: route, type: shell, run: "true", depends_on: [probe], when: "steps.probe.output.port > 0"}
  - {id: after, type: shell, run: "true", depends_on: [route]}
  - {id: structured, type: noop, depends_on: [probe], when: {field: steps.probe.output.port, op: eq, value: 0}}
  - {id: cleanup, type: noop, depends_on: [route], trigger_rule: none_failed}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "route").status, StepStatus::kSkipped);
  EXPECT_EQ(h.Step(id, "after").status, StepStatus::kSkipped);
  EXPECT_EQ(h.Step(id, "structured").status, StepStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "cleanup").status, StepStatus::kCompleted);
}

TEST(Engine, TriggerRules) {
  SimHarness h;
  h.runner->script["bad"] = {{10, "EXIT_NONZERO"}};
  std::string id = h.Run(R"(
name: rules
steps:
  - {id: good, type: shell, run: "true"}
  - {id: bad, type: shell, run: "false", optional: true}
  - {id: r_all_success, type: noop, depends_on: [good, bad]}
  - {id: r_all_done, type: noop, depends_on: [good, bad], trigger_rule: all_done}
  - {id: r_all_failed, type: noop, depends_on: [good, bad], trigger_rule: all_failed}
  - {id: r_one_success, type: noop, depends_on: [good, bad], trigger_rule: one_success}
  - {id: r_one_failed, type: noop, depends_on: [good, bad], trigger_rule: one_failed}
  - {id: r_none_failed, type: noop, depends_on: [good, bad], trigger_rule: none_failed}
  - {id: r_none_skipped, type: noop, depends_on: [good, r_all_success], trigger_rule: none_skipped}
  - {id: r_always, type: noop, depends_on: [r_all_success], trigger_rule: always}
)");
  EXPECT_EQ(h.Step(id, "r_all_success").status, StepStatus::kSkipped);
  EXPECT_EQ(h.Step(id, "r_all_done").status, StepStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "r_all_failed").status, StepStatus::kSkipped);
  EXPECT_EQ(h.Step(id, "r_one_success").status, StepStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "r_one_failed").status, StepStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "r_none_failed").status, StepStatus::kSkipped);
  EXPECT_EQ(h.Step(id, "r_none_skipped").status, StepStatus::kSkipped);
  EXPECT_EQ(h.Step(id, "r_always").status, StepStatus::kCompleted);
}

TEST(Engine, MissingTemplateReferenceFailsWithTemplateError) {
  SimHarness h;
  h.runner->script["a"] = {{10, "", Json{{"x", 1}}}};
  std::string id = h.Run(R"(
name: tmpl
steps:
  - {id: a, type: shell, run: "true"}
  - {id: b, type: shell, run: [echo, "{{ steps.a.output.missing }}"], depends_on: [a], retry: {max_attempts: 3}}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  StepRecord b = h.Step(id, "b");
  EXPECT_EQ(b.error["code"], "TEMPLATE_ERROR");
  EXPECT_NE(b.error["message"].get<std::string>().find("steps.a.output.missing"),
            std::string::npos);
  EXPECT_EQ(b.attempts, 1);  // never retried
  EXPECT_EQ(h.runner->CallsFor("b"), 0);
}

TEST(Engine, MaxParallelAndCapacityBoundRunningSteps) {
  SimHarness h(EngineOptions{.parallel = 3});
  std::string yaml = "name: wide\nmax_parallel: 2\nsteps:\n";
  for (int i = 0; i < 10; ++i)
    yaml += "  - {id: s" + std::to_string(i) + ", type: shell, run: 'true'}\n";
  std::string id = h.Run(yaml);
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->max_running, 2);

  SimHarness h2(EngineOptions{.parallel = 3});
  std::string yaml2 = "name: wide\nsteps:\n";
  for (int i = 0; i < 10; ++i)
    yaml2 += "  - {id: s" + std::to_string(i) + ", type: shell, run: 'true'}\n";
  h2.Run(yaml2);
  EXPECT_EQ(h2.runner->max_running, 3);
}

TEST(Engine, HigherPriorityStepsStartFirstWhenCapacityIsShort) {
  SimHarness h(EngineOptions{.parallel = 1});
  std::string id = h.Run(R"(
name: prio
steps:
  - {id: low, type: shell, run: "true", priority: low}
  - {id: normal, type: shell, run: "true"}
  - {id: critical, type: shell, run: "true", priority: critical}
  - {id: high, type: shell, run: "true", priority: high}
  - {id: normal2, type: shell, run: "true"}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  std::vector<std::string> order;
  for (const auto& c : h.runner->calls) order.push_back(c.step_id);
  // By priority, then first come first served.
  EXPECT_EQ(order, (std::vector<std::string>{"critical", "high", "normal", "normal2", "low"}));
}

TEST(Engine, JitterDrawsRetryDelaysFromHalfToAllOfTheBackoff) {
  SimHarness h;
  h.runner->script["flaky"] = {{0, "EXIT_NONZERO"}};
  std::string id = h.Run(R"(
name: jitter
steps:
  - id: flaky
    type: shell
    run: "false"
    retry: {max_attempts: 12, initial_delay: 10s, multiplier: 1, jitter: true}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  ASSERT_EQ(h.runner->calls.size(), 12u);
  std::set<int64_t> gaps;
  for (size_t i = 1; i < h.runner->calls.size(); ++i) {
    int64_t gap = h.runner->calls[i].started - h.runner->calls[i - 1].started;
    EXPECT_GE(gap, 5000);
    EXPECT_LE(gap, 10000);
    gaps.insert(gap);
  }
  EXPECT_GT(gaps.size(), 1u) << "jitter drew the same delay every time";
}

TEST(Engine, FailFastCancelsRunningAndOnlyFailureRulesRun) {
  SimHarness h;
  h.runner->script["bad"] = {{10, "EXIT_NONZERO"}};
  h.runner->script["long"] = {{100'000}};
  std::string id = h.Run(R"(
name: ff
fail_fast: true
steps:
  - {id: bad, type: shell, run: "false"}
  - {id: long, type: shell, run: "sleep 100"}
  - {id: next, type: noop, depends_on: [long]}
  - {id: cleanup, type: noop, depends_on: [bad], trigger_rule: one_failed}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kFailed);
  EXPECT_EQ(h.Step(id, "long").status, StepStatus::kCancelled);
  EXPECT_EQ(h.Step(id, "cleanup").status, StepStatus::kCompleted);
  EXPECT_LT(h.clock.Now() - 1'700'000'000'000, 1000);
}

TEST(Engine, CancelStopsRunningStepsAndRecordsCancelled) {
  SimHarness h;
  h.runner->script["a"] = {{100'000}};
  std::string id = h.StartOnly(R"(
name: cancel
steps:
  - {id: a, type: shell, run: "sleep 100"}
  - {id: b, type: noop, depends_on: [a]}
)");
  h.loop->RunUntilIdle(h.clock.Now() + 50);
  h.loop->Post([&] { ASSERT_TRUE(h.engine->Cancel(id, "user asked").ok()); });
  h.loop->RunUntilIdle();
  ExecutionRecord ex = h.Execution(id);
  EXPECT_EQ(ex.status, ExecutionStatus::kCancelled);
  EXPECT_EQ(h.Step(id, "a").status, StepStatus::kCancelled);
  EXPECT_EQ(h.Step(id, "b").status, StepStatus::kCancelled);
  EXPECT_EQ(h.runner->cancelled.size(), 1u);
}

TEST(Engine, PauseHoldsNewDispatchesUntilResume) {
  SimHarness h;
  h.runner->script["a"] = {{1000}};
  std::string id = h.StartOnly(R"(
name: pause
steps:
  - {id: a, type: shell, run: "true"}
  - {id: b, type: shell, run: "true", depends_on: [a]}
)");
  h.loop->Post([&] { ASSERT_TRUE(h.engine->Pause(id).ok()); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kPaused);
  EXPECT_EQ(h.Step(id, "a").status, StepStatus::kCompleted);  // running work finished
  EXPECT_EQ(h.runner->CallsFor("b"), 0);
  h.loop->Post([&] { ASSERT_TRUE(h.engine->Resume(id).ok()); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
}

TEST(Engine, RecoveryRerunsOnlyInterruptedSteps) {
  SimHarness h;
  h.runner->script["a"] = {{10}};
  h.runner->script["b"] = {{10'000}};
  std::string id = h.StartOnly(R"(
name: recover
timeout: 1h
steps:
  - {id: a, type: shell, run: "true"}
  - {id: b, type: shell, run: "sleep 10", depends_on: [a]}
  - {id: c, type: shell, run: "true", depends_on: [b]}
)");
  h.loop->RunUntilIdle(h.clock.Now() + 100);  // a done, b running
  EXPECT_EQ(h.Step(id, "b").status, StepStatus::kRunning);
  // "Crash": drop the engine and its loop's pending work; keep the store.
  h.Crash();
  h.runner->script["b"] = {{10}};
  h.loop->Post([&] {
    auto ids = RecoverExecutions(h.store.get(), h.engine.get());
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    EXPECT_EQ(ids->size(), 1u);
  });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.runner->CallsFor("a"), 0);  // completed before the crash: never again
  EXPECT_EQ(h.runner->CallsFor("b"), 1);
  auto attempts = *h.store->GetAttempts(id);
  int restarts = 0;
  for (auto& a : attempts) restarts += a.error.is_object() && a.error["code"] == "ENGINE_RESTART";
  EXPECT_EQ(restarts, 1);
  auto events = *h.store->GetEvents(id, 0, 100000);
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].seq, static_cast<int64_t>(i + 1));
}

TEST(Engine, SkippingTheHeadOfAHugeChainDoesNotRecurse) {
  SimHarness h;
  std::string yaml = "name: long\nsteps:\n  - {id: s0, type: noop, when: 'false'}\n";
  const int n = 10000;
  for (int i = 1; i < n; ++i) {
    yaml += "  - {id: s" + std::to_string(i) + ", type: noop, depends_on: [s" +
            std::to_string(i - 1) + "]}\n";
  }
  std::string id = h.Run(yaml);
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "s" + std::to_string(n - 1)).status, StepStatus::kSkipped);
}

TEST(Engine, EventsAreGapFreeAndProgressReachesHundred) {
  SimHarness h;
  std::string id = h.Run(R"(
name: events
steps:
  - {id: a, type: noop}
  - {id: b, type: wait, duration: 1s, depends_on: [a]}
  - {id: c, type: shell, run: "true", depends_on: [b]}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  auto events = *h.store->GetEvents(id, 0, 1000);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().type, "execution.started");
  EXPECT_EQ(events.back().type, "execution.completed");
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].seq, static_cast<int64_t>(i + 1));
  EXPECT_EQ(h.log.events.size(), events.size());
  EXPECT_EQ(h.log.progress.back().percent, 100);
  EXPECT_EQ(h.log.progress.back().layers, 3);
}

TEST(Engine, ForEachRunsOneInstancePerItemBoundedAndInOrder) {
  SimHarness h;
  std::string id = h.Run(R"(
name: fan
max_parallel: 2
steps:
  - {id: list, type: noop, with: {items: [{v: a, ms: 300}, {v: b, ms: 100}, {v: c, ms: 200}, {v: d, ms: 50}, {v: e, ms: 10}]}}
  - id: each
    type: shell
    run: [echo, "{{ item.v }}"]
    for_each: "{{ steps.list.output.items }}"
    with: {sim_ms: "{{ item.ms }}", sim_output: "{{ item.v }}-{{ item_index }}"}
    depends_on: [list]
  - {id: after, type: noop, depends_on: [each], with: {all: "{{ steps.each.output }}"}}
)");
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "each").output, Json::parse(R"(["a-0","b-1","c-2","d-3","e-4"])"));
  EXPECT_EQ(h.Step(id, "after").output["all"].size(), 5u);
  EXPECT_EQ(h.runner->calls.size(), 5u);
  EXPECT_EQ(h.runner->max_running, 2);
  EXPECT_EQ(h.runner->calls[0].spec["run"], (Json{"echo", "a"}));
  EXPECT_EQ(h.runner->calls[0].spec["env"]["BATON_ITEM_INDEX"], "0");
  bool saw_progress = false;
  for (const auto& e : h.log.events)
    saw_progress |= e.type == "step.progress" && e.step_id == "each";
  EXPECT_TRUE(saw_progress);
}

TEST(Engine, ForEachInstanceFailureCancelsTheRestAndRetriesEveryItem) {
  SimHarness h(EngineOptions{.parallel = 4});
  std::string id = h.Run(R"(
name: fan-fail
steps:
  - id: each
    type: shell
    run: "true"
    for_each: '{{ vars.items }}'
    with: {sim_ms: "{{ item.ms }}", sim_fail: "{{ item.fail }}"}
    retry: {max_attempts: 2, initial_delay: 1s}
vars:
  items: [{ms: 10000, fail: false}, {ms: 10, fail: true}, {ms: 10000, fail: false}]
)");
  StepRecord each = h.Step(id, "each");
  EXPECT_EQ(each.status, StepStatus::kFailed);
  EXPECT_EQ(each.attempts, 2);
  EXPECT_EQ(each.error["code"], "EXIT_NONZERO");
  EXPECT_EQ(each.error["details"]["item_index"], 1);
  EXPECT_EQ(h.runner->calls.size(), 6u);               // every item, twice
  EXPECT_EQ(h.runner->cancelled.size(), 4u);           // the slow siblings, each attempt
  EXPECT_LT(h.clock.Now() - 1'700'000'000'000, 5000);  // nobody waited for them
}

TEST(Engine, ForEachOverNothingCompletesWithAnEmptyArrayAndRejectsNonArrays) {
  SimHarness h;
  std::string id = h.Run(R"(
name: fan-edge
vars: {none: [], one: {a: 1}}
steps:
  - {id: empty, type: shell, run: "true", for_each: "{{ vars.none }}"}
  - {id: object, type: shell, run: "true", for_each: "{{ vars.one }}"}
)");
  EXPECT_EQ(h.Step(id, "empty").status, StepStatus::kCompleted);
  EXPECT_EQ(h.Step(id, "empty").output, Json::array());
  StepRecord object = h.Step(id, "object");
  EXPECT_EQ(object.status, StepStatus::kFailed);
  EXPECT_EQ(object.error["code"], "TEMPLATE_ERROR");
  EXPECT_EQ(h.runner->calls.size(), 0u);
}

TEST(Engine, ForEachTimeoutStopsEveryInstance) {
  SimHarness h(EngineOptions{.parallel = 4});
  std::string id = h.Run(R"(
name: fan-timeout
vars: {items: [1, 2, 3]}
steps:
  - {id: each, type: shell, run: "sleep 100", for_each: "{{ vars.items }}", timeout: 2s, with: {sim_ms: 100000}}
)");
  EXPECT_EQ(h.Step(id, "each").status, StepStatus::kTimeout);
  EXPECT_EQ(h.runner->cancelled.size(), 3u);
  EXPECT_EQ(h.runner->running, 0);
}

TEST(Engine, UnsupportedStepTypeFailsClearly) {
  SimHarness h;
  std::string id = h.Run(R"(
name: unsupported
steps:
  - {id: call, type: http, request: {method: GET, url: "http://127.0.0.1:1/"}}
)");
  StepRecord s = h.Step(id, "call");
  EXPECT_EQ(s.status, StepStatus::kFailed);
  EXPECT_EQ(s.error["code"], "UNSUPPORTED_STEP_TYPE");
}

TEST(Engine, ExecutionsOfOneDefinitionRunFromItsOneCompiledPlan) {
  SimHarness h;
  h.runner->script["work"] = {{100}, {100}, {100}};
  std::shared_ptr<const WorkflowDef> def = testing::MustParse(R"(
name: planned
inputs: {go: {type: boolean, default: true}}
steps:
  - {id: work, type: shell, run: "true"}
  - {id: gated, type: noop, depends_on: [work], when: "inputs.go"}
)");
  ASSERT_NE(def, nullptr);
  ASSERT_NE(def->plan, nullptr);
  const long held_before = def.use_count();
  std::vector<std::string> ids;
  auto start = [&](std::shared_ptr<const WorkflowDef> workflow, bool go) {
    StartRequest req;
    req.workflow = std::move(workflow);
    req.input = Json{{"go", go}};
    h.loop->Post([&] { ids.push_back(*h.engine->Start(req)); });
    h.loop->RunReady();
  };
  for (bool go : {true, false, true}) start(def, go);
  // Three executions running on the definition (which holds the plan), none with a
  // graph and conditions compiled for itself.
  EXPECT_EQ(def.use_count(), held_before + 3);
  EXPECT_EQ(def->plan.use_count(), 1);
  EXPECT_EQ(h.engine->Stats().plans_compiled, 0u);
  // A definition without its plan (built in code) runs from one compiled for it.
  auto bare = std::make_shared<WorkflowDef>(*def);
  bare->plan = nullptr;
  start(bare, false);
  EXPECT_EQ(h.engine->Stats().plans_compiled, 1u);
  h.loop->RunUntilIdle();
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_EQ(h.Step(ids[0], "gated").status, StepStatus::kCompleted);
  EXPECT_EQ(h.Step(ids[1], "gated").status, StepStatus::kSkipped);
  EXPECT_EQ(h.Step(ids[2], "gated").status, StepStatus::kCompleted);
  EXPECT_EQ(h.Step(ids[3], "gated").status, StepStatus::kSkipped);
  EXPECT_EQ(def.use_count(), held_before);  // finished executions let go of it
}

TEST(Engine, ADefinitionBuiltInCodeWithoutAPlanIsCompiledForItsExecution) {
  SimHarness h;
  auto def = std::make_shared<WorkflowDef>();
  def->name = "built";
  StepDef a, b;
  a.id = "a";
  b.id = "b";
  b.depends_on = {"a"};
  def->steps = {a, b};
  StartRequest req;
  req.workflow = def;
  std::string id;
  h.loop->Post([&] { id = *h.engine->Start(req); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(h.Execution(id).status, ExecutionStatus::kCompleted);
  EXPECT_EQ(def->plan, nullptr);  // the definition itself is left as it was

  def->steps[1].depends_on = {"zz"};
  Status refused;
  h.loop->Post([&] { refused = h.engine->Start(req).status(); });
  h.loop->RunUntilIdle();
  EXPECT_EQ(refused.code(), errc::kValidation);
  EXPECT_NE(refused.message().find("unknown step 'zz'"), std::string::npos) << refused.message();
}

}  // namespace
}  // namespace baton
