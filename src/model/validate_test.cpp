// Graph and reference validation: ids, dependencies, cycles, templates, conditions.
#include "model/test_util.h"

namespace baton {
namespace {

using testing_model::AllDiags;
using testing_model::FindDiag;
using testing_model::MustParse;
using testing_model::Parse;

TEST(Validate, DuplicateStepId) {
  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - id: build\n"
      "    type: noop\n"
      "  - id: build\n"
      "    type: noop\n");
  EXPECT_DIAG(out, 5, "build", "id", "duplicate step id 'build' (first defined at line 3)");
  EXPECT_EQ(out.diagnostics.size(), 1u) << AllDiags(out);
  EXPECT_EQ(out.diagnostics[0].ToString(),
            "wf.yaml:5: step 'build': field 'id': duplicate step id 'build' (first defined at "
            "line 3)");
}

TEST(Validate, UnknownDependency) {
  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - id: a\n"
      "    type: noop\n"
      "    depends_on:\n"
      "      - b\n"
      "      - ghost\n"
      "  - {id: b, type: noop, depends_on: phantom}\n");
  EXPECT_DIAG(out, 7, "a", "depends_on[1]", "depends on unknown step 'ghost'");
  EXPECT_DIAG(out, 8, "b", "depends_on", "depends on unknown step 'phantom'");
  EXPECT_EQ(out.diagnostics.size(), 2u) << AllDiags(out);
}

TEST(Validate, SelfDependency) {
  ParseOutcome out = Parse("name: x\nsteps:\n  - {id: a, type: noop, depends_on: [a]}\n");
  EXPECT_DIAG(out, 3, "a", "depends_on[0]", "step depends on itself");
  EXPECT_EQ(out.diagnostics.size(), 1u) << AllDiags(out);  // not also a cycle
}

TEST(Validate, CycleIsPrintedAsAPath) {
  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - id: a\n"
      "    type: noop\n"
      "    depends_on: [c]\n"
      "  - id: b\n"
      "    type: noop\n"
      "    depends_on: [a]\n"
      "  - id: c\n"
      "    type: noop\n"
      "    depends_on: [b]\n"
      "  - id: d\n"
      "    type: noop\n"
      "    depends_on: [c]\n");
  // Each arrow reads "depends on": a depends on c, c on b, b on a.
  EXPECT_DIAG(out, 5, "a", "depends_on[0]", "cycle: a -> c -> b -> a");
  EXPECT_EQ(out.diagnostics.size(), 1u) << AllDiags(out);  // d is behind it, not on it
}

TEST(Validate, TwoSeparateCycles) {
  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - {id: root, type: noop}\n"
      "  - {id: p, type: noop, depends_on: [q, root]}\n"
      "  - {id: q, type: noop, depends_on: [p]}\n"
      "  - {id: r, type: noop, depends_on: [s]}\n"
      "  - {id: s, type: noop, depends_on: [r]}\n");
  EXPECT_DIAG(out, 4, "p", "depends_on[0]", "cycle: p -> q -> p");
  EXPECT_DIAG(out, 6, "r", "depends_on[0]", "cycle: r -> s -> r");
  EXPECT_EQ(out.diagnostics.size(), 2u) << AllDiags(out);
}

TEST(Validate, ValidDiamond) {
  MustParse(
      "name: x\nsteps:\n  - {id: a, type: noop}\n  - {id: b, type: noop, depends_on: a}\n"
      "  - {id: c, type: noop, depends_on: a}\n  - {id: d, type: noop, depends_on: [b, c]}\n");
}

constexpr const char* kHeader =
    "name: x\n"
    "inputs:\n"
    "  model: {type: string}\n"
    "vars: {region: eu}\n"
    "steps:\n"
    "  - {id: a, type: noop}\n"                  // line 6
    "  - {id: b, type: noop, depends_on: a}\n";  // line 7

TEST(Validate, TemplatesMayReferenceTransitiveUpstream) {
  MustParse(std::string(kHeader) +
            "  - id: c\n"
            "    type: shell\n"
            "    depends_on: [b]\n"
            "    run: ['echo', '{{ steps.a.output }}', '{{ steps.b.exit_code }}',\n"
            "          '{{ inputs.model }}', '{{ vars.region }}', '{{ execution.id }}']\n"
            "    name: 'c for {{ inputs.model }}'\n"
            "output: {all: '{{ steps.c.output }}', first: '{{ steps.a.output }}'}\n");
}

TEST(Validate, TemplateReferencesStepNotUpstream) {
  ParseOutcome out =
      Parse(std::string(kHeader) +
            "  - id: c\n"
            "    type: http\n"
            "    depends_on: [a]\n"
            "    request:\n"
            "      url: 'http://x/{{ steps.b.output.path }}'\n"
            "  - {id: d, type: noop, depends_on: [c], with: '{{ steps.d.output }}'}\n");
  EXPECT_DIAG(out, 12, "c", "request.url",
              "template references step 'b', which is not upstream of 'c' (add it to "
              "depends_on)");
  EXPECT_DIAG(out, 13, "d", "with", "template references step 'd' itself");
  EXPECT_EQ(out.diagnostics.size(), 2u) << AllDiags(out);
}

TEST(Validate, TemplateReferencesUnknownStep) {
  ParseOutcome out = Parse(std::string(kHeader) +
                           "  - id: c\n"
                           "    type: noop\n"
                           "    with: {x: '{{ steps.zed.output }}'}\n"
                           "output: '{{ steps.nope.output }}'\n");
  EXPECT_DIAG(out, 10, "c", "with.x", "template references unknown step 'zed'");
  EXPECT_DIAG(out, 11, "", "output", "template references unknown step 'nope'");
}

TEST(Validate, TemplateRootsAndDeclarations) {
  ParseOutcome out = Parse(std::string(kHeader) +
                           "  - id: c\n"
                           "    type: noop\n"
                           "    with:\n"
                           "      - '{{ env.HOME }}'\n"
                           "      - '{{ inputs.modle }}'\n"
                           "      - '{{ vars.zone }}'\n"
                           "      - '{{ item }}'\n"
                           "      - '{{ steps }}'\n");
  EXPECT_DIAG(out, 11, "c", "with[0]",
              "unknown template root 'env' in 'env.HOME' (valid: inputs, steps, execution, vars, "
              "item, item_index)");
  EXPECT_DIAG(out, 12, "c", "with[1]",
              "template references undeclared input 'modle' (declared: model)");
  EXPECT_DIAG(out, 13, "c", "with[2]",
              "template references undeclared var 'zone' "
              "(declare it in vars, or set it with a step's set_vars)");
  EXPECT_DIAG(out, 14, "c", "with[3]", "'item' is only valid in a step with for_each");
  EXPECT_DIAG(out, 15, "c", "with[4]",
              "template reference 'steps' must name a step, e.g. steps.ID.output");
}

TEST(Validate, UndeclaredInputsAreFineWhenNoneAreDeclared) {
  MustParse("name: x\nsteps:\n  - {id: a, type: noop, with: '{{ inputs.anything }}'}\n");
  ParseOutcome out =
      Parse("name: x\ninputs: {}\nsteps:\n  - {id: a, type: noop, with: '{{ inputs.x }}'}\n");
  EXPECT_DIAG(out, 4, "a", "with", "template references undeclared input 'x' (declared: none)");
}

TEST(Validate, ForEachItem) {
  MustParse(
      "name: x\nsteps:\n"
      "  - {id: list, type: noop}\n"
      "  - id: each\n"
      "    type: noop\n"
      "    depends_on: [list]\n"
      "    for_each: '{{ steps.list.output }}'\n"
      "    when: 'item != null'\n"
      "    with: {n: '{{ item.name }}', i: '{{ item_index }}'}\n");
  ParseOutcome out = Parse(
      "name: x\nsteps:\n"
      "  - {id: list, type: noop}\n"
      "  - id: each\n"
      "    type: noop\n"
      "    for_each: '{{ steps.list.output }}{{ item }}'\n");
  EXPECT_DIAG(out, 6, "each", "for_each",
              "template references step 'list', which is not upstream of 'each' (add it to "
              "depends_on)");
  EXPECT_DIAG(out, 6, "each", "for_each", "'item' cannot be used in for_each itself");
}

TEST(Validate, MalformedTemplate) {
  ParseOutcome out =
      Parse("name: x\nsteps:\n  - {id: a, type: noop, with: {x: 'a {{ inputs. }} b'}}\n");
  ASSERT_EQ(out.diagnostics.size(), 1u) << AllDiags(out);
  EXPECT_EQ(out.diagnostics[0].line, 3);
  EXPECT_EQ(out.diagnostics[0].step, "a");
  EXPECT_EQ(out.diagnostics[0].field, "with.x");
  EXPECT_FALSE(out.diagnostics[0].message.empty());
}

TEST(Validate, Conditions) {
  MustParse(std::string(kHeader) +
            "  - id: c\n"
            "    type: noop\n"
            "    depends_on: [b]\n"
            "    when: 'steps.a.output.n > 2 && inputs.model == \"m\"'\n"
            "  - id: d\n"
            "    type: noop\n"
            "    depends_on: [b]\n"
            "    when: {field: steps.b.status, op: eq, value: completed}\n");
  ParseOutcome out = Parse(std::string(kHeader) +
                           "  - id: c\n"
                           "    type: noop\n"
                           "    depends_on: [a]\n"
                           "    when: 'steps.b.output.ok == true'\n"
                           "  - id: d\n"
                           "    type: noop\n"
                           "    when: 'steps.a.output.n > (2'\n"
                           "  - id: e\n"
                           "    type: noop\n"
                           "    when: 'inputs.nope'\n");
  EXPECT_DIAG(out, 11, "c", "when",
              "condition references step 'b', which is not upstream of 'c' (add it to "
              "depends_on)");
  const Diagnostic* parse_error = nullptr;
  for (const Diagnostic& d : out.diagnostics) {
    if (d.step == "d") parse_error = &d;
  }
  ASSERT_NE(parse_error, nullptr) << AllDiags(out);
  EXPECT_EQ(parse_error->line, 14);
  EXPECT_EQ(parse_error->field, "when");
  EXPECT_FALSE(parse_error->message.empty());
  EXPECT_DIAG(out, 17, "e", "when",
              "condition references undeclared input 'nope' (declared: model)");
}

TEST(Validate, AllProblemsAreReportedAtOnce) {
  ParseOutcome out = Parse(
      "name: x\n"
      "steps:\n"
      "  - {id: a, type: noop, timeout: 5x, depends_on: [ghost]}\n"
      "  - {id: a, type: bogus}\n"
      "  - {id: c, type: noop, depends_on: [d], with: '{{ steps.a.output }}'}\n"
      "  - {id: d, type: noop, depends_on: [c]}\n");
  EXPECT_TRUE(FindDiag(out, "bad duration '5x'"));
  EXPECT_TRUE(FindDiag(out, "depends on unknown step 'ghost'"));
  EXPECT_TRUE(FindDiag(out, "duplicate step id 'a'"));
  EXPECT_TRUE(FindDiag(out, "unknown step type 'bogus'"));
  EXPECT_TRUE(FindDiag(out, "cycle: c -> d -> c"));
  EXPECT_TRUE(FindDiag(out, "template references step 'a', which is not upstream of 'c'"));
  EXPECT_EQ(out.diagnostics.size(), 6u) << AllDiags(out);
  Status st = out.ToStatus();
  EXPECT_EQ(st.code(), errc::kValidation);
  EXPECT_EQ(std::count(st.message().begin(), st.message().end(), '\n'), 5);
}

}  // namespace
}  // namespace baton
