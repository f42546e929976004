// Step types and their fields (DESIGN.md §3 "Step types").
#include "model/test_util.h"

namespace baton {
namespace {

using testing_model::MustParse;
using testing_model::Parse;

TEST(ParseStep, ShellStep) {
  WorkflowDef wf = MustParse(
      "name: x\n"
      "steps:\n"
      "  - id: a\n"
      "    type: shell\n"
      "    run: echo hi | wc -c\n"
      "    env: {A: 1, B_2: x}\n"
      "    cwd: /tmp\n"
      "    stdin: hello\n"
      "    max_output: 1MiB\n"
      "    memory: 268435456\n"
      "    cpu_time: 30s\n"
      "    with: {x: 1}\n");
  EXPECT_EQ(wf.steps[0].spec["run"], Json("echo hi | wc -c"));
  EXPECT_EQ(wf.steps[0].spec["max_output"], Json("1MiB"));  // as written
  EXPECT_EQ(wf.steps[0].spec["with"]["x"], Json(1));

  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - id: a\n"
      "    type: shell\n"
      "    env: {1A: x, B: [1]}\n"
      "    max_output: lots\n"
      "    memory: -5\n"
      "    cpu_time: 5 minutes\n"
      "    cwd: 5\n"
      "  - id: b\n"
      "    type: shell\n"
      "    run: [echo, {a: 1}]\n"
      "  - id: c\n"
      "    type: shell\n"
      "    run: []\n"
      "  - id: d\n"
      "    type: shell\n"
      "    run: 5\n");
  EXPECT_DIAG(out, 3, "a", "run", "missing required field 'run'");
  EXPECT_DIAG(out, 5, "a", "env.1A", "invalid environment variable name '1A'");
  EXPECT_DIAG(out, 5, "a", "env.B", "expected string, number or boolean, got array");
  EXPECT_DIAG(out, 6, "a", "max_output",
              "bad size 'lots' (expected bytes or e.g. 512KiB, 1MiB, 2GB)");
  EXPECT_DIAG(out, 7, "a", "memory", "bad size '-5' (expected bytes or e.g. 512KiB, 1MiB, 2GB)");
  EXPECT_DIAG(out, 8, "a", "cpu_time",
              "bad duration '5 minutes' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
  EXPECT_DIAG(out, 9, "a", "cwd", "expected string, got integer");
  EXPECT_DIAG(out, 12, "b", "run[1]", "expected string, number or boolean, got object");
  EXPECT_DIAG(out, 15, "c", "run", "empty command");
  EXPECT_DIAG(out, 18, "d", "run", "expected string or array, got integer");
}

TEST(ParseStep, HttpStep) {
  WorkflowDef wf = MustParse(
      "name: x\n"
      "steps:\n"
      "  - id: a\n"
      "    type: http\n"
      "    request:\n"
      "      method: put\n"
      "      url: https://x/y\n"
      "      headers: {Authorization: Bearer t}\n"
      "      body: {k: [1, 2]}\n"
      "      timeout: 10s\n"
      "      max_redirects: 0\n"
      "      max_output: 4MiB\n"
      "    accept: [404, 409, '5xx', '300-302', '{{ inputs.code }}']\n");
  EXPECT_EQ(wf.steps[0].spec["accept"],
            Json::parse(R"([404, 409, "5xx", "300-302", "{{ inputs.code }}"])"));
  EXPECT_EQ(wf.steps[0].spec["request"]["max_redirects"], 0);

  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - id: a\n"
      "    type: http\n"
      "    request:\n"
      "      method: FETCH\n"
      "      uri: x\n"
      "    accept: [99, x]\n"
      "  - id: b\n"
      "    type: http\n"
      "    request: {url: 'ftp://x', timeout: soon, headers: [1]}\n"
      "  - id: c\n"
      "    type: http\n"
      "  - id: d\n"
      "    type: http\n"
      "    request: {url: 'http://x', max_redirects: -1, max_output: lots}\n"
      "    accept: ['4xz', '500-400', 600, '99x']\n");
  EXPECT_DIAG(out, 6, "a", "request.method",
              "unknown HTTP method 'FETCH' (valid: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)");
  EXPECT_DIAG(out, 7, "a", "request.uri",
              "unknown field 'uri' (valid: body, headers, max_output, max_redirects, method, "
              "timeout, url)");
  EXPECT_DIAG(out, 5, "a", "request.url", "missing required field 'url'");
  EXPECT_DIAG(out, 8, "a", "accept[0]", "HTTP status must be between 100 and 599");
  EXPECT_DIAG(out, 8, "a", "accept[1]",
              "expected a status (404), a class (\"4xx\") or a range (\"400-499\"), got 'x'");
  EXPECT_DIAG(out, 16, "d", "request.max_redirects", "expected a non-negative integer");
  EXPECT_DIAG(out, 16, "d", "request.max_output",
              "bad size 'lots' (expected bytes or e.g. 512KiB, 1MiB, 2GB)");
  EXPECT_DIAG(out, 17, "d", "accept[0]",
              "expected a status (404), a class (\"4xx\") or a range (\"400-499\"), got '4xz'");
  EXPECT_DIAG(out, 17, "d", "accept[1]", "empty status range '500-400'");
  EXPECT_DIAG(out, 17, "d", "accept[2]", "HTTP status must be between 100 and 599");
  EXPECT_DIAG(out, 17, "d", "accept[3]",
              "expected a status (404), a class (\"4xx\") or a range (\"400-499\"), got '99x'");
  EXPECT_DIAG(out, 11, "b", "request.url", "expected an http:// or https:// URL, got 'ftp://x'");
  EXPECT_DIAG(out, 11, "b", "request.timeout",
              "bad duration 'soon' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
  EXPECT_DIAG(out, 11, "b", "request.headers", "expected object, got array");
  EXPECT_DIAG(out, 12, "c", "request", "missing required field 'request'");
}

TEST(ParseStep, WaitStep) {
  WorkflowDef wf = MustParse(
      "name: x\nsteps:\n  - {id: a, type: wait, duration: 5m}\n"
      "  - {id: b, type: wait, until: '2030-01-01T00:00:00Z'}\n"
      "  - {id: c, type: wait, duration: '{{ inputs.delay }}'}\n");
  EXPECT_EQ(wf.steps[0].spec["duration"], Json("5m"));
  ParseOutcome out = Parse(
      "name: x\nsteps:\n"
      "  - {id: a, type: wait}\n"
      "  - {id: b, type: wait, duration: 1s, until: x}\n"
      "  - {id: c, type: wait, duration: 1y}\n");
  EXPECT_DIAG(out, 3, "a", "", "a wait step needs 'duration', 'until' or 'signal'");
  EXPECT_DIAG(out, 4, "b", "until", "a wait step takes one of 'duration', 'until' and 'signal'");
  EXPECT_DIAG(out, 5, "c", "duration",
              "bad duration '1y' (expected e.g. 250ms, 30s, 5m, 1h30m or seconds)");
}

TEST(ParseStep, SignalWaitStep) {
  WorkflowDef wf = MustParse(
      "name: x\nsteps:\n"
      "  - id: approve\n    type: wait\n    signal: approve.prod\n    timeout: 1h\n"
      "    schema: {type: object, required: [by], properties: {by: {type: string}}}\n");
  EXPECT_EQ(wf.steps[0].spec["signal"], Json("approve.prod"));
  EXPECT_EQ(wf.steps[0].spec["schema"]["required"][0], Json("by"));
  ParseOutcome out = Parse(
      "name: x\nsteps:\n"
      "  - {id: a, type: wait, signal: go, duration: 1s}\n"
      "  - {id: b, type: wait, signal: '{{ inputs.name }}'}\n"
      "  - {id: c, type: wait, duration: 1s, schema: {type: object}}\n"
      "  - {id: d, type: wait, signal: go, schema: {type: text}}\n"
      "  - {id: e, type: wait, signal: go, schema: {type: object, pattern: x}}\n");
  EXPECT_DIAG(out, 3, "a", "signal", "a wait step takes one of 'duration', 'until' and 'signal'");
  EXPECT_DIAG(out, 4, "b", "signal",
              "a signal name is 1 to 253 letters, digits, '_', '-' or '.' (not a template)");
  EXPECT_DIAG(out, 5, "c", "schema", "'schema' describes a signal's payload: add 'signal'");
  EXPECT_DIAG(out, 6, "d", "schema",
              "/type: unknown type \"text\" (object, array, string, number, integer, boolean, "
              "null)");
  EXPECT_DIAG(out, 7, "e", "schema",
              "/pattern: unknown schema keyword (supported: type, properties, required, "
              "additionalProperties, items, enum, minLength, maxLength, minimum, maximum, "
              "minItems, maxItems, description, title)");
  EXPECT_DIAG(Parse("name: x\nsteps:\n  - {id: f, type: wait, signal: ..}\n"), 3, "f", "signal",
              "a signal name is 1 to 253 letters, digits, '_', '-' or '.' (not a template)");
  EXPECT_DIAG(Parse("name: x\nsteps:\n"
                    "  - {id: g, type: wait, signal: go, for_each: '{{ inputs.xs }}'}\n"),
              3, "g", "for_each", "a wait step on a signal cannot fan out");
}

TEST(ParseStep, CommandStep) {
  WorkflowDef wf = MustParse(
      "name: x\nsteps:\n"
      "  - {id: a, type: command, command: model.download, resource: {type: model, id: m},\n"
      "     target: {tags: [gpu]}, data: {k: v}}\n");
  EXPECT_EQ(wf.steps[0].spec["target"]["tags"][0], Json("gpu"));
  EXPECT_EQ(wf.steps[0].spec["data"]["k"], Json("v"));
  ParseOutcome out = Parse(
      "name: x\nsteps:\n"
      "  - {id: a, type: command}\n"
      "  - {id: b, type: command, command: c, target: {node: n, tags: [t]}}\n"
      "  - {id: c, type: command, command: c, target: {}, resource: 3}\n"
      "  - {id: d, type: command, command: c, target: {host: h}}\n");
  EXPECT_DIAG(out, 3, "a", "command", "missing required field 'command'");
  EXPECT_DIAG(out, 4, "b", "target", "a target names a node or tags, not both");
  EXPECT_DIAG(out, 5, "c", "target", "a target needs 'node' or 'tags'");
  EXPECT_DIAG(out, 5, "c", "resource", "expected object, got integer");
  EXPECT_DIAG(out, 6, "d", "target.host", "unknown field 'host' (valid: node, tags)");
}

TEST(ParseStep, WorkflowStep) {
  WorkflowDef wf =
      MustParse("name: x\nsteps:\n  - {id: a, type: workflow, workflow: child, input: {k: 1}}\n");
  EXPECT_EQ(wf.steps[0].spec["workflow"], Json("child"));
  EXPECT_EQ(wf.steps[0].spec["input"]["k"], Json(1));
  ParseOutcome out = Parse("name: x\nsteps:\n  - {id: a, type: workflow, input: [1]}\n");
  EXPECT_DIAG(out, 3, "a", "workflow", "missing required field 'workflow'");
  EXPECT_DIAG(out, 3, "a", "input", "expected object or template, got array");
}

TEST(ParseStep, WorkflowStepVersionNameForEachAndSelfCycle) {
  WorkflowDef wf =
      MustParse("name: x\nsteps:\n  - {id: a, type: workflow, workflow: c, version: 2}\n");
  EXPECT_EQ(wf.steps[0].spec["version"], Json(2));
  ParseOutcome out = Parse(
      "name: x\nsteps:\n"
      "  - {id: a, type: workflow, workflow: Bad Name, version: 0}\n"
      "  - {id: b, type: workflow, workflow: c, for_each: [1, 2]}\n"
      "  - {id: c, type: workflow, workflow: x}\n");
  EXPECT_DIAG(
      out, 3, "a", "workflow",
      "invalid workflow name 'Bad Name' (expected [a-z0-9][a-z0-9_.-]*, at most 253 bytes)");
  EXPECT_DIAG(out, 3, "a", "version", "must be an integer >= 1");
  EXPECT_DIAG(out, 4, "b", "for_each", "a workflow step cannot fan out (start one child per step)");
  EXPECT_DIAG(out, 5, "c", "workflow", "starts its own workflow 'x' as a child: a cycle");
}

TEST(ParseStep, CacheAndForEach) {
  WorkflowDef wf = MustParse(
      "name: x\nsteps:\n"
      "  - {id: list, type: noop, with: [1, 2]}\n"
      "  - id: each\n"
      "    type: noop\n"
      "    depends_on: [list]\n"
      "    for_each: '{{ steps.list.output }}'\n"
      "    with: {n: '{{ item }}', i: '{{ item_index }}'}\n"
      "    cache: {ttl: 1h, key: 'k-{{ item }}'}\n"
      "  - {id: c, type: noop, cache: {}}\n");
  const StepDef& each = wf.steps[1];
  EXPECT_EQ(each.for_each, Json("{{ steps.list.output }}"));
  ASSERT_TRUE(each.extra().cache);
  EXPECT_EQ(each.extra().cache->ttl, Duration{3'600'000});
  EXPECT_EQ(each.extra().cache->key, Json("k-{{ item }}"));
  ASSERT_TRUE(wf.steps[2].extra().cache);
  EXPECT_FALSE(wf.steps[2].extra().cache->ttl);
  EXPECT_TRUE(wf.steps[2].extra().cache->key.is_null());
}

}  // namespace
}  // namespace baton

namespace baton {
namespace {

using testing_model::MustParse;
using testing_model::Parse;

TEST(ParseStep, CircuitBreakerMergesOverDefaultsForStepsThatCallOut) {
  WorkflowDef wf = MustParse(
      "name: x\n"
      "defaults:\n"
      "  circuit_breaker: {failure_threshold: 3, recovery_timeout: 1m}\n"
      "steps:\n"
      "  - id: call\n"
      "    type: http\n"
      "    request: {url: 'http://api.example.com/x'}\n"
      "    circuit_breaker: {success_threshold: 2}\n"
      "  - id: train\n"
      "    type: command\n"
      "    command: train\n"
      "  - id: script\n"
      "    type: shell\n"
      "    run: 'true'\n"
      "  - id: own\n"
      "    type: shell\n"
      "    run: 'true'\n"
      "    circuit_breaker: {key: 'db-{{ inputs.region }}'}\n");
  ASSERT_TRUE(wf.steps[0].extra().circuit_breaker.has_value());
  EXPECT_EQ(wf.steps[0].extra().circuit_breaker->failure_threshold, 3);
  EXPECT_EQ(wf.steps[0].extra().circuit_breaker->recovery_timeout, Duration(60'000));
  EXPECT_EQ(wf.steps[0].extra().circuit_breaker->success_threshold, 2);
  EXPECT_EQ(wf.steps[0].extra().circuit_breaker->key, "");
  ASSERT_TRUE(wf.steps[1].extra().circuit_breaker.has_value());
  EXPECT_EQ(wf.steps[1].extra().circuit_breaker->success_threshold, 1);
  EXPECT_FALSE(wf.steps[2].extra().circuit_breaker.has_value());  // defaults skip shell steps
  ASSERT_TRUE(wf.steps[3].extra().circuit_breaker.has_value());
  EXPECT_EQ(wf.steps[3].extra().circuit_breaker->key, "db-{{ inputs.region }}");
  EXPECT_EQ(wf.steps[3].extra().circuit_breaker->failure_threshold, 5);
  EXPECT_EQ(wf.steps[3].extra().circuit_breaker->recovery_timeout, Duration(30'000));
}

TEST(ParseStep, CircuitBreakerFieldsAreChecked) {
  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - id: a\n"
      "    type: shell\n"
      "    run: 'true'\n"
      "    circuit_breaker: {failure_threshold: 3}\n"
      "  - id: b\n"
      "    type: http\n"
      "    request: {url: 'http://h/'}\n"
      "    circuit_breaker: {failure_threshold: 0, success_threshold: x, recovery_timeout: 0s,"
      " key: '', probes: 1}\n");
  EXPECT_DIAG(out, 6, "a", "circuit_breaker.key",
              "required for a shell step (only http and command steps have a default key: "
              "the host, the command)");
  EXPECT_DIAG(out, 10, "b", "circuit_breaker.failure_threshold",
              "must be between 1 and 1000000, got 0");
  EXPECT_DIAG(out, 10, "b", "circuit_breaker.success_threshold", "expected integer, got string");
  EXPECT_DIAG(out, 10, "b", "circuit_breaker.key", "expected 1 to 253 bytes, got 0");
  EXPECT_DIAG(out, 10, "b", "circuit_breaker.recovery_timeout", "must be greater than 0");
  EXPECT_DIAG(out, 10, "b", "circuit_breaker.probes",
              "unknown field 'probes' (valid: failure_threshold, key, "
              "recovery_timeout, success_threshold)");
}

// A step that sets none of the rare fields carries none (a plain step stays small), and
// copies of a definition share the ones set until one copy changes them.
TEST(ParseStep, RareFieldsAreKeptApartAndSharedByCopies) {
  WorkflowDef wf = MustParse(
      "name: x\n"
      "steps:\n"
      "  - {id: a, type: noop}\n"
      "  - {id: b, type: noop, depends_on: [a], description: the second, pool: gpus,\n"
      "     pool_slots: 2}\n");
  EXPECT_EQ(wf.steps[0].extras, nullptr);
  EXPECT_EQ(wf.steps[0].extra().pool_slots, 1);  // the defaults, read through extra()
  EXPECT_TRUE(wf.steps[0].extra().pool.empty());
  ASSERT_NE(wf.steps[1].extras, nullptr);
  EXPECT_EQ(wf.steps[1].extra().description, "the second");
  EXPECT_EQ(wf.steps[1].extra().pool_slots, 2);

  WorkflowDef copy = wf;
  EXPECT_EQ(copy.steps[1].extras.get(), wf.steps[1].extras.get());
  copy.steps[1].edit_extra().pool = "cpus";  // copied on write
  EXPECT_EQ(wf.steps[1].extra().pool, "gpus");
  EXPECT_EQ(copy.steps[1].extra().pool, "cpus");
  EXPECT_EQ(copy.steps[1].extra().description, "the second");
}

}  // namespace
}  // namespace baton
