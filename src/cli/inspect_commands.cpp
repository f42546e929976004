// `baton validate` and `baton analyze`: read workflow files, run nothing.
#include "cli/commands.h"

#include <baton/workflow.h>

#include <iostream>

namespace baton::cli {

namespace {

// What validates but does not run as written yet: said, so that "ok" is not a promise
// the engine breaks (issue 12 builds these).
std::vector<std::pair<const StepDef*, std::string>> Unsupported(const WorkflowDef& wf) {
  std::vector<std::pair<const StepDef*, std::string>> out;
  for (const StepDef& s : wf.steps) {
    if (s.cache && !s.for_each.is_null()) {
      out.emplace_back(&s, "cache is not applied to for_each steps: the step runs every time");
    }
  }
  return out;
}

}  // namespace

int ValidateCommand(const std::vector<std::string>& files, bool json) {
  int code = 0;
  Json report = Json::array();
  for (const auto& file : files) {
    ParseOutcome out = LoadWorkflowFile(file);
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
  }
  if (json) std::cout << report.dump(2) << std::endl;
  return code;
}

int AnalyzeCommand(const std::string& file, bool json) {
  ParseOutcome out = LoadWorkflowFile(file);
  if (!out.ok()) {
    for (const auto& d : out.diagnostics) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return 2;
  }
  const WorkflowDef& wf = *out.workflow;
  DagAnalysis dag = AnalyzeDag(wf);
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
              {"estimated_speedup", dag.estimated_speedup}};
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
  std::printf("estimated speedup: %.2fx over a sequential run\n", dag.estimated_speedup);
  return 0;
}

}  // namespace baton::cli
