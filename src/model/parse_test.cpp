// Schema of DESIGN.md §3: fields, types, defaults, step types, YAML and JSON forms.
#include "model/test_util.h"

namespace baton {
namespace {

using testing_model::AllDiags;
using testing_model::FindDiag;
using testing_model::MustParse;
using testing_model::Parse;

constexpr const char* kExample = R"(name: deploy-model                # required
version: 2
description: Download a model, start it, route traffic to it
inputs:
  model_id: {type: string, required: true}
  gpu_node: {type: string, default: gpu-node-01}
  replicas: {type: integer, default: 2, description: how many}
timeout: 10m
max_parallel: 4
priority: high
fail_fast: true
vars: {region: eu}
defaults:
  timeout: 2m
  retry: {max_attempts: 3, initial_delay: 1s, max_delay: 1m, multiplier: 2,
          jitter: true, retry_on: [TIMEOUT, WORKER_LOST, NETWORK]}
steps:
  - id: download
    name: Download model
    type: command
    command: model.download
    resource: {type: model, id: "{{ inputs.model_id }}"}
    target: {node: "{{ inputs.gpu_node }}"}
    with: {source: huggingface, path: "openai/{{ inputs.model_id }}"}
    timeout: 5m
    heartbeat_timeout: 30s
  - id: start
    type: shell
    run: ["./start.sh", "{{ steps.download.output.path }}"]
    depends_on: [download]
  - id: route
    type: http
    request: {method: POST, url: "http://proxy.local/routes", body: {model: "{{ inputs.model_id }}"}}
    depends_on: [start]
    when: "steps.start.output.port > 0"
    optional: true
output:
  endpoint: "{{ steps.route.output.body.url }}"
notify:
  - url: https://hooks.example/x
    events: [execution.completed]
)";

TEST(Parse, DesignExample) {
  WorkflowDef wf = MustParse(kExample, "deploy.yaml");
  EXPECT_EQ(wf.name, "deploy-model");
  EXPECT_EQ(wf.version, 2);
  EXPECT_EQ(wf.description, "Download a model, start it, route traffic to it");
  ASSERT_EQ(wf.inputs.size(), 3u);
  EXPECT_EQ(wf.inputs[0].name, "gpu_node");  // JSON objects are ordered by key
  EXPECT_EQ(wf.inputs[0].default_value, Json("gpu-node-01"));
  EXPECT_EQ(wf.inputs[1].name, "model_id");
  EXPECT_TRUE(wf.inputs[1].required);
  EXPECT_EQ(wf.inputs[2].type, "integer");
  EXPECT_EQ(wf.inputs[2].description, "how many");
  EXPECT_EQ(wf.timeout, Duration{600'000});
  EXPECT_EQ(wf.max_parallel, 4);
  EXPECT_EQ(wf.priority, Priority::kHigh);
  EXPECT_TRUE(wf.fail_fast);
  EXPECT_EQ(wf.vars, Json::parse(R"({"region":"eu"})"));
  EXPECT_EQ(wf.output, Json::parse(R"({"endpoint":"{{ steps.route.output.body.url }}"})"));
  ASSERT_TRUE(wf.notify.is_array());
  EXPECT_EQ(wf.source_name, "deploy.yaml");
  EXPECT_EQ(Json::parse(*wf.source)["name"], Json("deploy-model"));

  ASSERT_EQ(wf.steps.size(), 3u);
  const StepDef& dl = wf.steps[0];
  EXPECT_EQ(dl.id, "download");
  EXPECT_EQ(dl.name, "Download model");
  EXPECT_EQ(dl.type, StepType::kCommand);
  EXPECT_EQ(dl.line, 18);
  EXPECT_EQ(dl.timeout, Duration{300'000});
  EXPECT_EQ(dl.extra().heartbeat_timeout, Duration{30'000});
  EXPECT_EQ(dl.spec["command"], Json("model.download"));
  EXPECT_EQ(dl.spec["target"]["node"], Json("{{ inputs.gpu_node }}"));
  EXPECT_EQ(dl.spec["with"]["source"], Json("huggingface"));
  EXPECT_EQ(dl.retry.max_attempts, 3);
  EXPECT_EQ(dl.retry.retry_on, (std::vector<std::string>{"TIMEOUT", "WORKER_LOST", "NETWORK"}));

  const StepDef& start = wf.steps[1];
  EXPECT_EQ(start.type, StepType::kShell);
  EXPECT_EQ(start.depends_on, std::vector<std::string>{"download"});
  EXPECT_EQ(start.timeout, Duration{120'000});  // from defaults
  EXPECT_EQ(start.spec["run"][0], Json("./start.sh"));
  EXPECT_FALSE(start.spec.contains("depends_on"));

  const StepDef& route = wf.steps[2];
  EXPECT_EQ(route.type, StepType::kHttp);
  EXPECT_TRUE(route.optional);
  EXPECT_EQ(route.when, Json("steps.start.output.port > 0"));
  EXPECT_EQ(route.spec["request"]["method"], Json("POST"));
  EXPECT_EQ(wf.FindStep("route"), 2);
  EXPECT_EQ(wf.FindStep("nope"), -1);
}

TEST(Parse, JsonFormGivesTheSameDefinition) {
  WorkflowDef from_yaml = MustParse(kExample, "deploy.yaml");
  std::string json_text = Json::parse(*from_yaml.source).dump(2);
  WorkflowDef from_json = MustParse(json_text, "deploy.json");
  EXPECT_EQ(Json::parse(*from_json.source), Json::parse(*from_yaml.source));
  EXPECT_EQ(*from_json.source, json_text);  // a JSON file is its own snapshot
  ASSERT_EQ(from_json.steps.size(), 3u);
  EXPECT_EQ(from_json.steps[2].spec, from_yaml.steps[2].spec);
  EXPECT_EQ(from_json.steps[1].timeout, Duration{120'000});
  EXPECT_GT(from_json.steps[0].line, 1);  // lines come through for JSON too
}

TEST(Parse, JsonDiagnosticsCarryLines) {
  ParseOutcome out = Parse(R"({
  "name": "j",
  "steps": [
    {"id": "a", "type": "noop"},
    {"id": "b", "type": "noop", "timeout": "5x"}
  ]
})",
                           "wf.json");
  EXPECT_DIAG(out, 5, "b", "timeout",
              "bad duration '5x' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
  EXPECT_EQ(out.diagnostics[0].file, "wf.json");
}

TEST(Parse, MalformedYamlIsOneDiagnostic) {
  ParseOutcome out = Parse("name: x\nsteps:\n  - id: a\n    type: [noop\n");
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_FALSE(out.workflow);
  EXPECT_EQ(out.diagnostics[0].file, "wf.yaml");
  EXPECT_GE(out.diagnostics[0].line, 4);
  EXPECT_EQ(out.diagnostics[0].message.rfind("invalid YAML: ", 0), 0u);
}

TEST(Parse, MalformedJsonIsOneDiagnostic) {
  ParseOutcome out = Parse("{\"name\": \"x\",\n\"steps\": [,]}", "wf.json");
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_EQ(out.diagnostics[0].line, 2);
  EXPECT_EQ(out.diagnostics[0].message.rfind("invalid JSON: ", 0), 0u);
}

TEST(Parse, DuplicateKey) {
  ParseOutcome out = Parse("name: x\nsteps:\n  - id: a\n    type: noop\n    id: b\n");
  EXPECT_DIAG(out, 5, "", "steps[0].id", "duplicate key 'id' (first defined at line 3)");
}

TEST(Parse, EmptyAndNonObjectDocuments) {
  EXPECT_DIAG(Parse(""), 0, "", "", "empty workflow document");
  EXPECT_DIAG(Parse("- a\n- b\n"), 1, "", "", "expected an object at the top level, got array");
}

TEST(Parse, RequiredTopLevelFields) {
  ParseOutcome out = Parse("description: nothing\n");
  EXPECT_DIAG(out, 1, "", "name", "missing required field 'name'");
  EXPECT_TRUE(FindDiag(out, "missing required field 'steps'"));
  EXPECT_DIAG(Parse("name: x\nsteps: []\n"), 2, "", "steps", "a workflow needs at least one step");
}

TEST(Parse, WorkflowName) {
  EXPECT_DIAG(Parse("name: Deploy Model\nsteps: [{id: a, type: noop}]\n"), 1, "", "name",
              "invalid workflow name 'Deploy Model' (expected [a-z0-9][a-z0-9_.-]*, at most "
              "253 bytes)");
  MustParse("name: a0_b.c-d\nsteps: [{id: a, type: noop}]\n");
  EXPECT_FALSE(Parse("name: -x\nsteps: [{id: a, type: noop}]\n").ok());
}

TEST(Parse, TopLevelTypesAndRanges) {
  ParseOutcome out = Parse(
      "name: x\n"
      "version: one\n"
      "max_parallel: 0\n"
      "priority: urgent\n"
      "fail_fast: yes\n"
      "vars: [1]\n"
      "timeout: 10x\n"
      "steps: [{id: a, type: noop}]\n");
  EXPECT_DIAG(out, 2, "", "version", "expected integer, got string");
  EXPECT_DIAG(out, 3, "", "max_parallel", "must be an integer >= 1");
  EXPECT_DIAG(out, 4, "", "priority",
              "unknown priority 'urgent' (valid: low, normal, high, critical)");
  EXPECT_DIAG(out, 5, "", "fail_fast", "expected boolean, got string");
  EXPECT_DIAG(out, 6, "", "vars", "expected object, got array");
  EXPECT_DIAG(out, 7, "", "timeout",
              "bad duration '10x' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
  EXPECT_DIAG(Parse("name: x\nversion: 0\nsteps: [{id: a, type: noop}]\n"), 2, "", "version",
              "must be an integer >= 1");
  EXPECT_DIAG(Parse("name: x\nversion: 1.5\nsteps: [{id: a, type: noop}]\n"), 2, "", "version",
              "expected integer, got number");
}

TEST(Parse, NotifyNamesKnownEventsAndHttpUrls) {
  ParseOutcome out = Parse(
      "name: x\n"
      "notify:\n"
      "  - {url: 'ftp://files/x', events: [execution.completed]}\n"
      "  - {url: 'https://hooks.example/y', events: [execution.finished]}\n"
      "steps: [{id: a, type: noop}]\n");
  EXPECT_DIAG(out, 3, "", "notify[0].url",
              "expected an http:// or https:// URL, got 'ftp://files/x'");
  EXPECT_DIAG(out, 4, "", "notify[1].events[0]",
              "unknown event 'execution.finished' (valid: execution.cancelled, "
              "execution.completed, execution.failed, execution.timed_out)");
}

TEST(Parse, PoolAndPoolSlots) {
  ParseOutcome ok = Parse("name: x\nsteps: [{id: a, type: noop, pool: gpu, pool_slots: 2}]\n");
  ASSERT_TRUE(ok.ok()) << ok.ToStatus().message();
  EXPECT_EQ(ok.workflow->steps[0].extra().pool, "gpu");
  EXPECT_EQ(ok.workflow->steps[0].extra().pool_slots, 2);
  ParseOutcome out = Parse(
      "name: x\nsteps:\n  - {id: a, type: noop, pool: GPU!, pool_slots: 0}\n"
      "  - {id: b, type: noop, pool_slots: 1}\n");
  EXPECT_DIAG(out, 3, "a", "pool",
              "invalid pool name 'GPU!' (expected [a-z0-9][a-z0-9_.-]*, at most 253 bytes)");
  EXPECT_DIAG(out, 3, "a", "pool_slots", "must be an integer from 1 to 1000000");
  EXPECT_DIAG(out, 4, "b", "pool_slots", "pool_slots needs a pool");
}

TEST(Parse, Concurrency) {
  ParseOutcome ok = Parse(
      "name: x\nconcurrency: {limit: 2, key: '{{ inputs.c }}', policy: cancel_oldest}\n"
      "inputs: {c: {type: string}}\nsteps: [{id: a, type: noop}]\n");
  ASSERT_TRUE(ok.ok()) << ok.ToStatus().message();
  ASSERT_TRUE(ok.workflow->concurrency);
  EXPECT_EQ(ok.workflow->concurrency->limit, 2);
  EXPECT_EQ(ok.workflow->concurrency->key, "{{ inputs.c }}");
  EXPECT_EQ(ok.workflow->concurrency->policy, ConcurrencyPolicy::kCancelOldest);
  ParseOutcome out = Parse(
      "name: x\nconcurrency: {limit: 0, policy: newest, keys: a}\nsteps: [{id: a, type: noop}]\n");
  EXPECT_DIAG(out, 2, "", "concurrency.limit", "must be an integer from 1 to 1000000");
  EXPECT_DIAG(out, 2, "", "concurrency.policy",
              "unknown policy 'newest' (expected queue, cancel_newest or cancel_oldest)");
  EXPECT_DIAG(out, 2, "", "concurrency.keys", "unknown field 'keys' (valid: key, limit, policy)");
}

TEST(Parse, UnknownFieldsEverywhere) {
  ParseOutcome out = Parse(
      "name: x\n"
      "stepz: []\n"
      "defaults: {timeout: 1s, colour: red}\n"
      "inputs:\n"
      "  a: {type: string, requird: true}\n"
      "notify: [{url: 'http://x', event: [a]}]\n"
      "steps:\n"
      "  - id: a\n"
      "    type: noop\n"
      "    retry: {max_attempts: 2, backoff: 3}\n"
      "    cache: {ttl: 1h, size: 3}\n");
  EXPECT_DIAG(out, 2, "", "stepz",
              "unknown field 'stepz' (valid: concurrency, defaults, description, fail_fast, "
              "inputs, max_parallel, name, notify, output, priority, steps, timeout, vars, "
              "version)");
  EXPECT_DIAG(out, 3, "", "defaults.colour",
              "unknown field 'colour' (valid: circuit_breaker, heartbeat_timeout, optional, "
              "priority, retry, "
              "timeout, trigger_rule)");
  EXPECT_DIAG(out, 5, "", "inputs.a.requird",
              "unknown field 'requird' (valid: default, description, required, type)");
  EXPECT_DIAG(out, 6, "", "notify[0].event", "unknown field 'event' (valid: events, url)");
  EXPECT_DIAG(out, 10, "a", "retry.backoff",
              "unknown field 'backoff' (valid: initial_delay, jitter, max_attempts, max_delay, "
              "multiplier, retry_on)");
  EXPECT_DIAG(out, 11, "a", "cache.size", "unknown field 'size' (valid: key, ttl)");
}

TEST(Parse, FieldOfAnotherStepTypeIsUnknown) {
  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - id: a\n"
      "    type: http\n"
      "    request: {url: 'http://x'}\n"
      "    run: echo hi\n");
  EXPECT_DIAG(out, 6, "a", "run",
              "unknown field 'run' for step type 'http' (valid: accept, cache, circuit_breaker, "
              "depends_on, "
              "description, expected_duration, for_each, heartbeat_timeout, id, name, optional, "
              "pool, pool_slots, priority, request, retry, set_vars, timeout, trigger_rule, type, "
              "when, with)");
}

TEST(Parse, StepIdAndType) {
  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - type: noop\n"
      "  - id: 'bad id'\n"
      "    type: noop\n"
      "  - id: c\n"
      "    type: lambda\n"
      "  - id: d\n"
      "  - 42\n");
  EXPECT_DIAG(out, 3, "", "steps[0].id", "missing required field 'id'");
  EXPECT_DIAG(out, 4, "bad id", "id",
              "invalid step id 'bad id' (expected letters, digits, '_' or '-', at most 253 bytes)");
  EXPECT_DIAG(out, 7, "c", "type",
              "unknown step type 'lambda' (valid: noop, shell, http, wait, command, workflow)");
  EXPECT_DIAG(out, 8, "d", "type", "missing required field 'type'");
  EXPECT_DIAG(out, 9, "", "steps[4]", "expected object, got integer");
}

TEST(Parse, StepFieldTypes) {
  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - id: a\n"
      "    type: noop\n"
      "    optional: 'true'\n"
      "    trigger_rule: whenever\n"
      "    priority: 3\n"
      "    depends_on: {a: 1}\n"
      "    when: 5\n"
      "    timeout: 0s\n"
      "    heartbeat_timeout: -1\n"
      "    name: [x]\n"
      "    for_each: items\n"
      "    retry: {max_attempts: 0, multiplier: 0.5, jitter: 1, retry_on: TIMEOUT}\n");
  EXPECT_DIAG(out, 5, "a", "optional", "expected boolean, got string");
  EXPECT_DIAG(out, 6, "a", "trigger_rule",
              "unknown trigger rule 'whenever' (valid: all_success, all_done, all_failed, "
              "one_success, one_failed, none_failed, none_skipped, always)");
  EXPECT_DIAG(out, 7, "a", "priority", "expected string, got integer");
  EXPECT_DIAG(out, 8, "a", "depends_on", "expected array of step ids or a string, got object");
  EXPECT_DIAG(out, 9, "a", "when", "expected string or object, got integer");
  EXPECT_DIAG(out, 10, "a", "timeout", "must be greater than 0");
  EXPECT_DIAG(out, 11, "a", "heartbeat_timeout",
              "bad duration '-1' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
  EXPECT_DIAG(out, 12, "a", "name", "expected string, got array");
  EXPECT_DIAG(out, 13, "a", "for_each",
              "expected a template that yields an array, e.g. \"{{ steps.list.output.items }}\"");
  EXPECT_DIAG(out, 14, "a", "retry.max_attempts", "must be at least 1");
  EXPECT_DIAG(out, 14, "a", "retry.multiplier", "must be at least 1");
  EXPECT_DIAG(out, 14, "a", "retry.jitter", "expected boolean, got integer");
  EXPECT_DIAG(out, 14, "a", "retry.retry_on", "expected array, got string");
}

TEST(Parse, DependsOnAcceptsOneString) {
  WorkflowDef wf = MustParse(
      "name: x\nsteps:\n  - {id: a, type: noop}\n  - {id: b, type: noop, depends_on: a}\n"
      "  - {id: c, type: noop, depends_on: [a, b, a]}\n");
  EXPECT_EQ(wf.steps[1].depends_on, std::vector<std::string>{"a"});
  EXPECT_EQ(wf.steps[2].depends_on, (std::vector<std::string>{"a", "b"}));
}

TEST(Parse, RepeatedDependenciesAreDroppedInShortAndLongLists) {
  // Past 32 entries the repeats are found by a set instead of a scan: same result.
  std::string yaml = "name: x\nsteps:\n";
  std::string all;
  for (int i = 0; i < 40; ++i) {
    yaml += "  - {id: s" + std::to_string(i) + ", type: noop}\n";
    all += "s" + std::to_string(i) + ", ";
  }
  yaml += "  - {id: join, type: noop, depends_on: [" + all + all + "s0, s39]}\n";
  WorkflowDef wf = MustParse(yaml);
  const std::vector<std::string>& deps = wf.steps.back().depends_on;
  ASSERT_EQ(deps.size(), 40u);
  EXPECT_EQ(deps.front(), "s0");
  EXPECT_EQ(deps.back(), "s39");
  EXPECT_EQ(wf.plan->graph.Upstream(40).size(), 40u);
}

TEST(Parse, ADependencyThatIsNotAStringIsReportedAtItsIndex) {
  ParseOutcome out = ParseWorkflow(
      "name: x\nsteps:\n  - {id: a, type: noop}\n"
      "  - {id: b, type: noop, depends_on: [a, 7]}\n",
      "t.yaml");
  ASSERT_FALSE(out.ok());
  EXPECT_DIAG(out, 4, "b", "depends_on[1]", "expected string, got integer");
}

TEST(Parse, DefaultsAreInheritedAndRetryMergesFieldByField) {
  WorkflowDef wf = MustParse(
      "name: x\n"
      "defaults:\n"
      "  timeout: 2m\n"
      "  heartbeat_timeout: 20s\n"
      "  priority: low\n"
      "  trigger_rule: all_done\n"
      "  optional: true\n"
      "  retry: {max_attempts: 3, initial_delay: 2s, max_delay: 1m, multiplier: 3, jitter: true,\n"
      "          retry_on: [TIMEOUT]}\n"
      "steps:\n"
      "  - id: plain\n"
      "    type: command\n"
      "    command: c\n"
      "  - id: custom\n"
      "    type: command\n"
      "    command: c\n"
      "    timeout: 10s\n"
      "    heartbeat_timeout: 5s\n"
      "    priority: critical\n"
      "    trigger_rule: always\n"
      "    optional: false\n"
      "    retry: {max_attempts: 5, jitter: false}\n"
      "  - id: shorthand\n"
      "    type: noop\n"
      "    retry: 7\n");
  const StepDef& p = wf.steps[0];
  EXPECT_EQ(p.timeout, Duration{120'000});
  EXPECT_EQ(p.extra().heartbeat_timeout, Duration{20'000});
  EXPECT_EQ(p.priority, Priority::kLow);
  EXPECT_EQ(p.trigger_rule, TriggerRule::kAllDone);
  EXPECT_TRUE(p.optional);
  EXPECT_EQ(p.retry.max_attempts, 3);
  EXPECT_EQ(p.retry.initial_delay, Duration{2000});
  EXPECT_EQ(p.retry.max_delay, Duration{60'000});
  EXPECT_DOUBLE_EQ(p.retry.multiplier, 3.0);
  EXPECT_TRUE(p.retry.jitter);
  EXPECT_EQ(p.retry.retry_on, std::vector<std::string>{"TIMEOUT"});

  const StepDef& c = wf.steps[1];
  EXPECT_EQ(c.timeout, Duration{10'000});
  EXPECT_EQ(c.extra().heartbeat_timeout, Duration{5000});
  EXPECT_EQ(c.priority, Priority::kCritical);
  EXPECT_EQ(c.trigger_rule, TriggerRule::kAlways);
  EXPECT_FALSE(c.optional);
  EXPECT_EQ(c.retry.max_attempts, 5);                // overridden
  EXPECT_FALSE(c.retry.jitter);                      // overridden
  EXPECT_EQ(c.retry.initial_delay, Duration{2000});  // inherited
  EXPECT_DOUBLE_EQ(c.retry.multiplier, 3.0);         // inherited
  EXPECT_EQ(c.retry.retry_on, std::vector<std::string>{"TIMEOUT"});

  EXPECT_EQ(wf.steps[2].retry.max_attempts, 7);
  EXPECT_EQ(wf.steps[2].retry.initial_delay, Duration{2000});
}

TEST(Parse, NoDefaults) {
  WorkflowDef wf = MustParse("name: x\nsteps: [{id: a, type: noop}]\n");
  const StepDef& s = wf.steps[0];
  EXPECT_FALSE(s.timeout);
  EXPECT_FALSE(s.extra().heartbeat_timeout);
  EXPECT_EQ(s.retry.max_attempts, 1);
  EXPECT_EQ(s.trigger_rule, TriggerRule::kAllSuccess);
  EXPECT_EQ(s.priority, Priority::kNormal);
  EXPECT_FALSE(s.optional);
  EXPECT_EQ(s.spec, Json::object());
  EXPECT_TRUE(s.when.is_null());
  EXPECT_TRUE(s.for_each.is_null());
  EXPECT_FALSE(s.extra().cache);
  EXPECT_EQ(wf.version, 1);
  EXPECT_EQ(wf.max_parallel, 0);
  EXPECT_TRUE(wf.output.is_null());
  EXPECT_TRUE(wf.notify.is_null());
}

// Issue 16: a shell step with heartbeat_timeout validated, then always failed once it ran
// longer (no shell step reports progress). Only command steps take one.
TEST(Parse, HeartbeatTimeoutIsForCommandStepsOnly) {
  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - {id: a, type: shell, run: x, heartbeat_timeout: 5s}\n"
      "  - {id: b, type: http, url: 'http://h/', heartbeat_timeout: 5s}\n");
  EXPECT_DIAG(out, 3, "a", "heartbeat_timeout",
              "applies to command steps, whose worker's progress resets it; a shell step "
              "reports no progress, so it would time out however well it ran (use timeout)");
  EXPECT_DIAG(out, 4, "b", "heartbeat_timeout",
              "applies to command steps, whose worker's progress resets it; a http step "
              "reports no progress, so it would time out however well it ran (use timeout)");
  // A default one reaches the command steps and leaves the others alone.
  WorkflowDef wf = MustParse(
      "name: x\n"
      "defaults: {heartbeat_timeout: 30s}\n"
      "steps:\n"
      "  - {id: a, type: shell, run: x}\n"
      "  - {id: b, type: command, command: c}\n");
  EXPECT_FALSE(wf.steps[0].extra().heartbeat_timeout);
  EXPECT_EQ(wf.steps[1].extra().heartbeat_timeout, Duration{30'000});
}

TEST(Parse, InputDeclarations) {
  ParseOutcome out = Parse(
      "name: x\n"
      "inputs:\n"
      "  n: {type: integer, default: many}\n"
      "  t: {type: text}\n"
      "  short: boolean\n"
      "  inferred: {default: 3}\n"
      "  bad name: {}\n"
      "  r: {required: maybe}\n"
      "steps: [{id: a, type: noop}]\n");
  EXPECT_DIAG(out, 3, "", "inputs.n.default",
              "default does not match type integer: expected integer, got string");
  EXPECT_DIAG(out, 4, "", "inputs.t.type",
              "unknown input type 'text' (valid: string, integer, number, boolean, object, array)");
  EXPECT_DIAG(out, 7, "", "inputs.bad name",
              "invalid input name 'bad name' (expected letters, digits, '_' or '-', starting "
              "with a letter or '_', at most 253 bytes)");
  EXPECT_DIAG(out, 8, "", "inputs.r.required", "expected boolean, got string");

  WorkflowDef wf = MustParse(
      "name: x\ninputs:\n  short: boolean\n  inferred: {default: 3}\n  o: {type: object, "
      "default: {a: 1}}\nsteps: [{id: a, type: noop}]\n");
  EXPECT_EQ(wf.inputs[0].name, "inferred");
  EXPECT_EQ(wf.inputs[0].type, "integer");
  EXPECT_EQ(wf.inputs[2].name, "short");
  EXPECT_EQ(wf.inputs[2].type, "boolean");
}

TEST(Parse, QuotedScalarsStayStrings) {
  WorkflowDef wf = MustParse(
      "name: x\nsteps:\n  - {id: a, type: noop, with: {s: '5', n: 5, b: 'true', t: true, z: ~}}\n");
  const Json& with = wf.steps[0].spec["with"];
  EXPECT_EQ(with["s"], Json("5"));
  EXPECT_EQ(with["n"], Json(5));
  EXPECT_EQ(with["b"], Json("true"));
  EXPECT_EQ(with["t"], Json(true));
  EXPECT_TRUE(with["z"].is_null());
}

TEST(Parse, DiagnosticsAreSortedByLine) {
  ParseOutcome out = Parse(
      "name: x\nsteps:\n  - {id: a, type: noop, timeout: bad}\n  - {id: a, type: noop}\n"
      "stray: 1\n");
  ASSERT_GE(out.diagnostics.size(), 3u);
  for (size_t i = 1; i < out.diagnostics.size(); ++i) {
    EXPECT_LE(out.diagnostics[i - 1].line, out.diagnostics[i].line) << AllDiags(out);
  }
}

TEST(Parse, LoadWorkflowFile) {
  std::string path = ::testing::TempDir() + "/baton_model_load_test.yaml";
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("name: x\nsteps:\n  - {id: a, type: noop, timeout: 5x}\n", f);
    std::fclose(f);
  }
  ParseOutcome out = LoadWorkflowFile(path);
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_EQ(out.diagnostics[0].file, path);
  EXPECT_EQ(out.diagnostics[0].ToString(),
            path +
                ":3: step 'a': field 'timeout': bad duration '5x' (expected e.g. 250ms, 30s, "
                "5m, 1h30m or seconds)");
  std::remove(path.c_str());

  ParseOutcome missing = LoadWorkflowFile("/nonexistent/dir/wf.yaml");
  ASSERT_EQ(missing.diagnostics.size(), 1u);
  EXPECT_EQ(missing.diagnostics[0].message, "cannot read file: No such file or directory");
  EXPECT_EQ(LoadWorkflowFile(::testing::TempDir()).diagnostics.size(), 1u);
}

}  // namespace
}  // namespace baton
