// The pieces of compiling a plan that parsing shares with validation: the step index and
// graph are built once per parse, checked by validation, then kept in the plan.
//
// Internal to the model module.
#pragma once

#include <baton/plan.h>
#include <baton/status.h>

#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace baton {
struct WorkflowDef;
namespace model {

// Step id -> index of the first step defined with it (steps without an id left out). The
// keys point into the definition's step ids: the index must not outlive them.
using StepIndex = std::unordered_map<std::string_view, int>;
StepIndex IndexSteps(const WorkflowDef& wf);

// LinkStepGraph over an index already built.
StepGraph GraphOf(const WorkflowDef& wf, const StepIndex& index, size_t* unresolved);

// Layers, conditions and template flags over `graph` (every dependency resolved). Takes
// the conditions validation compiled (one per step, null where there is no `when`);
// compiles them when `conditions` is empty. Fails on a cycle or a condition that does not
// compile.
Result<std::shared_ptr<const WorkflowPlan>> FinishPlan(
    const WorkflowDef& wf, StepGraph graph,
    std::vector<std::unique_ptr<const expr::Condition>> conditions);

}  // namespace model
}  // namespace baton
