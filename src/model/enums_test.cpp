// Enum names, retry policy, diagnostics text and snapshots.
#include "model/test_util.h"

namespace baton {
namespace {

using testing_model::ExpectSameStep;
using testing_model::MustParse;

TEST(Enums, RoundTrip) {
  for (StepType t : {StepType::kNoop, StepType::kShell, StepType::kHttp, StepType::kWait,
                     StepType::kCommand, StepType::kWorkflow}) {
    EXPECT_EQ(ParseStepType(ToString(t)), t);
  }
  for (TriggerRule r : {TriggerRule::kAllSuccess, TriggerRule::kAllDone, TriggerRule::kAllFailed,
                        TriggerRule::kOneSuccess, TriggerRule::kOneFailed, TriggerRule::kNoneFailed,
                        TriggerRule::kNoneSkipped, TriggerRule::kAlways}) {
    EXPECT_EQ(ParseTriggerRule(ToString(r)), r);
  }
  for (Priority p : {Priority::kLow, Priority::kNormal, Priority::kHigh, Priority::kCritical}) {
    EXPECT_EQ(ParsePriority(ToString(p)), p);
  }
  EXPECT_STREQ(ToString(StepType::kHttp), "http");
  EXPECT_STREQ(ToString(TriggerRule::kNoneSkipped), "none_skipped");
  EXPECT_STREQ(ToString(Priority::kCritical), "critical");
  EXPECT_FALSE(ParseStepType("Shell"));
  EXPECT_FALSE(ParseTriggerRule("all-success"));
  EXPECT_FALSE(ParsePriority(""));
}

TEST(Retry, IsRetryable) {
  RetryPolicy p;
  EXPECT_TRUE(p.IsRetryable("TIMEOUT"));
  EXPECT_TRUE(p.IsRetryable("EXIT_NONZERO"));
  EXPECT_TRUE(p.IsRetryable("SOME_WORKER_CODE"));
  EXPECT_FALSE(p.IsRetryable("TEMPLATE_ERROR"));
  EXPECT_FALSE(p.IsRetryable("VALIDATION"));
  EXPECT_FALSE(p.IsRetryable("CANCELLED"));
  p.retry_on = {"TIMEOUT", "NETWORK"};
  EXPECT_TRUE(p.IsRetryable("NETWORK"));
  EXPECT_FALSE(p.IsRetryable("EXIT_NONZERO"));
}

TEST(Retry, DelayBefore) {
  RetryPolicy p;
  p.initial_delay = Duration{1000};
  p.max_delay = Duration{10'000};
  p.multiplier = 2;
  EXPECT_EQ(p.DelayBefore(1), Duration{0});
  EXPECT_EQ(p.DelayBefore(2), Duration{1000});
  EXPECT_EQ(p.DelayBefore(3), Duration{2000});
  EXPECT_EQ(p.DelayBefore(4), Duration{4000});
  EXPECT_EQ(p.DelayBefore(5), Duration{8000});
  EXPECT_EQ(p.DelayBefore(6), Duration{10'000});
  EXPECT_EQ(p.DelayBefore(5000), Duration{10'000});  // no overflow
  p.multiplier = 1;
  EXPECT_EQ(p.DelayBefore(9), Duration{1000});
}

TEST(Diagnostic, ToStringOmitsEmptyParts) {
  EXPECT_EQ((Diagnostic{"deploy.yaml", 12, "start", "timeout", "bad"}).ToString(),
            "deploy.yaml:12: step 'start': field 'timeout': bad");
  EXPECT_EQ((Diagnostic{"deploy.yaml", 0, "", "", "cannot read file"}).ToString(),
            "deploy.yaml: cannot read file");
  EXPECT_EQ((Diagnostic{"f", 3, "", "name", "m"}).ToString(), "f:3: field 'name': m");
  EXPECT_EQ((Diagnostic{"f", 3, "s", "", "m"}).ToString(), "f:3: step 's': m");
  EXPECT_EQ((Diagnostic{"", 3, "", "", "m"}).ToString(), "line 3: m");
  EXPECT_EQ((Diagnostic{"", 0, "", "", "m"}).ToString(), "m");
}

TEST(ParseOutcomeTest, ToStatus) {
  ParseOutcome ok;
  EXPECT_TRUE(ok.ToStatus().ok());
  ParseOutcome bad;
  bad.diagnostics.push_back(Diagnostic{"f", 1, "", "", "one"});
  bad.diagnostics.push_back(Diagnostic{"f", 2, "", "", "two"});
  Status st = bad.ToStatus();
  EXPECT_EQ(st.code(), errc::kValidation);
  EXPECT_EQ(st.message(), "f:1: one\nf:2: two");
}

TEST(Snapshot, RoundTripGivesTheSameDefinition) {
  WorkflowDef wf = MustParse(
      "name: snap\n"
      "version: 3\n"
      "description: d\n"
      "inputs: {n: {type: integer, default: 2, required: true, description: count}}\n"
      "timeout: 1h\n"
      "max_parallel: 2\n"
      "priority: low\n"
      "fail_fast: true\n"
      "vars: {v: 1}\n"
      "defaults: {timeout: 1m, retry: {max_attempts: 2, retry_on: [TIMEOUT]}}\n"
      "steps:\n"
      "  - {id: list, type: shell, run: [echo, '[1,2]'], env: {A: b}, max_output: 1MiB}\n"
      "  - id: each\n"
      "    type: http\n"
      "    depends_on: list\n"
      "    for_each: '{{ steps.list.output }}'\n"
      "    request: {url: 'http://x/{{ item }}', method: GET}\n"
      "    when: {field: inputs.n, op: gt, value: 1}\n"
      "    cache: {ttl: 5m}\n"
      "    trigger_rule: all_done\n"
      "output: '{{ steps.each.output }}'\n"
      "notify: [{url: 'http://hook', events: [execution.failed]}]\n",
      "snap.yaml");
  // The snapshot is stored as JSON text and read back.
  Json stored = Json::parse(*wf.source);
  Result<WorkflowDef> back = WorkflowFromSnapshot(stored, "snap.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->name, wf.name);
  EXPECT_EQ(back->version, wf.version);
  EXPECT_EQ(back->description, wf.description);
  ASSERT_EQ(back->inputs.size(), wf.inputs.size());
  EXPECT_EQ(back->inputs[0].name, wf.inputs[0].name);
  EXPECT_EQ(back->inputs[0].type, wf.inputs[0].type);
  EXPECT_EQ(back->inputs[0].required, wf.inputs[0].required);
  EXPECT_EQ(back->inputs[0].default_value, wf.inputs[0].default_value);
  EXPECT_EQ(back->inputs[0].description, wf.inputs[0].description);
  EXPECT_EQ(back->timeout, wf.timeout);
  EXPECT_EQ(back->max_parallel, wf.max_parallel);
  EXPECT_EQ(back->priority, wf.priority);
  EXPECT_EQ(back->fail_fast, wf.fail_fast);
  EXPECT_EQ(back->vars, wf.vars);
  EXPECT_EQ(back->output, wf.output);
  EXPECT_EQ(back->notify, wf.notify);
  EXPECT_EQ(*back->source, *wf.source);
  EXPECT_EQ(back->source_name, "snap.yaml");
  ASSERT_EQ(back->steps.size(), wf.steps.size());
  for (size_t i = 0; i < wf.steps.size(); ++i) ExpectSameStep(back->steps[i], wf.steps[i]);
  EXPECT_EQ(back->steps[0].line, 0);  // a snapshot has no lines
  EXPECT_EQ(wf.steps[0].line, 12);
}

TEST(Snapshot, InvalidSnapshotIsAValidationError) {
  Result<WorkflowDef> r = WorkflowFromSnapshot(Json::parse(R"({"name": "x"})"), "s");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), errc::kValidation);
  EXPECT_EQ(r.status().message(), "s: field 'steps': missing required field 'steps'");
}

}  // namespace
}  // namespace baton
