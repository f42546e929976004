// The step-at-a-time read of JSON workflows against the whole-document read it must match.
#include "model/builder.h"
#include "model/test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton {
namespace {

using testing_model::ExpectSameStep;
using testing_model::Parse;

// Documents the fast path must take, each with what it must get right.
const std::vector<std::string>& ValidDocuments() {
  static const std::vector<std::string> docs = {
      // A chain of noop steps: nothing is kept once parsed.
      R"({"name": "chain", "steps": [{"id": "a", "type": "noop"},
          {"id": "b", "type": "noop", "depends_on": ["a"]},
          {"id": "c", "type": "noop", "depends_on": "b"}]})",
      // Defaults before the steps; members in any order; numbers, escapes, unicode.
      R"({"version": 2, "defaults": {"timeout": "1m", "retry": {"max_attempts": 3},
          "circuit_breaker": {"failure_threshold": 2}},
          "steps": [{"type": "command", "id": "dl", "command": "model.download",
                     "with": {"size": 1.5, "big": 12345678901234, "note": "caf\u00e9 \"q\" \\ /"},
                     "pool": "gpus", "pool_slots": 2, "expected_duration": "3m",
                     "heartbeat_timeout": "10s", "description": "fetch", "cache": {"ttl": "1h"}},
                    {"id": "x", "type": "wait", "duration": "2s", "depends_on": ["dl"],
                     "priority": "high", "trigger_rule": "all_done", "optional": true}],
          "name": "mixed", "description": "d \t tab", "vars": {"k\u00fc": [1, {"z": null}]}})",
      // Templates, set_vars, for_each and a condition: these steps are read again.
      R"({"name": "templated", "inputs": {"n": {"type": "integer", "default": 2}},
          "vars": {"seen": 0},
          "steps": [{"id": "list", "type": "shell", "run": ["echo", "[1,2]"]},
                    {"id": "each", "type": "http", "depends_on": ["list"],
                     "for_each": "{{ steps.list.output }}",
                     "request": {"url": "http://x/{{ item }}/{{ inputs.n }}", "method": "GET"},
                     "when": "inputs.n > 1", "set_vars": {"seen": "{{ steps.each.output }}"}},
                    {"id": "after", "type": "noop", "depends_on": ["each"],
                     "when": {"field": "vars.seen", "op": "exists"}}],
          "output": "{{ steps.each.output }}"})",
  };
  return docs;
}

TEST(JsonStream, AValidJsonWorkflowIsReadAStepAtATimeAndMatchesTheWholeRead) {
  for (const std::string& text : ValidDocuments()) {
    std::optional<ParseOutcome> fast = model::ParseJsonWorkflow(text, "wf.json", nullptr);
    ASSERT_TRUE(fast.has_value()) << text;
    ASSERT_TRUE(fast->ok()) << fast->ToStatus().message();
    const WorkflowDef& streamed = *fast->workflow;
    // The whole-document read of the same JSON.
    Result<WorkflowDef> whole = WorkflowFromSnapshot(Json::parse(text), "wf.json");
    ASSERT_TRUE(whole.ok()) << whole.status().message();
    // The snapshot is the text itself, and holds the same document as the whole read's.
    EXPECT_EQ(*streamed.source, text);
    EXPECT_EQ(Json::parse(*streamed.source), Json::parse(*whole->source));
    EXPECT_EQ(streamed.name, whole->name);
    EXPECT_EQ(streamed.version, whole->version);
    EXPECT_EQ(streamed.description, whole->description);
    EXPECT_EQ(streamed.vars, whole->vars);
    EXPECT_EQ(streamed.output, whole->output);
    ASSERT_EQ(streamed.steps.size(), whole->steps.size());
    for (size_t i = 0; i < streamed.steps.size(); ++i) {
      ExpectSameStep(streamed.steps[i], whole->steps[i]);
    }
    ASSERT_NE(streamed.plan, nullptr);
    EXPECT_EQ(streamed.plan->layer_of, whole->plan->layer_of);
    EXPECT_EQ(streamed.plan->graph.up, whole->plan->graph.up);
    for (size_t i = 0; i < streamed.steps.size(); ++i) {
      EXPECT_EQ(streamed.plan->conditions[i] == nullptr, whole->plan->conditions[i] == nullptr);
    }
    // The rare fields come through too (the defaults' breaker reaches the command step).
    if (streamed.name == "mixed") {
      ASSERT_TRUE(streamed.steps[0].extra().circuit_breaker);
      EXPECT_EQ(streamed.steps[0].extra().circuit_breaker->failure_threshold, 2);
      EXPECT_EQ(streamed.steps[0].extra().pool_slots, 2);
      EXPECT_EQ(streamed.steps[1].extras, nullptr);
    }
    if (streamed.name == "templated") {
      EXPECT_FALSE(streamed.steps[1].extra().set_vars.is_null());
    }
    // And ParseWorkflow, the public entry, gives the same.
    ParseOutcome parsed = ParseWorkflow(text, "wf.json");
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed.workflow->source, *streamed.source);
  }
}

TEST(JsonStream, StepsKeepTheirLinesAndDefaults) {
  const std::string text =
      "{\n"
      "  \"name\": \"lines\",\n"
      "  \"defaults\": {\"timeout\": \"1m\"},\n"
      "  \"steps\": [\n"
      "    {\"id\": \"a\", \"type\": \"noop\"},\n"
      "\n"
      "    {\"id\": \"b\",\n"
      "     \"type\": \"noop\", \"timeout\": \"5s\"}\n"
      "  ]\n"
      "}\n";
  std::optional<ParseOutcome> fast = model::ParseJsonWorkflow(text, "wf.json", nullptr);
  ASSERT_TRUE(fast && fast->ok());
  const WorkflowDef& wf = *fast->workflow;
  EXPECT_EQ(wf.steps[0].line, 5);
  EXPECT_EQ(wf.steps[1].line, 7);
  EXPECT_EQ(wf.steps[0].timeout, Duration{60'000});
  EXPECT_EQ(wf.steps[1].timeout, Duration{5'000});
}

// `defaults` written after `steps` cannot be known while the steps stream by: that
// document is read whole instead, and its steps still get the defaults.
TEST(JsonStream, DefaultsWrittenAfterTheStepsStillApply) {
  const std::string text =
      R"({"name": "late", "steps": [{"id": "a", "type": "noop"}], "defaults": {"timeout": "7s"}})";
  EXPECT_FALSE(model::ParseJsonWorkflow(text, "wf.json", nullptr).has_value());
  ParseOutcome out = Parse(text, "wf.json");
  ASSERT_TRUE(out.ok()) << out.ToStatus().message();
  EXPECT_EQ(out.workflow->steps[0].timeout, Duration{7'000});
  EXPECT_EQ(Json::parse(*out.workflow->source), Json::parse(text));
}

// Anything wrong leaves the fast path, so every problem is reported as before, with its
// line: a bad step field, an unknown dependency, a template naming a step that is not
// upstream, a top-level error after valid steps, a repeated key, a syntax error.
TEST(JsonStream, AnyProblemIsReportedByTheWholeReadWithItsLine) {
  struct Case {
    std::string text;
    int line;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {"{\"name\": \"x\", \"steps\": [\n{\"id\": \"a\", \"type\": \"noop\", \"timeout\": \"5x\"}]}",
       2, "bad duration '5x'"},
      {"{\"name\": \"x\", \"steps\": [{\"id\": \"a\", \"type\": \"noop\"},\n"
       "{\"id\": \"b\", \"type\": \"noop\", \"depends_on\": [\"a\", \"zz\"]}]}",
       2, "depends on unknown step 'zz'"},
      {"{\"name\": \"x\", \"steps\": [{\"id\": \"a\", \"type\": \"noop\"},\n"
       "{\"id\": \"b\", \"type\": \"shell\", \"run\": [\"echo\", \"{{ steps.a.output }}\"]}]}",
       2, "not upstream"},
      {"{\"name\": \"x\", \"steps\": [{\"id\": \"a\", \"type\": \"noop\"}],\n\"bogus\": 1}", 2,
       "unknown field 'bogus'"},
      {"{\"name\": \"x\", \"steps\": [{\"id\": \"a\", \"type\": \"noop\", \"id\": \"b\"}]}", 1,
       "duplicate key"},
      {"{\"name\": \"x\", \"steps\": [{\"id\": \"a\", \"type\": \"noop\"},\n]}", 2, "invalid JSON"},
      {"{\"name\": \"x\", \"steps\": []}", 1, "at least one step"},
      {"{\"name\": \"x\", \"steps\": [\"a\"]}", 1, "expected object"},
  };
  for (const Case& c : cases) {
    EXPECT_FALSE(model::ParseJsonWorkflow(c.text, "wf.json", nullptr).has_value()) << c.text;
    ParseOutcome out = Parse(c.text, "wf.json");
    ASSERT_FALSE(out.ok()) << c.text;
    const Diagnostic* d = testing_model::FindDiag(out, c.needle);
    ASSERT_NE(d, nullptr) << c.text << "\n" << out.ToStatus().message();
    EXPECT_EQ(d->line, c.line) << d->ToString();
  }
}

// A stored snapshot is read the same way, and the definition keeps the stored text
// instead of a copy.
TEST(JsonStream, ASnapshotTextIsSharedByTheDefinitionReadFromIt) {
  ParseOutcome parsed = Parse(ValidDocuments()[2], "wf.json");
  ASSERT_TRUE(parsed.ok());
  std::shared_ptr<const std::string> text = parsed.workflow->source;
  Result<WorkflowDef> back = WorkflowFromSnapshot(text, "snapshot");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->source.get(), text.get());
  ASSERT_EQ(back->steps.size(), parsed.workflow->steps.size());
  for (size_t i = 0; i < back->steps.size(); ++i) {
    ExpectSameStep(back->steps[i], parsed.workflow->steps[i]);
    EXPECT_EQ(back->steps[i].line, 0);
  }
  // Stored text that is not JSON, or not a workflow, is a validation error.
  for (const char* bad : {"{\"name\": ", R"({"name": "x"})"}) {
    Result<WorkflowDef> r = WorkflowFromSnapshot(std::make_shared<const std::string>(bad), "s");
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), errc::kValidation);
  }
  EXPECT_FALSE(WorkflowFromSnapshot(std::shared_ptr<const std::string>(), "s").ok());
}

}  // namespace
}  // namespace baton
