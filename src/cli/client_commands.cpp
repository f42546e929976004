// The client commands: talk to `baton server` over its REST API.
#include "cli/client_common.h"
#include "cli/commands.h"
#include "client/api_client.h"
#include "server/server.h"

#include <baton/workflow.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

namespace baton::cli {
namespace {

using client::ApiClient;
using client::UrlEncode;

void PrintExecutionLine(const Json& e) {
  std::printf("%-16s %-10s %-24s %s\n", Str(e, "id").c_str(), Str(e, "status").c_str(),
              (Str(e, "workflow") + "@" + Str(e, "version")).c_str(), Str(e, "created_at").c_str());
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(errc::kIo, "cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Step id -> what it waits for (GET .../why), for an execution still going; empty
// when it finished or the server cannot say.
struct WaitReason {
  std::string kind;  // "worker": dispatched, but no worker has taken it
  std::string reason;
};

std::map<std::string, WaitReason> WaitReasons(const ApiClient& api, const Json& execution) {
  std::map<std::string, WaitReason> out;
  const std::string status = Str(execution, "status");
  if (status != "running" && status != "paused" && status != "pending") return out;
  auto why = api.Call("GET", "/api/v1/executions/" + UrlEncode(Str(execution, "id")) + "/why");
  if (!why.ok()) return out;
  for (const Json& w : (*why)["steps"]) out[Str(w, "step_id")] = {Str(w, "kind"), Str(w, "reason")};
  return out;
}

// An execution, its steps, and under each step the child workflows it started (their
// steps and children in turn), indented. `budget` bounds the requests for children.
void PrintExecutionTree(const ApiClient& api, const Json& e, const std::string& indent,
                        int* budget) {
  std::printf("%s%s  %s  %s@%s  progress %s%%\n", indent.c_str(), Str(e, "id").c_str(),
              Str(e, "status").c_str(), Str(e, "workflow").c_str(), Str(e, "version").c_str(),
              Str(e, "progress").c_str());
  std::map<std::string, WaitReason> why = WaitReasons(api, e);
  const Json children = e.contains("children") ? e["children"] : Json::array();
  // The step's `name`, when it has one, after its id; the column as wide as the widest
  // label (capped), so the statuses line up.
  auto label_of = [](const Json& s) {
    std::string label = Str(s, "id");
    if (s.contains("name") && s["name"].is_string()) label += " (" + Str(s, "name") + ")";
    return label;
  };
  int width = 24;
  for (const Json& s : e["steps"]) {
    width = std::max(width, std::min(static_cast<int>(label_of(s).size()), 64));
  }
  for (const Json& s : e["steps"]) {
    auto reason = why.find(Str(s, "id"));
    std::string error;
    if (s.contains("error") && s["error"].is_object()) {
      error = "  " + Str(s["error"], "code") + ": " + Str(s["error"], "message");
    }
    // A dispatched step no worker has taken is queued, whatever its stored status says.
    std::string status = Str(s, "status");
    if (status == "dispatched" && reason != why.end() && reason->second.kind == "worker") {
      status = "queued";
    }
    std::printf("%s  %-*s %-13s attempts %s%s%s\n", indent.c_str(), width, label_of(s).c_str(),
                status.c_str(), Str(s, "attempts").c_str(), error.c_str(),
                reason == why.end() ? "" : ("  " + reason->second.reason).c_str());
    for (const Json& c : children) {
      if (Str(c, "parent_step") != Str(s, "id")) continue;
      auto child = --*budget >= 0
                       ? api.Call("GET", "/api/v1/executions/" + UrlEncode(Str(c, "id")))
                       : Result<Json>(Status(errc::kConflict, "too many children to show"));
      if (!child.ok()) {
        std::printf("%s    %s  %s  %s (%s)\n", indent.c_str(), Str(c, "id").c_str(),
                    Str(c, "status").c_str(), Str(c, "workflow").c_str(),
                    child.status().message().c_str());
        continue;
      }
      PrintExecutionTree(api, *child, indent + "    ", budget);
    }
  }
}

// `baton submit --wait`: POST ?wait=MS, then the execution's end (or state) and an exit
// code that says which.
int SubmitAndWait(const Common& c, const ApiClient& api, const Json& body, int64_t wait_ms) {
  const Result<Json> reply =
      api.Call("POST", "/api/v1/executions?wait=" + std::to_string(wait_ms), body);
  const int printed = Finish(c, reply, [](const Json& e) {
    const auto status = ParseExecutionStatus(Str(e, "status"));
    std::printf("%s %s%s\n", Str(e, "id").c_str(), Str(e, "status").c_str(),
                status && IsTerminal(*status) ? "" : " (the wait passed first)");
    const auto dump = [](const Json& j) {
      return j.dump(-1, ' ', false, Json::error_handler_t::replace);
    };
    if (!e["output"].is_null()) std::printf("output: %s\n", dump(e["output"]).c_str());
    if (!e["error"].is_null()) std::printf("error: %s\n", dump(e["error"]).c_str());
  });
  if (printed != 0) return printed;
  const auto status = ParseExecutionStatus(Str(*reply, "status"));
  if (!status || !IsTerminal(*status)) return 3;
  return *status == ExecutionStatus::kCompleted ? 0 : 1;
}

}  // namespace

void AddClientCommands(CLI::App& app, std::function<int()>* action) {
  // submit
  {
    struct Args {
      Common c;
      std::string workflow, file, priority, key, input_file, batch, wait;
      int version = 0;
      std::vector<std::string> inputs;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = app.add_subcommand("submit", "Start an execution on the server");
    cmd->add_option("workflow", a->workflow, "Workflow name (or use --file)");
    cmd->add_option("-f,--file", a->file, "Upload this workflow file first, then start it");
    cmd->add_option("--version", a->version, "Workflow version (default: latest)");
    cmd->add_option("-i,--input", a->inputs, "Input as key=value (repeatable)");
    cmd->add_option("--input-file", a->input_file, "JSON file with an object of inputs");
    cmd->add_option("--priority", a->priority, "low, normal, high or critical");
    cmd->add_option("--idempotency-key", a->key, "A repeated key returns the first execution");
    cmd->add_option("--batch", a->batch,
                    "Submit every line of this file: one JSON object per line, as the body of "
                    "POST /api/v1/executions ({\"workflow\": ..., \"input\": {...}, "
                    "\"idempotency_key\": ...}), 1,000 per request; all lines are checked first")
        ->excludes("workflow");
    cmd->add_option("--wait", a->wait,
                    "Wait up to this long (e.g. 30s, at most 60s) for the execution to end, then "
                    "print its status and output; exit 0 when it completed, 1 when it failed, "
                    "timed out or was cancelled, 3 when it was still running");
    AddCommon(cmd, &a->c);
    cmd->callback([a, action] {
      *action = [a]() -> int {
        if (!a->batch.empty()) {
          if (!a->file.empty() || !a->inputs.empty() || !a->input_file.empty() ||
              !a->priority.empty() || !a->key.empty() || a->version > 0 || !a->wait.empty()) {
            std::fprintf(stderr,
                         "baton submit: --batch takes every field from the file's lines; "
                         "--file, --input, --input-file, --priority, --idempotency-key, "
                         "--version and --wait do not apply\n");
            return 2;
          }
          return SubmitBatchFile(a->c, a->batch);
        }
        int64_t wait_ms = 0;
        if (!a->wait.empty()) {
          auto wait = ParseDuration(Json(a->wait));
          if (!wait.ok() || wait->count() < 1 || wait->count() > 60'000) {
            std::fprintf(stderr,
                         "baton submit: --wait takes a duration from 1ms to 60s (250ms, 30s), "
                         "got '%s'\n",
                         a->wait.c_str());
            return 2;
          }
          wait_ms = wait->count();
        }
        // The answer may take the whole wait: the client's own timeout is longer.
        ApiClient api(a->c.Client().endpoint(), 30 + static_cast<int>(wait_ms / 1000));
        std::string name = a->workflow;
        if (!a->file.empty()) {
          auto text = ReadFile(a->file);
          if (!text.ok()) return Finish(a->c, text.status(), {});
          auto created = api.CallWithText("POST", "/api/v1/workflows", *text, "application/yaml");
          if (!created.ok()) return Finish(a->c, created.status(), {});
          name = created->value("name", "");
        }
        if (name.empty()) {
          std::fprintf(stderr, "baton submit: give a workflow name or --file\n");
          return 2;
        }
        Json body = {{"workflow", name}};
        if (a->version > 0) body["version"] = a->version;
        Json input = Json::object();
        if (!a->input_file.empty()) {
          auto text = ReadFile(a->input_file);
          if (!text.ok()) return Finish(a->c, text.status(), {});
          input = Json::parse(*text, nullptr, false);
          if (!input.is_object()) {
            std::fprintf(stderr, "baton: %s must hold a JSON object\n", a->input_file.c_str());
            return 2;
          }
        }
        body["input"] = input;
        // The server converts key=value text to the declared types, as `baton run` does.
        if (!a->inputs.empty()) body["args"] = a->inputs;
        if (!a->priority.empty()) body["priority"] = a->priority;
        if (!a->key.empty()) body["idempotency_key"] = a->key;
        if (wait_ms > 0) return SubmitAndWait(a->c, api, body, wait_ms);
        return Finish(a->c, api.Call("POST", "/api/v1/executions", body), [](const Json& e) {
          std::printf("%s %s\n", Str(e, "id").c_str(),
                      e.value("created", true) ? "submitted" : "(existing, same idempotency key)");
        });
      };
    });
  }
  // status
  {
    struct Args {
      Common c;
      std::string id;
      bool watch = false;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = app.add_subcommand("status", "Show an execution on the server");
    cmd->add_option("execution_id", a->id, "Execution id")->required();
    cmd->add_flag("-w,--watch", a->watch, "Show the live progress view until it finishes");
    AddCommon(cmd, &a->c);
    cmd->callback([a, action] {
      *action = [a] {
        if (a->watch) return FollowExecution(a->id, a->c.Client().endpoint(), false, true);
        ApiClient api = a->c.Client();
        return Finish(
            a->c, api.Call("GET", "/api/v1/executions/" + UrlEncode(a->id)), [&api](const Json& e) {
              int budget = 200;  // child executions fetched at most
              PrintExecutionTree(api, e, "", &budget);
              if (e.contains("waiting")) {
                std::printf("waiting: %s\n", Str(e, "waiting").c_str());
              }
              if (!e["output"].is_null()) {
                std::printf(
                    "output: %s\n",
                    e["output"].dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
              }
              if (!e["error"].is_null()) {
                std::printf(
                    "error: %s\n",
                    e["error"].dump(-1, ' ', false, Json::error_handler_t::replace).c_str());
              }
            });
      };
    });
  }
  // list
  {
    struct Args {
      Common c;
      std::string status, workflow, cursor;
      int limit = 50;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = app.add_subcommand("list", "List executions on the server, newest first");
    cmd->add_option("--status", a->status, "Only this status");
    cmd->add_option("--workflow", a->workflow, "Only this workflow");
    cmd->add_option("--limit", a->limit, "At most this many")->capture_default_str();
    cmd->add_option("--cursor", a->cursor, "Continue after a previous page (its next_cursor)");
    AddCommon(cmd, &a->c);
    cmd->callback([a, action] {
      *action = [a] {
        std::string q = "?limit=" + std::to_string(a->limit);
        if (!a->status.empty()) q += "&status=" + UrlEncode(a->status);
        if (!a->workflow.empty()) q += "&workflow=" + UrlEncode(a->workflow);
        if (!a->cursor.empty()) q += "&cursor=" + UrlEncode(a->cursor);
        return Finish(a->c, a->c.Client().Call("GET", "/api/v1/executions" + q), [](const Json& r) {
          for (const Json& e : r["executions"]) PrintExecutionLine(e);
          if (!r["next_cursor"].is_null()) {
            std::printf("more: --cursor %s\n", r["next_cursor"].get<std::string>().c_str());
          }
        });
      };
    });
  }
  // events
  {
    struct Args {
      Common c;
      std::string id;
      int64_t after = 0;
      bool follow = false;
      std::string types;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = app.add_subcommand("events", "Print an execution's events");
    cmd->add_option("execution_id", a->id, "Execution id")->required();
    cmd->add_option("--after", a->after, "Only events after this sequence number");
    cmd->add_option("--types", a->types,
                    "Only these event types and families, comma-separated, e.g. "
                    "step.failed,step.retrying or execution.*");
    cmd->add_flag("-f,--follow", a->follow,
                  "Keep printing events as they happen until the execution finishes");
    AddCommon(cmd, &a->c);
    cmd->callback([a, action] {
      *action = [a] {
        if (a->follow) {
          return FollowExecution(a->id, a->c.Client().endpoint(), a->c.json, false, a->types);
        }
        ApiClient api = a->c.Client();
        int64_t after = a->after;
        Json all = Json::array();
        for (;;) {  // every page
          auto page =
              api.Call("GET", "/api/v1/executions/" + UrlEncode(a->id) +
                                  "/events?limit=1000&after=" + std::to_string(after) +
                                  (a->types.empty() ? "" : "&types=" + UrlEncode(a->types)));
          if (!page.ok()) return Finish(a->c, page, {});
          for (Json& e : (*page)["events"]) all.push_back(std::move(e));
          if ((*page)["next_after"].is_null()) break;
          after = (*page)["next_after"].get<int64_t>();
        }
        return Finish(a->c, Json{{"events", all}}, [](const Json& r) {
          for (const Json& e : r["events"]) {
            std::printf("%5s %s %-18s %s%s\n", Str(e, "seq").c_str(), Str(e, "time").c_str(),
                        Str(e, "type").c_str(), e.value("step_id", "").c_str(),
                        EventDetail(e).c_str());
          }
        });
      };
    });
  }
  // cancel / pause
  for (const char* verb : {"cancel", "pause", "retry"}) {
    struct Args {
      Common c;
      std::string id, from;
    };
    auto a = std::make_shared<Args>();
    static const std::map<std::string, std::string> kHelp = {
        {"cancel", "Cancel an execution on the server"},
        {"pause", "Pause an execution on the server: no new steps start"},
        {"retry", "Run a failed execution again on the server, keeping completed steps"}};
    auto* cmd = app.add_subcommand(verb, kHelp.at(verb));
    cmd->add_option("execution_id", a->id, "Execution id")->required();
    std::string v = verb;
    if (v == "retry") {
      cmd->add_option("--from", a->from,
                      "Run this step and everything downstream of it again too, keeping the "
                      "outputs of the rest (also for a completed execution)");
    }
    AddCommon(cmd, &a->c);
    cmd->callback([a, action, v] {
      *action = [a, v] {
        Json body = Json::object();
        if (!a->from.empty()) body["from"] = a->from;
        return Finish(
            a->c,
            a->c.Client().Call("POST", "/api/v1/executions/" + UrlEncode(a->id) + "/" + v, body),
            [](const Json& e) {
              std::printf("%s %s\n", Str(e, "id").c_str(), Str(e, "status").c_str());
            });
      };
    });
  }
  // why
  {
    struct Args {
      Common c;
      std::string id;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "why",
        "Say what each step of an execution that has not finished waits for: upstream "
        "steps, a retry backoff, an open circuit breaker, an identical cached step, a signal, "
        "a timer, a free slot, a worker, a pause");
    cmd->add_option("execution_id", a->id, "Execution id")->required();
    AddCommon(cmd, &a->c);
    cmd->callback([a, action] {
      *action = [a] {
        return Finish(
            a->c, a->c.Client().Call("GET", "/api/v1/executions/" + UrlEncode(a->id) + "/why"),
            [](const Json& r) {
              std::printf("%s  %s\n", Str(r, "execution_id").c_str(), Str(r, "status").c_str());
              if (r["steps"].empty()) std::printf("  nothing waits: the execution has finished\n");
              for (const Json& w : r["steps"]) {
                // A dispatched step no worker has taken is queued (as `status` says).
                std::string status = Str(w, "status");
                if (status == "dispatched" && Str(w, "kind") == "worker") status = "queued";
                std::printf("  %-24s %-13s %s\n", Str(w, "step_id").c_str(), status.c_str(),
                            Str(w, "reason").c_str());
              }
            });
      };
    });
  }
  // signal
  {
    struct Args {
      Common c;
      std::string id, name, data, data_file;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = app.add_subcommand(
        "signal",
        "Send a signal to a running execution on the server. A `type: wait` step with "
        "`signal: NAME` completes with the payload as its output; a signal sent before its "
        "step waits is kept until the step takes it.");
    cmd->add_option("execution_id", a->id, "Execution id")->required();
    cmd->add_option("name", a->name, "Signal name (the wait step's `signal`)")->required();
    cmd->add_option("-d,--data", a->data, "The payload, as JSON (default: null)");
    cmd->add_option("--data-file", a->data_file, "Read the payload (JSON) from this file")
        ->excludes(cmd->get_option("--data"));
    AddCommon(cmd, &a->c);
    cmd->callback([a, action] {
      *action = [a]() -> int {
        std::string text = a->data;
        if (!a->data_file.empty()) {
          auto read = ReadFile(a->data_file);
          if (!read.ok()) return Finish(a->c, read.status(), {});
          text = *read;
        }
        Json payload = nullptr;
        if (!text.empty()) {
          payload = Json::parse(text, nullptr, false);
          if (payload.is_discarded()) {
            std::fprintf(stderr, "baton signal: the payload %s is not valid JSON\n",
                         a->data_file.empty() ? "(--data)" : ("in " + a->data_file).c_str());
            return 2;
          }
        }
        return Finish(
            a->c,
            a->c.Client().Call(
                "POST", "/api/v1/executions/" + UrlEncode(a->id) + "/signals/" + UrlEncode(a->name),
                payload),
            [](const Json& r) {
              const Json& s = r["signal"];
              std::printf("signal %s #%s sent to %s%s\n", Str(s, "name").c_str(),
                          Str(s, "seq").c_str(), Str(s, "execution_id").c_str(),
                          s["taken_by"].is_null()
                              ? " (kept until a step waits for it)"
                              : (", taken by step " + Str(s, "taken_by")).c_str());
            });
      };
    });
  }
}

// `baton resume ID` on a server (see the resume command's help for the local form).
int ResumeOnServer(const std::string& id, const std::string& server, const std::string& token,
                   bool json) {
  Common c{server, token, json};
  return Finish(
      c, c.Client().Call("POST", "/api/v1/executions/" + UrlEncode(id) + "/resume", Json::object()),
      [](const Json& e) {
        std::printf("%s %s\n", Str(e, "id").c_str(), Str(e, "status").c_str());
      });
}

}  // namespace baton::cli
