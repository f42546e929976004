// `baton run` and `baton resume`: drive executions to a terminal state in-process.
#include "cli/commands.h"
#include "cli/progress_view.h"
#include "cli/signals.h"
#include "cli/workflow_directory.h"
#include "common/json_parse.h"
#include "runners/http_runner.h"
#include "server/views.h"
#include "workers/coordinator.h"

#include <baton/engine.h>
#include <baton/event_loop.h>
#include <baton/memory_store.h>
#include <baton/sqlite_store.h>

#include <pthread.h>
#include <unistd.h>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

namespace baton::cli {
namespace {

int Usage(const std::string& message) {
  std::fprintf(stderr, "baton: %s\n", message.c_str());
  return 2;
}

Result<Json> ReadInputFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(errc::kIo, "cannot read input file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  Json j;
  JsonParseError error;
  if (!ParseJsonText(ss.str(), &j, &error)) {
    return Status(errc::kValidation, "input file '" + path + "': " + error.Describe());
  }
  if (!j.is_object()) {
    return Status(errc::kValidation, "input file '" + path + "' must hold a JSON object");
  }
  return j;
}

struct Session {
  std::unique_ptr<Store> store;
  std::string db_path;
  bool keeps_steps = true;  // whether the store keeps step and attempt rows
};

Result<Session> OpenStore(const RunArgs& args) {
  Session s;
  if (args.ephemeral) {
    // The live view sees every event as it is committed; nothing reads the log back, and
    // the steps are read back only for --json's final view.
    s.keeps_steps = args.json;
    s.store = NewMemoryStore({.keep_events = false, .keep_steps = s.keeps_steps});
    return s;
  }
  s.db_path = args.db.empty() ? DefaultDbPath() : args.db;
  std::error_code ec;
  auto parent = std::filesystem::path(s.db_path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent, ec);
  SqliteOptions opts;
  opts.synchronous_full = !args.sync_normal;
  auto store = OpenSqliteStore(s.db_path, opts);
  if (!store.ok()) return store.status();
  s.store = std::move(store.value());
  return s;
}

// "gpu=2" -> the pool gpu with 2 slots.
Result<PoolRecord> ParsePoolFlag(const std::string& spec) {
  const auto eq = spec.find('=');
  PoolRecord pool;
  pool.name = spec.substr(0, eq == std::string::npos ? spec.size() : eq);
  const std::string slots = eq == std::string::npos ? "" : spec.substr(eq + 1);
  const bool digits = !slots.empty() && slots.size() <= 7 &&
                      slots.find_first_not_of("0123456789") == std::string::npos;
  if (pool.name.empty() || !digits || std::stoi(slots) < 1 || std::stoi(slots) > 1'000'000) {
    return Status(errc::kValidation,
                  "--pool expects NAME=SLOTS with SLOTS from 1 to 1000000, got '" + spec + "'");
  }
  pool.slots = std::stoi(slots);
  return pool;
}

// Runs the loop until every execution in `ids` (or started by `start`) is terminal.
// `step_names`: the steps' names (by id), for the live view and --json.
int Drive(const RunArgs& args, Session& session,
          const std::function<Result<std::vector<std::string>>(Engine&)>& begin,
          std::map<std::string, std::string> step_names = {}) {
  SignalCatcher::BlockInThisAndFutureThreads();
  RealEventLoop loop;
  std::unique_ptr<Committer> committer = args.ephemeral ? NewSyncCommitter(session.store.get())
                                                        : NewGroupCommitter(session.store.get());
  // The http steps' egress allow-list comes from BATON_HTTP_ALLOW.
  Result<HttpRunnerOptions> http_options = HttpRunnerOptionsFromEnv();
  if (!http_options.ok()) return Usage(http_options.status().message());
  std::unique_ptr<Runner> shell = NewShellRunner();
  std::unique_ptr<Runner> http = NewHttpRunner(*http_options);
  EngineOptions options;
  options.parallel = args.parallel;
  // Rows the store would drop are not built (an ephemeral run without --json).
  options.write_step_rows = session.keeps_steps;
  // Child workflows by name, from the workflow files of one directory.
  std::string dir = args.workflows_dir;
  if (dir.empty())
    dir = args.file.empty() ? "." : std::filesystem::path(args.file).parent_path().string();
  if (dir.empty()) dir = ".";
  WorkflowDirectory children(dir);
  options.child_workflows = [&children](const std::string&, const std::string& name, int version) {
    return children.Find(name, version);
  };
  Engine engine(&loop, committer.get(), options);
  // Shell and http steps run on the in-process local worker, through the same
  // coordinator (queue, placement, assignments) as a server's; no remote workers here.
  workers::Coordinator coordinator(&loop, committer.get(), workers::CoordinatorOptions{});
  coordinator.AddLocalWorker(workers::LocalWorkerFor(options, shell.get(), http.get()));
  engine.SetRunner(StepType::kShell, coordinator.local_runner());
  engine.SetRunner(StepType::kHttp, coordinator.local_runner());

  const bool live =
      isatty(STDERR_FILENO) && std::getenv("TERM") && std::string(std::getenv("TERM")) != "dumb";
  ProgressView view(stderr, live, args.quiet, &loop);
  view.SetStepNames(step_names);
  engine.AddObserver(&view);

  std::set<std::string> waiting;
  std::vector<std::string> ids;
  std::map<std::string, ExecutionStatus> finals;
  bool store_failed = false;
  int exit_code = 0;
  view.on_finished = [&](const std::string& id, ExecutionStatus status) {
    finals[id] = status;
    waiting.erase(id);
    if (waiting.empty()) loop.Stop();
  };
  struct StoreWatch final : ExecutionObserver {
    std::function<void()> fn;
    void OnEvent(const EventRecord&, const ExecutionProgress&) override {}
    void OnStoreError(const Status&) override { fn(); }
  } store_watch;
  store_watch.fn = [&] {
    store_failed = true;
    loop.Stop();
  };
  engine.AddObserver(&store_watch);

  loop.Post([&] {
    // Numbering continues after the events already in the database (run and resume).
    Status seeded = SeedEventPositions(session.store.get(), &engine);
    if (seeded.ok()) seeded = LoadBreakers(session.store.get(), &engine);
    if (seeded.ok()) seeded = LoadCache(session.store.get(), &engine);
    if (seeded.ok()) seeded = LoadPools(session.store.get(), &engine);
    // --pool NAME=N: pools of this run (kept in the database like a server's).
    for (const std::string& spec : args.pools) {
      Result<PoolRecord> pool = ParsePoolFlag(spec);
      if (seeded.ok()) seeded = pool.ok() ? engine.SetPool(*pool) : pool.status();
    }
    auto started = seeded.ok() ? begin(engine) : Result<std::vector<std::string>>(seeded);
    if (!started.ok()) {
      std::fprintf(stderr, "baton: %s\n", started.status().message().c_str());
      exit_code = 2;
      loop.Stop();
      return;
    }
    ids = *started;
    for (auto& id : ids) {
      if (!finals.count(id)) waiting.insert(id);
    }
    if (waiting.empty()) loop.Stop();
  });
  std::function<void()> tick = [&] {
    view.Tick(loop.Now());
    loop.ScheduleAfter(Duration(200), tick);
  };
  loop.Post([&] { loop.ScheduleAfter(Duration(200), tick); });

  {
    // The first signal cancels (SIGTERM to the steps' process groups, SIGKILL after the
    // grace period); the second kills them now, and the steps are still recorded
    // `cancelled` before baton exits: no process outlives it, and the store never says
    // `running` for work nobody runs (issue 11, defect 8). A third exits at once.
    int signals_seen = 0;  // on the signal thread
    SignalCatcher signals(
        [&](int sig) {
          if (++signals_seen >= 2) {
            std::fprintf(stderr,
                         "\nbaton: interrupted again, killing the steps now "
                         "(once more to exit without recording them)\n");
            shell->KillNow();
            http->KillNow();
            return;
          }
          loop.Post([&, sig] {
            if (!args.quiet) {
              view.Finish();
              std::fprintf(stderr,
                           "baton: %s, cancelling (press Ctrl-C again to kill the steps now)\n",
                           sig == SIGINT ? "interrupted" : "terminated");
            }
            for (const auto& id : std::vector<std::string>(waiting.begin(), waiting.end())) {
              (void)engine.Cancel(id,
                                  sig == SIGINT ? "interrupted (SIGINT)" : "terminated (SIGTERM)");
            }
          });
        },
        /*handled=*/2);
    loop.Run();
  }
  view.Finish();
  shell->Shutdown();  // no process is left behind
  http->Shutdown();
  committer->Flush();
  if (exit_code != 0) return exit_code;
  if (store_failed) return 1;

  for (const auto& id : ids) {
    // The whole view (every step) only for --json: the summary needs the record alone.
    Result<Json> final_json = Json();
    if (args.json) {
      final_json = ExecutionJson(session.store.get(), id);
      // Each step's `name`, as the server's detail has it.
      if (final_json.ok() && final_json->contains("steps")) {
        for (Json& step : (*final_json)["steps"]) {
          auto it = step_names.find(step.value("id", ""));
          if (it != step_names.end()) step["name"] = it->second;
        }
      }
    } else if (auto rec = session.store->GetExecution(id); rec.ok()) {
      final_json =
          Json{{"status", ToString(rec->status)}, {"error", rec->error}, {"output", rec->output}};
    } else {
      final_json = rec.status();
    }
    if (!final_json.ok()) {
      std::fprintf(stderr, "baton: %s\n", final_json.status().message().c_str());
      return 1;
    }
    auto status = ParseExecutionStatus(final_json->value("status", "failed"))
                      .value_or(ExecutionStatus::kFailed);
    exit_code = std::max(exit_code, ExitCodeFor(status));
    if (args.json) {
      std::cout << final_json->dump(2) << std::endl;
    }
    if (!args.quiet) {
      PrintOutcome(stderr, id, status, (*final_json)["error"], (*final_json)["output"], live,
                   /*with_output=*/!args.json,
                   session.db_path.empty() ? "" : "  (db: " + session.db_path + ")");
    }
  }
  return exit_code;
}

}  // namespace

std::string DefaultDbPath() {
  if (const char* env = std::getenv("BATON_DB"); env && *env) return env;
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/baton/baton.db";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.local/state/baton/baton.db";
  }
  return "baton.db";
}

int RunCommand(const RunArgs& args) {
  ParseOutcome parsed = LoadWorkflowFile(args.file);
  if (!parsed.ok()) {
    for (const auto& d : parsed.diagnostics) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return 2;
  }
  auto workflow = std::make_shared<const WorkflowDef>(std::move(*parsed.workflow));
  Json provided = Json::object();
  if (!args.input_file.empty()) {
    auto file_input = ReadInputFile(args.input_file);
    if (!file_input.ok()) return Usage(file_input.status().message());
    provided = std::move(file_input.value());
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& kv : args.inputs) {
    auto eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Usage("--input expects key=value, got '" + kv + "'");
    }
    pairs.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
  }
  Result<Json> input = ResolveInputs(*workflow, provided, pairs);
  if (!input.ok()) return Usage(args.file + ": " + input.status().message());

  auto session = OpenStore(args);
  if (!session.ok()) return Usage(session.status().message());
  std::map<std::string, std::string> names;
  for (const StepDef& step : workflow->steps) {
    if (!step.name.empty()) names.emplace(step.id, step.name);
  }
  return Drive(
      args, *session,
      [&](Engine& engine) -> Result<std::vector<std::string>> {
        StartRequest req;
        req.workflow = workflow;
        req.input = *input;
        auto id = engine.Start(std::move(req));
        if (!id.ok()) return id.status();
        return std::vector<std::string>{*id};
      },
      std::move(names));
}

bool LocalDatabaseHolds(const RunArgs& args) {
  const std::string path = args.db.empty() ? DefaultDbPath() : args.db;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return false;  // not created by asking
  auto session = OpenStore(args);
  return session.ok() && session->store->GetExecution(args.execution_id).ok();
}

int ResumeCommand(const RunArgs& args) {
  if (args.ephemeral) return Usage("resume needs a database (--db PATH)");
  auto session = OpenStore(args);
  if (!session.ok()) return Usage(session.status().message());
  if (!args.execution_id.empty()) {
    auto one = session->store->GetExecution(args.execution_id);
    if (!one.ok() && one.status().code() == errc::kNotFound) {
      std::fprintf(stderr, "baton resume: no execution '%s' in %s\n", args.execution_id.c_str(),
                   session->db_path.c_str());
      return 2;
    }
  }
  if (args.execution_id.empty()) {
    auto unfinished = session->store->ListUnfinishedExecutions();
    if (unfinished.ok() && unfinished->empty()) {
      if (!args.quiet)
        std::fprintf(stderr, "baton: nothing to resume in %s\n", session->db_path.c_str());
      return 0;
    }
  }
  Store* store = session->store.get();
  return Drive(args, *session, [&](Engine& engine) {
    return RecoverExecutions(store, &engine, args.execution_id);
  });
}

}  // namespace baton::cli
