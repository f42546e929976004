// Argument parsing for `baton`: one subcommand per verb, each with its own --help.
#include "cli/commands.h"

#include "server/server.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace baton::cli {

int Main(int argc, char** argv) {
  CLI::App app{
      "baton: a durable workflow engine. Runs DAGs of steps with retries, timeouts,\n"
      "live progress and crash recovery, from one binary and one database file."};
  app.set_version_flag("--version", "baton 0.1.0");
  app.require_subcommand(1);
  app.footer(
      "Run 'baton COMMAND --help' for the options of a command.\n"
      "Exit codes: 0 completed, 1 failed/timed out/cancelled, 2 usage or definition error.");

  RunArgs run;
  auto* run_cmd = app.add_subcommand("run", "Run a workflow file in-process until it finishes");
  run_cmd->add_option("file", run.file, "Workflow file (YAML or JSON)")->required();
  run_cmd->add_option("-i,--input", run.inputs,
                      "Input as key=value (repeatable); converted to the declared type");
  run_cmd->add_option("--input-file", run.input_file, "JSON file with an object of inputs");
  auto* db_opt = run_cmd->add_option(
      "--db", run.db, "SQLite database (default: $BATON_DB or ~/.local/state/baton/baton.db)");
  run_cmd->add_flag("--ephemeral", run.ephemeral, "Keep state in memory only (no crash recovery)")
      ->excludes(db_opt);
  run_cmd->add_flag("--json", run.json, "Print the final execution as JSON on stdout");
  run_cmd->add_flag("-q,--quiet", run.quiet, "No progress output");
  run_cmd->add_option("-p,--parallel", run.parallel,
                      "Capacity of the local worker: shell and http steps running at once "
                      "(default: number of cores)");
  run_cmd->add_flag("--sync-normal", run.sync_normal,
                    "SQLite synchronous=NORMAL: faster, may lose the last commits on power loss");
  run_cmd->add_option("--pool", run.pools,
                      "NAME=SLOTS: a pool for steps with `pool: NAME` (repeatable; kept in the "
                      "database, as a server's POST /api/v1/pools)");
  run_cmd->add_option("--workflows", run.workflows_dir,
                      "Directory whose workflow files `type: workflow` steps start by name "
                      "(default: the directory of FILE)");
  run_cmd->footer(
      "Example:\n  baton run examples/deploy-model.yaml --input model_id=llama-3-8b\n"
      "Ctrl-C cancels the execution cleanly (processes get SIGTERM, then SIGKILL).");

  RunArgs resume;
  auto* resume_cmd = app.add_subcommand("resume", "Continue unfinished executions after a crash");
  resume_cmd->add_option("execution_id", resume.execution_id,
                         "Only this execution (default: all unfinished)");
  resume_cmd->add_option("--db", resume.db, "SQLite database (default: as for run)");
  resume_cmd->add_flag("--json", resume.json, "Print the final executions as JSON on stdout");
  resume_cmd->add_flag("-q,--quiet", resume.quiet, "No progress output");
  resume_cmd->add_option("-p,--parallel", resume.parallel,
                         "Capacity of the local worker: shell and http steps running at once");
  resume_cmd->add_option("--workflows", resume.workflows_dir,
                         "Directory of the workflow files child workflows start from "
                         "(default: the current directory)");
  std::string resume_server, resume_token;
  resume_cmd->add_option("--server", resume_server,
                         "Resume a paused execution on this server instead (also $BATON_SERVER)");
  resume_cmd->add_option("--token", resume_token, "Bearer token for --server");
  resume_cmd->footer(
      "Locally (--db, the default): completed steps are never run again; a step that was\n"
      "running when the process died is a failed attempt ENGINE_RESTART and runs again.\n"
      "With --server or $BATON_SERVER (and no --db): resumes a paused execution there;\n"
      "so does `baton resume ID` with neither when the local database does not hold ID and\n"
      "the credentials file (as for the client commands) names a server.");

  std::vector<std::string> validate_files;
  bool validate_json = false;
  auto* validate_cmd = app.add_subcommand("validate", "Check workflow files without running them");
  validate_cmd->add_option("files", validate_files, "Workflow files")->required();
  validate_cmd->add_flag("--json", validate_json, "Print the findings as JSON");

  std::string analyze_file;
  bool analyze_json = false;
  auto* analyze_cmd = app.add_subcommand(
      "analyze", "Show a workflow's layers, critical path, parallelism and estimated speedup");
  analyze_cmd->add_option("file", analyze_file, "Workflow file")->required();
  analyze_cmd->add_flag("--json", analyze_json, "Print the analysis as JSON");
  int analyze_parallel = 0;
  analyze_cmd->add_option("-p,--parallel", analyze_parallel,
                          "Estimate for this many shell and http steps at once, as `baton run "
                          "--parallel` (default: number of cores, as for run)");
  analyze_cmd->footer(
      "Estimates: a wait step's duration, else a tenth of the step's timeout, else 1s.\n"
      "The speedup is the sequential estimate (every step one after another) over the\n"
      "estimate with --parallel slots: shell and http steps take a slot, the others (noop,\n"
      "wait, command steps on remote workers, child workflows) do not; ready steps with the\n"
      "longest path ahead start first. Unbounded, it is the critical path's.");

  std::function<int()> action;
  AddServerCommand(app, &action);
  AddClientCommands(app, &action);
  AddAdminCommands(app, &action);
  AddAutomationCommands(app, &action);
  AddWorkerCommands(app, &action);
  AddDeadLetterCommands(app, &action);
  AddBreakerCommands(app, &action);
  AddPoolCommands(app, &action);
  AddCacheCommands(app, &action);
  AddCompletionCommand(app, &action);  // last: it lists every command above

  // An unknown command, at the top or under a command that needs one (`baton token foo`):
  // name it and the commands there are (CLI11 alone would only say that a subcommand is
  // required).
  CLI::App* level = &app;
  std::string path = "baton";
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    const std::vector<CLI::App*> subs = level->get_subcommands([](CLI::App*) { return true; });
    if (subs.empty()) break;
    const std::string name = argv[i];
    CLI::App* found = nullptr;
    std::string names;
    for (CLI::App* sub : subs) {
      if (!found && sub->check_name(name)) found = sub;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (found) {
      level = found;
      path += " " + found->get_name();
      continue;
    }
    if (level != &app && level->get_require_subcommand_min() == 0) break;  // an argument
    std::fprintf(stderr,
                 "%s: unknown command '%s'\nThe commands are: %s.\nRun '%s --help' for what "
                 "each does.\n",
                 path.c_str(), name.c_str(), names.c_str(), path.c_str());
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  if (*run_cmd) return RunCommand(run);
  if (*resume_cmd) {
    const char* env_server = std::getenv("BATON_SERVER");
    const bool server_named = !resume_server.empty() || (env_server && *env_server);
    // Without --db, an id the local database does not hold is resumed on the server of
    // the credentials file, as every client command finds its server.
    std::error_code ec;
    if (resume.db.empty() && !server_named && !resume.execution_id.empty() &&
        std::filesystem::exists(server::DefaultCredentialsPath(), ec) &&
        !LocalDatabaseHolds(resume)) {
      return ResumeOnServer(resume.execution_id, "", "", resume.json);
    }
    if (resume.db.empty() && server_named) {
      if (resume.execution_id.empty()) {
        std::fprintf(stderr, "baton resume: give the execution id to resume on the server\n");
        return 2;
      }
      return ResumeOnServer(resume.execution_id, resume_server, resume_token, resume.json);
    }
    return ResumeCommand(resume);
  }
  if (action) return action();
  if (*validate_cmd) return ValidateCommand(validate_files, validate_json);
  if (*analyze_cmd) return AnalyzeCommand(analyze_file, analyze_json, analyze_parallel);
  return 2;
}

}  // namespace baton::cli
