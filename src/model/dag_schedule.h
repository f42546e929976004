// How long a workflow would take on a bounded local worker: the estimate `baton analyze`
// gives for `--parallel N`, next to the unbounded one (the critical path).
#pragma once

#include <baton/workflow.h>

namespace baton {

// A step's estimated duration: a wait step's literal duration, else a tenth of its
// timeout, else 1 s (AnalyzeDag's critical path uses the same).
Duration StepEstimate(const StepDef& step);

// Whether a step takes one of the local worker's `parallel` slots while it runs (shell and
// http steps); the others (noop, wait, command on a remote worker, a child workflow) wait
// without one.
bool TakesLocalSlot(const StepDef& step);

// The estimated wall time with at most `slots` slot-taking steps at once (slots >= 1):
// list scheduling, the ready step with the longest estimated path to the end first, as
// the engine starts higher layers' work no sooner than its dependencies allow.
// `dag` is AnalyzeDag(wf).
Duration EstimateWithSlots(const WorkflowDef& wf, const DagAnalysis& dag, int slots);

}  // namespace baton
