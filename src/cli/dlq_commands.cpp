// `baton dlq ...`: the dead-letter queue of a server -- steps that failed for good,
// listed, grouped, replayed (one, or every match at a bounded rate) and discarded.
#include "cli/client_common.h"
#include "cli/commands.h"

#include <CLI/CLI.hpp>

namespace baton::cli {
namespace {

using client::UrlEncode;

// The filters GET /api/v1/dlq, /api/v1/dlq/stats and the bulk replay share.
struct Filter {
  std::string workflow, step, code, fingerprint, execution, status, since;

  void AddTo(CLI::App* cmd, bool with_status) {
    cmd->add_option("--workflow", workflow, "Only entries of this workflow");
    cmd->add_option("--step", step, "Only entries of this step id");
    cmd->add_option("--code", code, "Only entries whose last error has this code");
    cmd->add_option("--fingerprint", fingerprint, "Only entries with this error fingerprint");
    cmd->add_option("--execution", execution, "Only entries of this execution");
    cmd->add_option("--since", since,
                    "Only entries that last failed at or after this time (RFC 3339 or ms)");
    if (with_status) {
      cmd->add_option("--status", status, "open (default), replayed, discarded or any");
    }
  }
  std::vector<std::pair<const char*, const std::string*>> Fields() const {
    return {{"workflow", &workflow},   {"step", &step},
            {"code", &code},           {"fingerprint", &fingerprint},
            {"execution", &execution}, {"status", &status},
            {"since", &since}};
  }
  std::string Query() const {
    std::string q;
    for (const auto& [name, value] : Fields()) {
      if (!value->empty())
        q += (q.empty() ? "?" : "&") + std::string(name) + "=" + UrlEncode(*value);
    }
    return q;
  }
  Json Object() const {
    Json out = Json::object();
    for (const auto& [name, value] : Fields()) {
      if (!value->empty()) out[name] = *value;
    }
    return out;
  }
};

void PrintDeadLetters(const Json& r) {
  if (r["entries"].empty()) {
    std::printf("no dead letters\n");
    return;
  }
  std::printf("%-6s %-9s %-20s %-16s %-16s %-24s %s\n", "ID", "STATUS", "WORKFLOW", "STEP", "CODE",
              "LAST FAILED", "EXECUTION");
  for (const Json& e : r["entries"]) {
    std::printf("%-6s %-9s %-20s %-16s %-16s %-24s %s\n", Str(e, "id").c_str(),
                Str(e, "status").c_str(), Str(e, "workflow").c_str(), Str(e, "step_id").c_str(),
                Str(e, "code").c_str(), Str(e, "last_failed_at").c_str(),
                Str(e, "execution_id").c_str());
  }
  if (r["next_cursor"].is_string()) {
    std::printf("(more: --cursor %s)\n", r["next_cursor"].get<std::string>().c_str());
  }
}

void PrintEntry(const Json& e) {
  std::printf("dead letter %s (%s)\n", Str(e, "id").c_str(), Str(e, "status").c_str());
  std::printf("  execution   %s\n  workflow    %s v%s\n  step        %s\n",
              Str(e, "execution_id").c_str(), Str(e, "workflow").c_str(), Str(e, "version").c_str(),
              Str(e, "step_id").c_str());
  std::printf("  fingerprint %s\n  failed      %s .. %s\n", Str(e, "fingerprint").c_str(),
              Str(e, "first_failed_at").c_str(), Str(e, "last_failed_at").c_str());
  for (const Json& err : e["errors"]) {
    std::printf("  attempt %-3s %s: %s\n", Str(err, "attempt").c_str(), Str(err, "code").c_str(),
                Str(err, "message").c_str());
  }
  std::printf("  input       %s\n", e["input"].dump().c_str());
  if (e.contains("replay_of") && !e["replay_of"].is_null()) {
    std::printf("  replay of   dead letter %s\n", Str(e, "replay_of").c_str());
  }
  if (e["replay"].is_object()) {
    std::printf("  replayed    %s from attempt %s", Str(e, "resolved_at").c_str(),
                Str(e["replay"], "attempt").c_str());
    if (e["replay"].contains("entry_id") && !e["replay"]["entry_id"].is_null()) {
      std::printf("; it failed again: dead letter %s", Str(e["replay"], "entry_id").c_str());
    }
    std::printf("\n");
  }
}

void PrintStats(const Json& r) {
  const std::string status = Str(r, "status");
  std::printf("%s %sdead letter(s)\n", Str(r, "total").c_str(),
              status == "any" ? "" : (status + " ").c_str());
  for (const Json& g : r["by_fingerprint"]) {
    std::printf("%6s  %s / %s  %s\n", Str(g, "count").c_str(), Str(g, "workflow").c_str(),
                Str(g, "step_id").c_str(), Str(g, "fingerprint").c_str());
  }
}

void PrintJob(const Json& job) {
  std::printf("%s %s: %s matched, %s replayed, %s skipped, %s failed, %s to go (%s/s)\n",
              Str(job, "id").c_str(), Str(job, "state").c_str(), Str(job, "matched").c_str(),
              Str(job, "replayed").c_str(), Str(job, "skipped").c_str(), Str(job, "failed").c_str(),
              Str(job, "remaining").c_str(), Str(job, "per_second").c_str());
}

}  // namespace

void AddDeadLetterCommands(CLI::App& app, std::function<int()>* action) {
  auto* dlq = app.add_subcommand(
      "dlq",
      "The dead-letter queue: steps that failed for good (every retry spent), with their "
      "input and errors. List, group, replay or discard them");
  dlq->require_subcommand(1);
  {
    auto f = std::make_shared<Filter>();
    auto cursor = std::make_shared<std::string>();
    auto limit = std::make_shared<int>(0);
    auto c = std::make_shared<Common>();
    auto* cmd = dlq->add_subcommand("list",
                                    "List dead letters, oldest first (open ones unless "
                                    "--status says otherwise)");
    f->AddTo(cmd, true);
    cmd->add_option("--limit", *limit, "At most this many (default 50)");
    cmd->add_option("--cursor", *cursor, "Continue after a previous page");
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [f, cursor, limit](const client::ApiClient& api) {
          std::string q = f->Query();
          if (*limit > 0) q += (q.empty() ? "?" : "&") + ("limit=" + std::to_string(*limit));
          if (!cursor->empty()) q += (q.empty() ? "?" : "&") + ("cursor=" + UrlEncode(*cursor));
          return api.Call("GET", "/api/v1/dlq" + q);
        },
        PrintDeadLetters);
  }
  {
    auto id = std::make_shared<std::string>();
    auto c = std::make_shared<Common>();
    auto* cmd = dlq->add_subcommand(
        "show", "One dead letter: its input, every attempt's error, and what replayed it");
    cmd->add_option("id", *id, "Dead letter id")->required();
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [id](const client::ApiClient& api) {
          return api.Call("GET", "/api/v1/dlq/" + UrlEncode(*id));
        },
        PrintEntry);
  }
  {
    auto f = std::make_shared<Filter>();
    auto c = std::make_shared<Common>();
    auto* cmd = dlq->add_subcommand(
        "stats", "Count dead letters by workflow, step and error fingerprint, largest first");
    f->AddTo(cmd, true);
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [f](const client::ApiClient& api) {
          return api.Call("GET", "/api/v1/dlq/stats" + f->Query());
        },
        PrintStats);
  }
  {
    struct Args {
      std::string id;
      Filter filter;
      bool all = false;
      double per_second = 0;
      int limit = 0;
    };
    auto a = std::make_shared<Args>();
    auto c = std::make_shared<Common>();
    auto* cmd = dlq->add_subcommand(
        "replay",
        "Run an entry's execution again from its step (completed steps kept, a fresh retry "
        "budget). With --all and filters instead of an id: replay every open match at "
        "--per-second, so a recovering dependency is not stampeded");
    cmd->add_option("id", a->id, "Dead letter id");
    cmd->add_flag("--all", a->all, "Replay every open entry the filters match (a bulk job)");
    a->filter.AddTo(cmd, false);
    cmd->add_option("--per-second", a->per_second, "Bulk: replays per second (required)");
    cmd->add_option("--limit", a->limit, "Bulk: at most this many entries (default 1000)");
    AddCommon(cmd, c.get());
    cmd->callback([a, c, action] {
      *action = [a, c]() -> int {
        if (a->all == !a->id.empty()) {
          std::fprintf(stderr, "baton dlq replay: give a dead letter id, or --all with filters\n");
          return 2;
        }
        if (!a->all) {
          return Finish(*c, c->Client().Call("POST", "/api/v1/dlq/" + UrlEncode(a->id) + "/replay"),
                        [](const Json& r) {
                          const Json& e = r["entry"];
                          std::printf(
                              "dead letter %s replayed: execution %s runs again from "
                              "step %s (attempt %s)\n",
                              Str(e, "id").c_str(), Str(e, "execution_id").c_str(),
                              Str(e, "step_id").c_str(), Str(e["replay"], "attempt").c_str());
                        });
        }
        if (a->per_second <= 0) {
          std::fprintf(stderr, "baton dlq replay --all: --per-second is required (> 0)\n");
          return 2;
        }
        Json body = {{"filter", a->filter.Object()}, {"per_second", a->per_second}};
        if (a->limit > 0) body["limit"] = a->limit;
        return Finish(*c, c->Client().Call("POST", "/api/v1/dlq/replay", body),
                      [](const Json& r) { PrintJob(r["replay"]); });
      };
    });
  }
  {
    auto c = std::make_shared<Common>();
    auto* cmd = dlq->add_subcommand("replays", "Bulk replay jobs and their progress");
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [](const client::ApiClient& api) { return api.Call("GET", "/api/v1/dlq/replays"); },
        [](const Json& r) {
          for (const Json& job : r["replays"]) PrintJob(job);
        });
  }
  AddDeleteCommand(dlq, action, "Discard an open dead letter (kept, marked discarded)", "id",
                   "/api/v1/dlq/", "discard", "discarded");
}

}  // namespace baton::cli
