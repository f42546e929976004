// `baton validate` and `baton analyze`: read workflow files, run nothing.
#include "cli/commands.h"
#include "cli/workflow_directory.h"
#include "model/dag_schedule.h"

#include <baton/workflow.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <thread>

namespace baton::cli {

namespace {

// What validates but does not run as written yet: said, so that "ok" is not a promise
// the engine breaks (issue 12 builds these).
std::vector<std::pair<const StepDef*, std::string>> Unsupported(const WorkflowDef& wf) {
  std::vector<std::pair<const StepDef*, std::string>> out;
  for (const StepDef& s : wf.steps) {
    if (s.extra().cache && !s.for_each.is_null()) {
      out.emplace_back(&s, "cache is not applied to for_each steps: the step runs every time");
    }
  }
  return out;
}

// Whether the child workflows of `from` (by name, through `dir`) lead to `target`; the
// names on the way are appended to `path`.
bool Reaches(const std::string& from, const std::string& target, WorkflowDirectory& dir,
             std::set<std::string>& seen, std::vector<std::string>& path) {
  if (from == target) return true;
  if (!seen.insert(from).second) return false;
  std::shared_ptr<const WorkflowDef> def = dir.Peek(from);
  if (!def) return false;  // unknown here: the engine checks it when the child starts
  for (const StepDef& s : def->steps) {
    auto child = s.spec.find("workflow");
    if (s.type != StepType::kWorkflow || child == s.spec.end() || !child->is_string()) continue;
    path.push_back(child->get<std::string>());
    if (Reaches(path.back(), target, dir, seen, path)) return true;
    path.pop_back();
  }
  return false;
}

// Steps of `wf` whose child workflow leads back to `wf` through the workflow files of
// `dir`, each with its cycle ("a -> b -> a").
std::vector<std::pair<const StepDef*, std::string>> ChildCycles(const WorkflowDef& wf,
                                                                WorkflowDirectory& dir) {
  std::vector<std::pair<const StepDef*, std::string>> out;
  for (const StepDef& s : wf.steps) {
    auto child = s.spec.find("workflow");
    if (s.type != StepType::kWorkflow || child == s.spec.end() || !child->is_string()) continue;
    std::vector<std::string> path = {wf.name, child->get<std::string>()};
    std::set<std::string> seen;
    if (path.back() == wf.name || !Reaches(path.back(), wf.name, dir, seen, path)) continue;
    std::string text;
    for (const std::string& name : path) text += (text.empty() ? "" : " -> ") + name;
    out.emplace_back(&s, text);
  }
  return out;
}

}  // namespace

int ValidateCommand(const std::vector<std::string>& files, bool json) {
  int code = 0;
  Json report = Json::array();
  std::map<std::string, std::unique_ptr<WorkflowDirectory>> dirs;  // by directory
  for (const auto& file : files) {
    ParseOutcome out = LoadWorkflowFile(file);
    if (out.ok()) {
      // Child workflows known by name (the files of the same directory, as `baton run`
      // finds them): a cycle through them is an error here, not a failure at run time.
      std::string dir = std::filesystem::path(file).parent_path().string();
      if (dir.empty()) dir = ".";
      auto& catalog = dirs[dir];
      if (!catalog) catalog = std::make_unique<WorkflowDirectory>(dir);
      for (const auto& [step, cycle] : ChildCycles(*out.workflow, *catalog)) {
        out.diagnostics.push_back(Diagnostic{
            file, step->line, step->id, "workflow",
            "child workflow cycle: " + cycle + " (through the workflow files of " + dir + ")"});
      }
      if (!out.diagnostics.empty()) out.workflow.reset();
    }
    Json entry = {{"file", file},
                  {"valid", out.ok()},
                  {"errors", Json::array()},
                  {"warnings", Json::array()}};
    if (out.ok()) {
      entry["workflow"] = out.workflow->name;
      entry["steps"] = out.workflow->steps.size();
      if (!json) {
        std::printf("ok: %s (workflow '%s', %zu steps)\n", file.c_str(), out.workflow->name.c_str(),
                    out.workflow->steps.size());
      }
      for (const auto& [step, message] : Unsupported(*out.workflow)) {
        entry["warnings"].push_back(
            {{"file", file}, {"line", step->line}, {"step", step->id}, {"message", message}});
        if (!json) {
          std::fprintf(stderr, "warning: %s:%d: step '%s': %s\n", file.c_str(), step->line,
                       step->id.c_str(), message.c_str());
        }
      }
    } else {
      code = 2;
      for (const auto& d : out.diagnostics) {
        entry["errors"].push_back({{"file", d.file},
                                   {"line", d.line},
                                   {"step", d.step},
                                   {"field", d.field},
                                   {"message", d.message}});
        if (!json) std::fprintf(stderr, "%s\n", d.ToString().c_str());
      }
    }
    report.push_back(std::move(entry));
    // The process exits next: freeing a large definition node by node costs a fifth of
    // what parsing it did. The last one is left for the OS to take back (still reachable
    // from `kept`, so leak checkers stay quiet); an earlier one is freed by the next.
    static auto* const kept = new std::optional<ParseOutcome>;
    *kept = std::move(out);
  }
  if (json) std::cout << report.dump(2) << std::endl;
  return code;
}

int AnalyzeCommand(const std::string& file, bool json, int parallel) {
  ParseOutcome out = LoadWorkflowFile(file);
  if (!out.ok()) {
    for (const auto& d : out.diagnostics) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return 2;
  }
  const WorkflowDef& wf = *out.workflow;
  DagAnalysis dag = AnalyzeDag(wf);
  const int slots =
      parallel > 0 ? parallel : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const Duration bounded = EstimateWithSlots(wf, dag, slots);
  const double speedup = bounded.count() > 0
                             ? static_cast<double>(dag.sequential_estimate.count()) /
                                   static_cast<double>(bounded.count())
                             : 1.0;
  auto ids = [&](const std::vector<int>& idx) {
    Json a = Json::array();
    for (int i : idx) a.push_back(wf.steps[i].id);
    return a;
  };
  if (json) {
    Json layers = Json::array();
    for (const auto& l : dag.layers) layers.push_back(ids(l));
    Json j = {{"workflow", wf.name},
              {"steps", wf.steps.size()},
              {"layers", layers},
              {"critical_path", ids(dag.critical_path)},
              {"critical_path_estimate_ms", dag.critical_path_estimate.count()},
              {"sequential_estimate_ms", dag.sequential_estimate.count()},
              {"max_parallelism", dag.max_parallelism},
              {"parallel", slots},
              {"parallel_estimate_ms", bounded.count()},
              {"estimated_speedup", speedup},
              {"unbounded_speedup", dag.estimated_speedup}};
    std::cout << j.dump(2) << std::endl;
    return 0;
  }
  std::printf("workflow %s: %zu steps in %zu layers\n\n", wf.name.c_str(), wf.steps.size(),
              dag.layers.size());
  for (size_t i = 0; i < dag.layers.size(); ++i) {
    std::string names;
    for (int s : dag.layers[i]) names += (names.empty() ? "" : ", ") + wf.steps[s].id;
    std::printf("  layer %zu%s: %s\n", i + 1, dag.layers[i].size() > 1 ? " (parallel)" : "",
                names.c_str());
  }
  std::string path;
  for (int s : dag.critical_path) path += (path.empty() ? "" : " -> ") + wf.steps[s].id;
  std::printf("\ncritical path:     %s (est. %s)\n", path.c_str(),
              FormatDuration(dag.critical_path_estimate).c_str());
  std::printf("max parallelism:   %zu\n", dag.max_parallelism);
  std::printf("sequential est.:   %s\n", FormatDuration(dag.sequential_estimate).c_str());
  std::printf("with --parallel %d: %s, an estimated speedup of %.2fx over a sequential run\n",
              slots, FormatDuration(bounded).c_str(), speedup);
  if (std::abs(speedup - dag.estimated_speedup) > 0.005) {
    std::printf("unbounded:         %.2fx (the critical path's)\n", dag.estimated_speedup);
  }
  std::printf(
      "\nEstimates: a wait step's duration, else a tenth of its timeout, else 1s. Shell and\n"
      "http steps share the --parallel slots; the others take none.\n");
  return 0;
}

}  // namespace baton::cli
