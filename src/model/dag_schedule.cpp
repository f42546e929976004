#include "model/dag_schedule.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

namespace baton {

Duration StepEstimate(const StepDef& step) {
  if (step.type == StepType::kWait && step.spec.contains("duration")) {
    Result<Duration> d = ParseDuration(step.spec["duration"]);
    if (d.ok()) return *d;
  }
  if (step.timeout && step.timeout->count() > 0) return *step.timeout / 10;
  return Duration{1000};
}

bool TakesLocalSlot(const StepDef& step) {
  return step.type == StepType::kShell || step.type == StepType::kHttp;
}

Duration EstimateWithSlots(const WorkflowDef& wf, const DagAnalysis& dag, int slots) {
  const size_t n = wf.steps.size();
  if (n == 0) return Duration{0};
  StepGraph linked;
  if (!wf.plan || wf.plan->graph.size() != n) linked = LinkStepGraph(wf);
  const StepGraph& g = linked.size() == n ? linked : wf.plan->graph;
  // Priority: the longest estimated path from a step to the end, itself included.
  std::vector<int64_t> tail(n, 0);
  for (auto layer = dag.layers.rbegin(); layer != dag.layers.rend(); ++layer) {
    for (int u : *layer) {
      int64_t longest = 0;
      for (int v : g.Downstream(u)) longest = std::max(longest, tail[v]);
      tail[u] = longest + StepEstimate(wf.steps[u]).count();
    }
  }
  std::vector<int> waiting_on(n);
  for (size_t i = 0; i < n; ++i) {
    waiting_on[i] = static_cast<int>(g.Upstream(static_cast<int>(i)).size());
  }
  auto by_priority = [&](int a, int b) { return std::tie(tail[a], b) < std::tie(tail[b], a); };
  std::priority_queue<int, std::vector<int>, decltype(by_priority)> ready(by_priority);
  for (size_t i = 0; i < n; ++i) {
    if (waiting_on[i] == 0) ready.push(static_cast<int>(i));
  }
  using Running = std::pair<int64_t, int>;  // finish time, step
  std::priority_queue<Running, std::vector<Running>, std::greater<>> running;
  int64_t now = 0;
  int free_slots = std::max(slots, 1);
  std::vector<int> held;  // ready steps that need a slot while none is free
  size_t finished = 0;
  while (finished < n) {
    while (!ready.empty()) {
      const int u = ready.top();
      ready.pop();
      if (TakesLocalSlot(wf.steps[u])) {
        if (free_slots == 0) {
          held.push_back(u);
          continue;
        }
        --free_slots;
      }
      running.emplace(now + StepEstimate(wf.steps[u]).count(), u);
    }
    for (int u : held) ready.push(u);
    held.clear();
    if (running.empty()) break;  // a cycle: AnalyzeDag left those steps out
    const auto [at, u] = running.top();
    running.pop();
    now = at;
    ++finished;
    if (TakesLocalSlot(wf.steps[u])) ++free_slots;
    for (int v : g.Downstream(u)) {
      if (--waiting_on[v] == 0) ready.push(v);
    }
  }
  return Duration{now};
}

}  // namespace baton
