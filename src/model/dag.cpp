// Static DAG analysis: Kahn layers, critical path, parallelism (seeds 002 and 004).
#include "model/dag_schedule.h"

#include <baton/workflow.h>

#include <algorithm>

namespace baton {

DagAnalysis AnalyzeDag(const WorkflowDef& wf) {
  DagAnalysis out;
  size_t n = wf.steps.size();
  out.layer_of.assign(n, -1);
  if (n == 0) return out;
  // The graph the definition was compiled with; linked here only for one without a plan.
  StepGraph linked;
  if (!wf.plan || wf.plan->graph.size() != n) linked = LinkStepGraph(wf);
  const StepGraph& g = linked.size() == n ? linked : wf.plan->graph;
  std::vector<int> indegree(n);
  std::vector<int> layer;
  for (size_t i = 0; i < n; ++i) {
    indegree[i] = static_cast<int>(g.Upstream(static_cast<int>(i)).size());
    if (indegree[i] == 0) layer.push_back(static_cast<int>(i));
  }
  // Kahn by rounds: layer k holds the steps whose last dependency is in layer k-1.
  std::vector<int> order;
  while (!layer.empty()) {
    std::sort(layer.begin(), layer.end());
    std::vector<int> next;
    for (int u : layer) {
      out.layer_of[u] = static_cast<int>(out.layers.size());
      order.push_back(u);
      for (int v : g.Downstream(u)) {
        if (--indegree[v] == 0) next.push_back(v);
      }
    }
    out.max_parallelism = std::max(out.max_parallelism, layer.size());
    out.layers.push_back(std::move(layer));
    layer = std::move(next);
  }
  // Longest path by estimate, over the topological order; ties keep the first
  // dependency listed and the earliest sink.
  std::vector<Duration> finish(n, Duration{0});
  std::vector<int> via(n, -1);
  int sink = -1;
  for (int u : order) {
    for (int p : g.Upstream(u)) {
      if (via[u] < 0 || finish[p] > finish[via[u]]) via[u] = p;
    }
    Duration start = via[u] >= 0 ? finish[via[u]] : Duration{0};
    Duration est = StepEstimate(wf.steps[u]);
    finish[u] = start + est;
    out.sequential_estimate += est;
    if (sink < 0 || finish[u] > finish[sink]) sink = u;
  }
  for (int s = sink; s >= 0; s = via[s]) out.critical_path.push_back(s);
  std::reverse(out.critical_path.begin(), out.critical_path.end());
  if (sink >= 0) out.critical_path_estimate = finish[sink];
  if (out.critical_path_estimate.count() > 0) {
    out.estimated_speedup = static_cast<double>(out.sequential_estimate.count()) /
                            static_cast<double>(out.critical_path_estimate.count());
  }
  return out;
}

}  // namespace baton
