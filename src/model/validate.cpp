// Graph checks (ids, dependencies, cycles) and reference checks (templates, conditions).
#include "model/builder.h"

#include "expr/condition.h"
#include "expr/template.h"

#include <algorithm>
#include <span>
#include <unordered_set>

namespace baton::model {
namespace {

// Where a dependency is written: the array element naming it, else depends_on itself.
Where DependencyWhere(const StepSite& site, const std::string& dep) {
  Where w = site.where.Key("depends_on");
  if (site.json == nullptr || !site.json->contains("depends_on")) return w;
  const Json& list = (*site.json)["depends_on"];
  if (!list.is_array()) return w;
  for (size_t k = 0; k < list.size(); ++k) {
    if (list[k] == dep) return w.Index(k);
  }
  return w;
}

// Removes every step that is not on or behind a cycle (Kahn); `alive` keeps the rest.
void Peel(const StepGraph& g, std::vector<char>* alive) {
  size_t n = g.size();
  std::vector<int> indegree(n, 0);
  for (size_t i = 0; i < n; ++i) {
    if (!(*alive)[i]) continue;
    for (int u : g.Upstream(static_cast<int>(i))) {
      if ((*alive)[u]) ++indegree[i];
    }
  }
  std::vector<int> queue;
  for (size_t i = 0; i < n; ++i) {
    if ((*alive)[i] && indegree[i] == 0) queue.push_back(static_cast<int>(i));
  }
  while (!queue.empty()) {
    int u = queue.back();
    queue.pop_back();
    (*alive)[u] = 0;
    for (int v : g.Downstream(u)) {
      if ((*alive)[v] && --indegree[v] == 0) queue.push_back(v);
    }
  }
}

void ReportCycles(const WorkflowDef& wf, const std::vector<StepSite>& sites, const StepGraph& g,
                  Diags& d) {
  size_t n = g.size();
  std::vector<char> alive(n, 1);
  Peel(g, &alive);
  while (true) {
    auto first = std::find(alive.begin(), alive.end(), 1);
    if (first == alive.end()) return;
    // Every remaining step has a remaining dependency, so following them must loop.
    std::vector<int> path;
    std::unordered_map<int, size_t> pos;
    int cur = static_cast<int>(first - alive.begin());
    while (!pos.count(cur)) {
      pos[cur] = path.size();
      path.push_back(cur);
      int next = -1;
      for (int u : g.Upstream(cur)) {
        if (alive[u]) {
          next = u;
          break;
        }
      }
      if (next < 0) return;  // cannot happen after Peel; be safe
      cur = next;
    }
    std::vector<int> cycle(path.begin() + static_cast<long>(pos[cur]), path.end());
    // Start at the member defined first, so the message does not depend on the walk.
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
    std::string text = "cycle: ";
    for (int s : cycle) text += wf.steps[s].id + " -> ";
    text += wf.steps[cycle.front()].id;
    const StepSite& site = sites[cycle.front()];
    d.Add(DependencyWhere(site, cycle.size() > 1 ? wf.steps[cycle[1]].id : ""), text);
    for (int s : cycle) alive[s] = 0;
    Peel(g, &alive);
  }
}

enum class ItemUse { kNotAllowed, kInForEach, kAllowed };

class ReferenceChecker {
 public:
  ReferenceChecker(const WorkflowDef& wf, const std::vector<StepSite>& sites,
                   const StepIndex& index, const StepGraph& graph, bool inputs_declared, Diags& d)
      : wf_(wf),
        sites_(sites),
        index_(index),
        graph_(graph),
        inputs_declared_(inputs_declared),
        d_(d) {
    conditions_.resize(wf.steps.size());
    for (const InputDecl& in : wf.inputs) inputs_.push_back(in.name);
  }

  // The conditions CheckStep compiled, one per step (null where there is none).
  std::vector<std::unique_ptr<const expr::Condition>> TakeConditions() {
    return std::move(conditions_);
  }

  void CheckStep(size_t i) {
    const StepSite& site = sites_[i];
    const StepDef& step = wf_.steps[i];
    const Where& w = site.where;
    int idx = static_cast<int>(i);
    if (site.json != nullptr) CheckFieldValues(*site.json, step, w, idx);
    CheckCondition(step, w, idx);
  }

  // Every template in the step's fields (a step without a template, set_vars or for_each
  // has nothing to check here: PreparsedSteps keeps no text of it).
  void CheckFieldValues(const Json& s, const StepDef& step, const Where& w, int idx) {
    ItemUse item = step.for_each.is_null() ? ItemUse::kNotAllowed : ItemUse::kAllowed;
    for (const auto& [key, value] : s.items()) {
      // Fields that hold no templates, or are checked below.
      if (key == "id" || key == "type" || key == "depends_on" || key == "when" ||
          key == "trigger_rule" || key == "optional" || key == "timeout" ||
          key == "heartbeat_timeout" || key == "expected_duration" || key == "retry" ||
          key == "priority" || key == "for_each" || key == "set_vars") {
        continue;
      }
      CheckValue(value, w.Key(key), idx, item);
    }
    if (s.contains("set_vars")) {
      // Rendered once the step has completed: its own output is there to read.
      self_allowed_ = true;
      CheckValue(s["set_vars"], w.Key("set_vars"), idx, item);
      self_allowed_ = false;
    }
    if (s.contains("for_each") && s["for_each"].is_string()) {
      CheckValue(s["for_each"], w.Key("for_each"), idx, ItemUse::kInForEach);
    }
  }

  // `when`, compiled once here for the plan.
  void CheckCondition(const StepDef& step, const Where& w, int idx) {
    ItemUse item = step.for_each.is_null() ? ItemUse::kNotAllowed : ItemUse::kAllowed;
    if (!step.when.is_null()) {
      Where ww = w.Key("when");
      Result<expr::Condition> cond = expr::CompileCondition(step.when);
      if (!cond.ok()) {
        d_.Add(ww, cond.status().message());
      } else {
        for (const expr::Path& p : cond->references()) CheckPath(p, "condition", idx, item, ww);
        conditions_[static_cast<size_t>(idx)] =
            std::make_unique<const expr::Condition>(std::move(cond).value());
      }
    }
  }

  // Top-level values (output, vars, notify): any step may be named.
  void CheckTop(const Json& value, const Where& w) {
    CheckValue(value, w, -1, ItemUse::kNotAllowed);
  }

 private:
  void CheckValue(const Json& v, const Where& w, int step, ItemUse item) {
    if (v.is_string()) {
      const std::string& text = v.get_ref<const std::string&>();
      if (text.find("{{") == std::string::npos) return;
      std::vector<expr::Path> paths;
      Status st = expr::CollectReferences(v, &paths);
      if (!st.ok()) {
        d_.Add(w, st.message());
        return;
      }
      std::unordered_set<std::string> seen;
      for (const expr::Path& p : paths) {
        if (seen.insert(p.text).second) CheckPath(p, "template", step, item, w);
      }
    } else if (v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i) CheckValue(v[i], w.Index(i), step, item);
    } else if (v.is_object()) {
      for (const auto& [key, value] : v.items()) CheckValue(value, w.Key(key), step, item);
    }
  }

  static const std::string* SecondKey(const expr::Path& p) {
    if (p.segments.size() < 2 || p.segments[1].key.empty()) return nullptr;
    return &p.segments[1].key;
  }

  void CheckPath(const expr::Path& p, const std::string& kind, int step, ItemUse item,
                 const Where& w) {
    const std::string& root = p.root();
    if (root == "inputs") {
      const std::string* name = SecondKey(p);
      if (inputs_declared_ && name &&
          std::find(inputs_.begin(), inputs_.end(), *name) == inputs_.end()) {
        d_.Add(w, kind + " references undeclared input '" + *name + "' (declared: " +
                      (inputs_.empty() ? std::string("none") : JoinNames(inputs_)) + ")");
      }
    } else if (root == "steps") {
      CheckStepPath(p, kind, step, w);
    } else if (root == "vars") {
      const std::string* name = SecondKey(p);
      if (name && !wf_.vars.contains(*name) && !SetByAStep(*name)) {
        d_.Add(w, kind + " references undeclared var '" + *name +
                      "' (declare it in vars, or set it with a step's set_vars)");
      }
    } else if (root == "item" || root == "item_index") {
      if (item == ItemUse::kNotAllowed) {
        d_.Add(w, "'" + root + "' is only valid in a step with for_each");
      } else if (item == ItemUse::kInForEach) {
        d_.Add(w, "'" + root + "' cannot be used in for_each itself");
      }
    } else if (root != "execution") {
      d_.Add(w, "unknown " + kind + " root '" + root + "' in '" + p.text +
                    "' (valid: inputs, steps, execution, vars, item, item_index)");
    }
  }

  void CheckStepPath(const expr::Path& p, const std::string& kind, int step, const Where& w) {
    const std::string* target = SecondKey(p);
    if (!target) {
      d_.Add(w, kind + " reference '" + p.text + "' must name a step, e.g. steps.ID.output");
      return;
    }
    auto it = index_.find(*target);
    if (it == index_.end()) {
      d_.Add(w, kind + " references unknown step '" + *target + "'");
      return;
    }
    if (step < 0) return;
    if (it->second == step) {
      if (!self_allowed_) d_.Add(w, kind + " references step '" + *target + "' itself");
      return;
    }
    if (!IsUpstream(step, it->second)) {
      d_.Add(w, kind + " references step '" + *target + "', which is not upstream of '" +
                    wf_.steps[step].id + "' (add it to depends_on)");
    }
  }

  bool SetByAStep(const std::string& name) const {
    for (const StepDef& s : wf_.steps) {
      if (s.extra().set_vars.is_object() && s.extra().set_vars.contains(name)) return true;
    }
    return false;
  }

  bool IsUpstream(int step, int target) {
    const std::span<const int> direct = graph_.Upstream(step);
    if (std::find(direct.begin(), direct.end(), target) != direct.end()) return true;
    if (ancestors_of_ != step) {
      // One walk per step that needs it; later lookups for the same step are O(1).
      ancestors_.assign(wf_.steps.size(), 0);
      std::vector<int> stack(direct.begin(), direct.end());
      while (!stack.empty()) {
        int u = stack.back();
        stack.pop_back();
        if (ancestors_[u]) continue;
        ancestors_[u] = 1;
        for (int v : graph_.Upstream(u)) {
          if (!ancestors_[v]) stack.push_back(v);
        }
      }
      ancestors_of_ = step;
    }
    return ancestors_[target] != 0;
  }

  const WorkflowDef& wf_;
  bool self_allowed_ = false;  // checking set_vars: a step may read its own output
  const std::vector<StepSite>& sites_;
  const StepIndex& index_;
  const StepGraph& graph_;
  bool inputs_declared_;
  Diags& d_;
  std::vector<std::unique_ptr<const expr::Condition>> conditions_;
  std::vector<std::string> inputs_;
  int ancestors_of_ = -1;
  std::vector<char> ancestors_;
};

}  // namespace

void ValidateGraph(const WorkflowDef& wf, const std::vector<StepSite>& sites,
                   const StepIndex& index, const StepGraph& graph, Diags& d) {
  // The index holds each id once: as many entries as steps with an id means no id is
  // repeated, and the search for the repeats (a hash lookup per step) is skipped.
  const size_t with_id = static_cast<size_t>(std::count_if(
      wf.steps.begin(), wf.steps.end(), [](const StepDef& s) { return !s.id.empty(); }));
  for (size_t i = 0; i < wf.steps.size() && index.size() != with_id; ++i) {
    if (!sites[i].has_id) continue;
    const int first = index.at(wf.steps[i].id);
    if (first != static_cast<int>(i)) {
      int line = d.LineOf(sites[first].where.Key("id").pointer);
      d.Add(sites[i].where.Key("id"), "duplicate step id '" + wf.steps[i].id +
                                          "' (first defined at line " + std::to_string(line) + ")");
    }
  }
  for (size_t i = 0; i < wf.steps.size(); ++i) {
    const StepDef& step = wf.steps[i];
    // Every dependency resolved: nothing to report (the common case costs one compare).
    if (graph.Upstream(static_cast<int>(i)).size() == step.depends_on.size()) continue;
    for (const std::string& dep : step.depends_on) {
      if (sites[i].has_id && dep == step.id) {
        d.Add(DependencyWhere(sites[i], dep), "step depends on itself");
      } else if (!index.count(dep)) {
        d.Add(DependencyWhere(sites[i], dep), "depends on unknown step '" + dep + "'");
      }
    }
  }
  ReportCycles(wf, sites, graph, d);
}

std::vector<std::unique_ptr<const expr::Condition>> ValidateReferences(
    const WorkflowDef& wf, const std::vector<StepSite>& sites, const StepIndex& index,
    const StepGraph& graph, bool inputs_declared, Diags& d) {
  ReferenceChecker checker(wf, sites, index, graph, inputs_declared, d);
  for (size_t i = 0; i < wf.steps.size(); ++i) checker.CheckStep(i);
  checker.CheckTop(wf.output, Where{"/output", "", "output"});
  checker.CheckTop(wf.vars, Where{"/vars", "", "vars"});
  checker.CheckTop(wf.notify, Where{"/notify", "", "notify"});
  return checker.TakeConditions();
}

}  // namespace baton::model
