// The `baton` subcommands. Each returns the process exit code: 0 success, 1 the
// execution failed / timed out / was cancelled, 2 usage or definition error.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}
namespace baton::client {
struct Endpoint;
}

namespace baton::cli {

struct RunArgs {
  std::string file;
  std::vector<std::string> inputs;  // k=v
  std::string input_file;
  std::string db;
  bool ephemeral = false;
  bool json = false;
  bool quiet = false;
  int parallel = 0;
  std::string execution_id;  // resume: empty = every unfinished execution
  bool sync_normal = false;
  // Where `type: workflow` steps find their child workflows, by name; empty: the run
  // file's directory (resume: the current directory).
  std::string workflows_dir;
  // --pool NAME=N: pools (a step's `pool`) created or resized for this run.
  std::vector<std::string> pools;
};

int RunCommand(const RunArgs& args);
int ResumeCommand(const RunArgs& args);
// Whether the database of `args` (--db, else the default) exists and holds
// args.execution_id; a missing database is not created.
bool LocalDatabaseHolds(const RunArgs& args);
int ValidateCommand(const std::vector<std::string>& files, bool json);
// parallel: the local worker's slots to estimate with (0: hardware threads, as for run).
int AnalyzeCommand(const std::string& file, bool json, int parallel);

// Default database: $BATON_DB, else $XDG_STATE_HOME/baton/baton.db, else
// ~/.local/state/baton/baton.db.
std::string DefaultDbPath();

// Commands that register themselves: each sets *action when chosen on the command line.
void AddServerCommand(CLI::App& app, std::function<int()>* action);
void AddClientCommands(CLI::App& app, std::function<int()>* action);
void AddAdminCommands(CLI::App& app, std::function<int()>* action);
// hook, trigger, delivery (trigger_commands.cpp)
void AddAutomationCommands(CLI::App& app, std::function<int()>* action);
// worker, worker drain, workers (worker_command.cpp)
void AddWorkerCommands(CLI::App& app, std::function<int()>* action);
// dlq list|show|stats|replay|discard (dlq_commands.cpp)
void AddDeadLetterCommands(CLI::App& app, std::function<int()>* action);
// `baton breaker list|reset` (breaker_commands.cpp).
void AddBreakerCommands(CLI::App& app, std::function<int()>* action);
void AddPoolCommands(CLI::App& app, std::function<int()>* action);
// `baton cache list|clear` (cache_commands.cpp).
void AddCacheCommands(CLI::App& app, std::function<int()>* action);
// `baton completion bash|zsh` (completion_command.cpp): walks `app`, which must outlive
// the action, when run.
void AddCompletionCommand(CLI::App& app, std::function<int()>* action);
int ResumeOnServer(const std::string& id, const std::string& server, const std::string& token,
                   bool json);

// Prints an execution's events as they commit (watch: the live progress view instead)
// until it finishes; exit code as for run. `types` (not with watch): only the event types
// and families listed, comma-separated, as the feed's types= takes them ("" = all).
int FollowExecution(const std::string& id, const client::Endpoint& endpoint, bool json, bool watch,
                    const std::string& types = "");

int Main(int argc, char** argv);

}  // namespace baton::cli
