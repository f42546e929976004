// A workflow compiled for running: its step graph, layers, compiled conditions and which
// steps need rendering. Describing a workflow (WorkflowDef) is separate from running it;
// this is the bridge, built once per definition and shared by validation, `analyze` and
// every execution of it, instead of being rebuilt per execution.
//
// Immutable once built, so one plan may be read from several threads.
#pragma once

#include <baton/status.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace baton {

namespace expr {
class Condition;
}
struct WorkflowDef;

// Step dependencies as compressed rows: four arrays for the whole graph instead of two
// per step, with a step's neighbours next to each other in memory. Indexes are positions
// in WorkflowDef::steps.
struct StepGraph {
  std::vector<int> up_begin, up;      // upstream of i: up[up_begin[i] .. up_begin[i+1])
  std::vector<int> down_begin, down;  // downstream of i, likewise

  size_t size() const { return up_begin.empty() ? 0 : up_begin.size() - 1; }
  std::span<const int> Upstream(int i) const {
    return {up.data() + up_begin[i], static_cast<size_t>(up_begin[i + 1] - up_begin[i])};
  }
  std::span<const int> Downstream(int i) const {
    return {down.data() + down_begin[i], static_cast<size_t>(down_begin[i + 1] - down_begin[i])};
  }
};

// Resolves every step's depends_on against the step ids (the first step defined with an
// id wins). A dependency that names no step, or the step itself, is left out of the graph;
// `unresolved` (when given) counts them. Never fails: validation reports what is wrong.
StepGraph LinkStepGraph(const WorkflowDef& wf, size_t* unresolved = nullptr);

struct WorkflowPlan {
  StepGraph graph;
  // Kahn layers: a step's layer is one more than its deepest dependency's.
  std::vector<int> layer_of;
  std::vector<int> layer_size;  // steps per layer
  int layers = 0;
  // Per step; null (no `when`) = always true. Few steps have one: a pointer each keeps
  // the common case small.
  std::vector<std::unique_ptr<const expr::Condition>> conditions;
  std::vector<char> spec_has_templates;  // per step: its spec must be rendered at dispatch

  // Step id -> position in `wf`'s steps (the first step defined with an id wins), `wf`
  // being the definition the plan was compiled from. Built on first use (templates that
  // name steps, recovery), once for every execution of the plan; safe from any thread.
  const std::unordered_map<std::string, int>& StepIndex(const WorkflowDef& wf) const;

  WorkflowPlan();
  WorkflowPlan(WorkflowPlan&&) noexcept;
  WorkflowPlan& operator=(WorkflowPlan&&) noexcept;
  ~WorkflowPlan();

 private:
  struct LazyIndex;
  std::unique_ptr<LazyIndex> index_;
};

// Compiles `wf`. Errors (VALIDATION) for what a parsed definition cannot hold but one
// built in code can: a dependency on an unknown step or on itself, a cycle, a `when` that
// does not compile.
Result<std::shared_ptr<const WorkflowPlan>> CompilePlan(const WorkflowDef& wf);

// Compiles `wf` and keeps the plan in wf.plan: for definitions built in code (ParseWorkflow
// and WorkflowFromSnapshot do it themselves). Call it again after editing wf.steps.
Status AttachPlan(WorkflowDef& wf);

}  // namespace baton
