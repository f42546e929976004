// `baton worker`: run command steps for a server (worker/agent.h) until SIGTERM/SIGINT;
// `baton worker drain ID` and `baton workers`: the server's view of its workers.
#include "cli/client_common.h"
#include "cli/commands.h"
#include "cli/signals.h"
#include "server/views.h"
#include "worker/agent.h"
#include "worker/websocket_connection.h"

#include <unistd.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <iostream>

namespace baton::cli {
namespace {

struct WorkerArgs {
  std::string server;
  std::string token;
  std::vector<std::string> handlers;  // COMMAND=EXECUTABLE
  std::vector<std::string> builtins;  // shell, http
  int capacity = 1;
  int batch_window_ms = 2;
  std::vector<std::string> tags;
  std::string node;
  std::string id;
  bool persistent = false;
  bool quiet = false;
};

constexpr const char* kWorkerFooter =
    "Handlers: --handler COMMAND=EXECUTABLE runs EXECUTABLE for each command step named\n"
    "COMMAND that the server assigns to this worker, in its own process group:\n"
    "  stdin        the whole `command` message as JSON, then EOF\n"
    "  environment  BATON_EXECUTION_ID, BATON_STEP_ID, BATON_ATTEMPT, BATON_ASSIGNMENT_ID,\n"
    "               BATON_COMMAND, BATON_RESOURCE, BATON_CHECKPOINT (JSON or empty)\n"
    "  stdout       a line {\"progress\": 0-100, \"checkpoint\": {...}, \"data\": {...}} is\n"
    "               progress; the last JSON object line without \"progress\" is the\n"
    "               output (none: the trimmed stdout text)\n"
    "  exit code    0 = success; anything else fails the attempt (EXIT_NONZERO, with the\n"
    "               end of stderr as the message)\n"
    "A cancelled or timed-out command gets SIGTERM, then SIGKILL after 5 s.\n"
    "\n"
    "--persistent runs each handler as ONE long-lived process that takes every command\n"
    "for it, so a Python or Node handler starts once instead of once per command:\n"
    "  stdin        one `command` message per line; {\"cancel\": ID, \"reason\": ...} when a\n"
    "               command is cancelled or times out (it has then already ended)\n"
    "  stdout       one JSON object per line, each naming its \"assignment_id\":\n"
    "               {\"assignment_id\": ID, \"progress\": 0-100, \"checkpoint\"?: ...}\n"
    "               {\"assignment_id\": ID, \"output\": ...}             success\n"
    "               {\"assignment_id\": ID, \"error\": {\"code\", \"message\",\n"
    "                \"retryable\"?}}                                   failure\n"
    "  environment  the worker's, plus BATON_HANDLER (the command) and BATON_PERSISTENT=1\n"
    "It runs up to --capacity commands at once. If it exits, what it held fails\n"
    "(HANDLER_EXITED, retryable, with the end of its stderr) and the next command starts\n"
    "it again.\n"
    "--builtin shell / --builtin http run the step's `data` as a shell or http step: they\n"
    "run whatever the server sends, so enable them only for servers you trust.\n"
    "\n"
    "SIGTERM or Ctrl-C drains: no new commands, running ones finish and are reported, then\n"
    "the worker deregisters and exits 0. A second signal cancels the running commands and\n"
    "exits 1. A token the server refuses (401/403) exits 1 at once; any other connection\n"
    "problem is retried with backoff.\n"
    "\n"
    "Example:\n"
    "  baton worker --server http://baton:8080 --token $TOKEN \\\n"
    "      --handler model.download=./download.sh --capacity 4 --tags gpu,a100\n";

int UsageError(const std::string& message) {
  std::fprintf(stderr, "baton worker: %s\n", message.c_str());
  return 2;
}

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

std::string FromEnv(const std::string& flag, const char* env) {
  if (!flag.empty()) return flag;
  const char* v = std::getenv(env);
  return v ? v : "";
}

void LogLine(const std::string& line) {
  std::fprintf(stderr, "%s baton worker: %s\n", IsoTime(RealClock().Now()).c_str(), line.c_str());
}

std::string Joined(const Json& list) {
  std::string out;
  if (!list.is_array()) return "-";
  for (const Json& v : list) {
    out += (out.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out.empty() ? "-" : out;
}

// The agent's options from the command line; a usage error message otherwise.
Result<worker::AgentOptions> BuildOptions(const WorkerArgs& a) {
  auto usage = [](const std::string& m) { return Status(errc::kInvalidArgument, m); };
  worker::AgentOptions o;
  o.handlers.builtin_shell = false;
  o.handlers.builtin_http = false;
  for (const std::string& b : a.builtins) {
    (b == "shell" ? o.handlers.builtin_shell : o.handlers.builtin_http) = true;
  }
  for (const std::string& h : a.handlers) {
    size_t eq = h.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == h.size()) {
      return usage("--handler takes COMMAND=EXECUTABLE, got '" + h + "'");
    }
    std::string command = h.substr(0, eq), executable = h.substr(eq + 1);
    if (o.handlers.handlers.count(command)) {
      return usage("--handler: two handlers for '" + command + "'");
    }
    if (executable.find('/') != std::string::npos && access(executable.c_str(), X_OK) != 0) {
      return usage("--handler " + h + ": '" + executable + "' is not an executable file");
    }
    o.handlers.handlers[command] = {executable};
  }
  if (a.persistent && a.handlers.empty()) {
    return usage("--persistent applies to --handler processes; none was given");
  }
  o.handlers.persistent = a.persistent;
  o.log_commands = !a.quiet;
  if (a.handlers.empty() && a.builtins.empty()) {
    return usage(
        "nothing to run: give at least one --handler COMMAND=EXECUTABLE (or --builtin "
        "shell|http)");
  }
  o.host = HostName();
  o.worker_id = a.id.empty() ? o.host : a.id;
  if (!protocol::IsValidWorkerId(o.worker_id)) {
    return usage("worker id '" + o.worker_id +
                 "' must be 1 to 100 characters of [A-Za-z0-9._-] (set one with --id)");
  }
  o.node_id = a.node;
  o.capacity = a.capacity;
  o.batch_window = Duration(a.batch_window_ms);
  o.tags = a.tags;
  o.log = LogLine;
  return o;
}

int WorkerMain(const WorkerArgs& a) {
  SignalCatcher::BlockInThisAndFutureThreads();
  // --server URL1,URL2,...: instances of one deployment, tried in turn.
  const std::string servers = FromEnv(a.server, "BATON_SERVER");
  const std::string token = FromEnv(a.token, "BATON_TOKEN");
  std::vector<client::Endpoint> endpoints;
  for (size_t start = 0; start <= servers.size();) {
    size_t comma = servers.find(',', start);
    if (comma == std::string::npos) comma = servers.size();
    std::string url = servers.substr(start, comma - start);
    while (!url.empty() && url.back() == '/') url.pop_back();
    if (!url.empty()) endpoints.push_back({url, token});
    start = comma + 1;
  }
  if (endpoints.empty()) return UsageError("--server URL (or $BATON_SERVER) is required");
  for (const client::Endpoint& e : endpoints) {
    if (Result<client::ServerAddress> url = client::ParseServerUrl(e.server); !url.ok()) {
      return UsageError("--server: " + url.status().message());
    }
  }
  if (token.empty()) {
    return UsageError(
        "--token (or $BATON_TOKEN) is required: a token with the 'worker' scope "
        "(baton token create --name NAME --scopes worker)");
  }
  Result<worker::AgentOptions> options = BuildOptions(a);
  if (!options.ok()) return UsageError(options.status().message());

  worker::Agent agent(*options);
  std::atomic<int> signals_seen{0};
  SignalCatcher signals(
      [&](int sig) {
        if (++signals_seen == 1) {
          LogLine(std::string(sig == SIGINT ? "interrupted" : "terminated") +
                  ": draining (signal again to cancel the running commands)");
          agent.Drain();
        } else {
          LogLine("signalled again: cancelling the running commands");
          agent.Stop();
        }
      },
      /*handled=*/2);
  worker::WebSocketOptions ws;
  ws.log = LogLine;
  std::string names;
  for (const client::Endpoint& e : endpoints) names += (names.empty() ? "" : ", ") + e.server;
  LogLine("connecting to " + names + " as " + options->worker_id +
          " (commands: " + Joined(agent.Commands()) + ")");
  Status run = agent.Run(worker::FailoverConnector(std::move(endpoints), ws));
  if (!run.ok()) {
    std::string hint = worker::IsFatalConnectError(run)
                           ? " (check --token: it needs the 'worker' or 'admin' scope)"
                           : "";
    std::fprintf(stderr, "baton worker: %s: %s%s\n", run.code().c_str(), run.message().c_str(),
                 hint.c_str());
    return run.code() == errc::kInvalidArgument ? 2 : 1;
  }
  return signals_seen >= 2 ? 1 : 0;
}

// Columns as wide as their widest cell.
void PrintTable(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    std::printf("%s\n", line.c_str());
  }
}

void PrintWorkers(const Json& reply) {
  std::vector<std::vector<std::string>> rows = {
      {"ID", "STATUS", "LOAD", "NODE", "COMMANDS", "LAST HEARTBEAT"}};
  for (const Json& w : reply.value("workers", Json::array())) {
    rows.push_back({Str(w, "workerId"), Str(w, "status"),
                    Str(w, "currentLoad") + "/" + Str(w, "capacity"), Str(w, "nodeId"),
                    Joined(w.value("commands", Json())), Str(w, "lastHeartbeat")});
  }
  if (rows.size() == 1) {
    std::printf("no workers\n");
    return;
  }
  PrintTable(rows);
}

}  // namespace

void AddWorkerCommands(CLI::App& app, std::function<int()>* action) {
  auto a = std::make_shared<WorkerArgs>();
  auto* cmd = app.add_subcommand("worker", "Run command steps for a server (a remote worker)");
  cmd->add_option("--server", a->server,
                  "Server URL, http://HOST:PORT, or several separated by commas (instances of one "
                  "deployment: the worker moves to the next when one goes away) "
                  "(default: $BATON_SERVER)");
  cmd->add_option("--token", a->token,
                  "Bearer token with the 'worker' scope (default: $BATON_TOKEN)");
  cmd->add_option("--handler", a->handlers,
                  "COMMAND=EXECUTABLE: run EXECUTABLE for commands named COMMAND (repeatable)");
  cmd->add_option("--builtin", a->builtins, "Also run 'shell' or 'http' commands (repeatable)")
      ->check(CLI::IsMember({"shell", "http"}));
  cmd->add_option("--capacity", a->capacity, "Commands run at once")
      ->check(CLI::Range(1, protocol::kMaxCapacity))
      ->capture_default_str();
  cmd->add_option("--batch-window", a->batch_window_ms,
                  "MS: while two or more commands run, wait up to MS for more answers so that "
                  "they leave in one frame, a result standing for its ack; 0 sends each at "
                  "once. An idle worker never waits")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_option("--tags", a->tags, "Tags steps can target, comma-separated (gpu,a100)")
      ->delimiter(',');
  cmd->add_option("--node", a->node, "The node this worker runs on (default: the worker id)");
  cmd->add_option("--id", a->id, "Worker id, [A-Za-z0-9._-] (default: the host name)");
  cmd->add_flag("-q,--quiet", a->quiet,
                "No log line for a command that starts or succeeds (failures, rejections, "
                "cancels and connection changes are still logged)");
  cmd->add_flag("--persistent", a->persistent,
                "Run each --handler as one long-lived process fed commands as JSON lines "
                "(see below) instead of a process per command");
  cmd->footer(kWorkerFooter);

  struct DrainArgs {
    Common c;
    std::string id;
  };
  auto d = std::make_shared<DrainArgs>();
  auto* drain = cmd->add_subcommand(
      "drain", "Ask the server to drain a worker: no new work; running work finishes");
  drain->add_option("worker_id", d->id, "The worker's id")->required();
  AddCommon(drain, &d->c);
  drain->callback([d, action] {
    *action = [d] {
      return Finish(d->c,
                    d->c.Client().Call("DELETE", "/api/v1/workers/" + client::UrlEncode(d->id)),
                    [](const Json& w) {
                      std::printf("%s %s (%s/%s running)\n", Str(w, "workerId").c_str(),
                                  Str(w, "status").c_str(), Str(w, "currentLoad").c_str(),
                                  Str(w, "capacity").c_str());
                    });
    };
  });
  cmd->callback([a, drain, action] {
    if (drain->parsed()) return;
    *action = [a] { return WorkerMain(*a); };
  });

  auto c = std::make_shared<Common>();
  auto* list = app.add_subcommand("workers", "List the server's workers, their status and load");
  AddCommon(list, c.get());
  list->callback([c, action] {
    *action = [c] { return Finish(*c, c->Client().Call("GET", "/api/v1/workers"), PrintWorkers); };
  });
}

}  // namespace baton::cli
