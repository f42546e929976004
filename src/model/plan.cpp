// Compiling a definition into the plan its executions run from (include/baton/plan.h).
#include "model/plan_build.h"

#include "expr/condition.h"
#include "expr/template.h"

#include <baton/workflow.h>

#include <algorithm>
#include <mutex>

namespace baton {

struct WorkflowPlan::LazyIndex {
  std::once_flag built;
  std::unordered_map<std::string, int> index;
};

const std::unordered_map<std::string, int>& WorkflowPlan::StepIndex(const WorkflowDef& wf) const {
  // Keys of its own (not views into wf): a copy of the definition shares this plan.
  std::call_once(index_->built, [&] {
    index_->index.reserve(wf.steps.size());
    for (size_t i = 0; i < wf.steps.size(); ++i)
      index_->index.emplace(wf.steps[i].id, static_cast<int>(i));
  });
  return index_->index;
}

WorkflowPlan::WorkflowPlan() : index_(std::make_unique<LazyIndex>()) {}
WorkflowPlan::WorkflowPlan(WorkflowPlan&&) noexcept = default;
WorkflowPlan& WorkflowPlan::operator=(WorkflowPlan&&) noexcept = default;
WorkflowPlan::~WorkflowPlan() = default;

namespace model {

StepIndex IndexSteps(const WorkflowDef& wf) {
  StepIndex index;
  index.reserve(wf.steps.size());
  for (size_t i = 0; i < wf.steps.size(); ++i) {
    if (!wf.steps[i].id.empty()) index.emplace(wf.steps[i].id, static_cast<int>(i));
  }
  return index;
}

StepGraph GraphOf(const WorkflowDef& wf, const StepIndex& index, size_t* unresolved) {
  const size_t n = wf.steps.size();
  StepGraph g;
  g.up_begin.assign(n + 1, 0);
  g.down_begin.assign(n + 1, 0);
  size_t edges = 0;
  size_t dropped = 0;
  // Resolved once into a flat list (-1 = dropped), then laid out as rows both ways.
  std::vector<int> resolved;
  for (const StepDef& s : wf.steps) edges += s.depends_on.size();
  resolved.reserve(edges);
  for (size_t i = 0; i < n; ++i) {
    for (const std::string& dep : wf.steps[i].depends_on) {
      auto it = index.find(dep);
      if (it == index.end() || it->second == static_cast<int>(i)) {
        resolved.push_back(-1);
        ++dropped;
        continue;
      }
      resolved.push_back(it->second);
      ++g.up_begin[i + 1];
      ++g.down_begin[it->second + 1];
    }
  }
  for (size_t i = 0; i < n; ++i) {
    g.up_begin[i + 1] += g.up_begin[i];
    g.down_begin[i + 1] += g.down_begin[i];
  }
  g.up.resize(static_cast<size_t>(g.up_begin[n]));
  g.down.resize(static_cast<size_t>(g.down_begin[n]));
  std::vector<int> down_fill(g.down_begin.begin(), g.down_begin.end() - 1);
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    int at = g.up_begin[i];
    for (size_t e = 0; e < wf.steps[i].depends_on.size(); ++e) {
      const int u = resolved[k++];
      if (u < 0) continue;
      g.up[static_cast<size_t>(at++)] = u;
      g.down[static_cast<size_t>(down_fill[static_cast<size_t>(u)]++)] = static_cast<int>(i);
    }
  }
  if (unresolved) *unresolved = dropped;
  return g;
}

Result<std::shared_ptr<const WorkflowPlan>> FinishPlan(
    const WorkflowDef& wf, StepGraph graph,
    std::vector<std::unique_ptr<const expr::Condition>> conditions) {
  const size_t n = wf.steps.size();
  auto plan = std::make_shared<WorkflowPlan>();
  plan->graph = std::move(graph);
  const StepGraph& g = plan->graph;
  // Kahn layers over the index graph.
  plan->layer_of.assign(n, 0);
  std::vector<int> indegree(n), queue;
  queue.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    indegree[i] = static_cast<int>(g.Upstream(static_cast<int>(i)).size());
    if (indegree[i] == 0) queue.push_back(static_cast<int>(i));
  }
  int deepest = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    const int u = queue[head];
    deepest = std::max(deepest, plan->layer_of[u]);
    for (int d : g.Downstream(u)) {
      plan->layer_of[d] = std::max(plan->layer_of[d], plan->layer_of[u] + 1);
      if (--indegree[d] == 0) queue.push_back(d);
    }
  }
  if (queue.size() != n) return Status(errc::kValidation, "the workflow has a cycle");
  plan->layers = n == 0 ? 0 : deepest + 1;
  plan->layer_size.assign(static_cast<size_t>(plan->layers), 0);
  for (int l : plan->layer_of) ++plan->layer_size[static_cast<size_t>(l)];

  if (conditions.size() != n) {
    conditions.clear();
    conditions.resize(n);
    for (size_t i = 0; i < n; ++i) {
      if (wf.steps[i].when.is_null()) continue;
      Result<expr::Condition> cond = expr::CompileCondition(wf.steps[i].when);
      if (!cond.ok()) {
        return Status(errc::kValidation,
                      "step '" + wf.steps[i].id + "': when: " + cond.status().message());
      }
      conditions[i] = std::make_unique<const expr::Condition>(std::move(cond).value());
    }
  }
  plan->conditions = std::move(conditions);
  plan->spec_has_templates.resize(n);
  for (size_t i = 0; i < n; ++i) {
    plan->spec_has_templates[i] = expr::HasTemplates(wf.steps[i].spec) ? 1 : 0;
  }
  return std::shared_ptr<const WorkflowPlan>(std::move(plan));
}

}  // namespace model

StepGraph LinkStepGraph(const WorkflowDef& wf, size_t* unresolved) {
  return model::GraphOf(wf, model::IndexSteps(wf), unresolved);
}

Result<std::shared_ptr<const WorkflowPlan>> CompilePlan(const WorkflowDef& wf) {
  const model::StepIndex index = model::IndexSteps(wf);
  size_t unresolved = 0;
  StepGraph graph = model::GraphOf(wf, index, &unresolved);
  if (unresolved > 0) {
    for (size_t i = 0; i < wf.steps.size(); ++i) {
      for (const std::string& dep : wf.steps[i].depends_on) {
        auto it = index.find(dep);
        if (it == index.end()) {
          return Status(errc::kValidation,
                        "step '" + wf.steps[i].id + "' depends on an unknown step '" + dep + "'");
        }
        if (it->second == static_cast<int>(i)) {
          return Status(errc::kValidation, "step '" + wf.steps[i].id + "' depends on itself");
        }
      }
    }
  }
  return model::FinishPlan(wf, std::move(graph), {});
}

Status AttachPlan(WorkflowDef& wf) {
  Result<std::shared_ptr<const WorkflowPlan>> plan = CompilePlan(wf);
  if (!plan.ok()) return plan.status();
  wf.plan = std::move(plan).value();
  return Status::Ok();
}

}  // namespace baton
