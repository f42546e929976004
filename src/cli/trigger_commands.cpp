// `baton hook ...`, `baton trigger ...` and `baton delivery ...`: webhooks, event
// triggers and the deliveries of notifications and trigger starts, on a server.
#include "cli/client_common.h"
#include "cli/commands.h"

#include <CLI/CLI.hpp>

#include <sstream>

namespace baton::cli {
namespace {

using client::UrlEncode;

void AddHookCommands(CLI::App& app, std::function<int()>* action) {
  auto* hook = app.add_subcommand(
      "hook", "Webhooks: POST /api/v1/hooks/NAME with a signed body starts a workflow");
  hook->require_subcommand(1);
  {
    struct Args {
      std::string name, workflow, secret;
      int version = 0;
    };
    auto a = std::make_shared<Args>();
    auto c = std::make_shared<Common>();
    auto* cmd = hook->add_subcommand("create", "Create a webhook; prints its secret once");
    cmd->add_option("name", a->name, "The hook's name: its URL is /api/v1/hooks/NAME")->required();
    cmd->add_option("--workflow", a->workflow, "The workflow it starts")->required();
    cmd->add_option("--version", a->version, "Workflow version (default: the latest at each call)");
    cmd->add_option("--secret", a->secret, "The signing secret (default: a random one)");
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [a](const client::ApiClient& api) {
          Json body = {{"name", a->name}, {"workflow", a->workflow}};
          if (a->version > 0) body["version"] = a->version;
          if (!a->secret.empty()) body["secret"] = a->secret;
          return api.Call("POST", "/api/v1/hooks", body);
        },
        [](const Json& r) {
          std::printf(
              "%s -> %s\nsecret %s\n(sign each call: X-Baton-Timestamp: <Unix seconds>, "
              "X-Baton-Signature: sha256=<hex HMAC-SHA256 of \"<timestamp>.<body>\" with the "
              "secret>)\n",
              Str(r, "url").c_str(), Str(r, "workflow").c_str(), Str(r, "secret").c_str());
        });
  }
  {
    auto c = std::make_shared<Common>();
    auto* cmd = hook->add_subcommand("list", "List webhooks");
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [](const client::ApiClient& api) { return api.Call("GET", "/api/v1/hooks"); },
        [](const Json& r) {
          for (const Json& h : r["hooks"]) {
            std::printf("%-24s %-24s %s\n", Str(h, "name").c_str(), Str(h, "workflow").c_str(),
                        Str(h, "url").c_str());
          }
        });
  }
  AddDeleteCommand(hook, action, "Delete a webhook", "name", "/api/v1/hooks/");
}

void AddTriggerCommands(CLI::App& app, std::function<int()>* action) {
  auto* trg = app.add_subcommand(
      "trigger", "Event triggers: a finished execution of one workflow starts another");
  trg->require_subcommand(1);
  {
    struct Args {
      std::string name, source, workflow;
      std::vector<std::string> on, inputs;
      int version = 0;
    };
    auto a = std::make_shared<Args>();
    auto c = std::make_shared<Common>();
    auto* cmd = trg->add_subcommand("create", "Start WORKFLOW when an execution of SOURCE ends");
    cmd->add_option("--name", a->name, "A name for the trigger")->required();
    cmd->add_option("--source", a->source, "The workflow whose executions are watched")->required();
    cmd->add_option("--on", a->on, "Statuses that fire it: completed, failed, timeout, cancelled")
        ->delimiter(',')
        ->required();
    cmd->add_option("--workflow", a->workflow, "The workflow to start")->required();
    cmd->add_option("--version", a->version, "Workflow version (default: the latest)");
    cmd->add_option("-i,--input", a->inputs,
                    "Input as key=value; templates see the finished execution, e.g. "
                    "model='{{ source.output.model }}'");
    AddCommon(cmd, c.get());
    cmd->callback([a, c, action] {
      *action = [a, c]() -> int {
        auto input = ParseInputPairs(a->inputs);
        if (!input.ok()) {
          std::fprintf(stderr, "baton: %s\n", input.status().message().c_str());
          return 2;
        }
        Json body = {{"name", a->name},
                     {"source", a->source},
                     {"on", a->on},
                     {"workflow", a->workflow},
                     {"input", *input}};
        if (a->version > 0) body["version"] = a->version;
        return Finish(*c, c->Client().Call("POST", "/api/v1/triggers", body), [](const Json& r) {
          std::printf("%s: %s -> %s\n", Str(r, "id").c_str(), Str(r, "source").c_str(),
                      Str(r, "workflow").c_str());
        });
      };
    });
  }
  {
    auto c = std::make_shared<Common>();
    auto* cmd = trg->add_subcommand("list", "List event triggers");
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [](const client::ApiClient& api) { return api.Call("GET", "/api/v1/triggers"); },
        [](const Json& r) {
          for (const Json& t : r["triggers"]) {
            std::ostringstream on;
            for (const Json& s : t["on"]) on << (on.tellp() > 0 ? "," : "") << s.get<std::string>();
            std::printf("%-16s %-20s %-20s on %-20s -> %s\n", Str(t, "id").c_str(),
                        Str(t, "name").c_str(), Str(t, "source").c_str(), on.str().c_str(),
                        Str(t, "workflow").c_str());
          }
        });
  }
  AddDeleteCommand(trg, action, "Delete an event trigger", "trigger_id", "/api/v1/triggers/");
}

void AddDeliveryCommands(CLI::App& app, std::function<int()>* action) {
  auto* dlv = app.add_subcommand(
      "delivery", "Notifications and trigger starts of finished executions, with their state");
  dlv->require_subcommand(1);
  {
    struct Args {
      std::string execution, status;
    };
    auto a = std::make_shared<Args>();
    auto c = std::make_shared<Common>();
    auto* cmd = dlv->add_subcommand("list", "List deliveries, oldest first");
    cmd->add_option("--execution", a->execution, "Only those of this execution");
    cmd->add_option("--status", a->status, "pending, delivered or failed");
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [a](const client::ApiClient& api) {
          std::string q = "/api/v1/deliveries?limit=1000";
          if (!a->execution.empty()) q += "&execution=" + UrlEncode(a->execution);
          if (!a->status.empty()) q += "&status=" + UrlEncode(a->status);
          return api.Call("GET", q);
        },
        [](const Json& r) {
          for (const Json& d : r["deliveries"]) {
            const bool trigger = d.value("kind", "") == "trigger";
            std::string error = "";
            if (d["last_error"].is_object()) error = "  " + Str(d["last_error"], "message");
            std::printf("%-22s %-9s %-12s attempts %-2s %-22s %s%s\n", Str(d, "id").c_str(),
                        Str(d, "status").c_str(), Str(d, "kind").c_str(),
                        Str(d, "attempts").c_str(), Str(d, "event").c_str(),
                        Str(d, trigger ? "trigger_id" : "url").c_str(), error.c_str());
          }
        });
  }
  {
    struct Args {
      std::string id;
    };
    auto a = std::make_shared<Args>();
    auto c = std::make_shared<Common>();
    auto* cmd = dlv->add_subcommand("redeliver", "Try a failed delivery again");
    cmd->add_option("delivery_id", a->id, "The delivery's id (dlv_...)")->required();
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [a](const client::ApiClient& api) {
          return api.Call("POST", "/api/v1/deliveries/" + UrlEncode(a->id) + "/redeliver");
        },
        [](const Json& r) { std::printf("%s pending again\n", Str(r, "id").c_str()); });
  }
}

}  // namespace

void AddAutomationCommands(CLI::App& app, std::function<int()>* action) {
  AddHookCommands(app, action);
  AddTriggerCommands(app, action);
  AddDeliveryCommands(app, action);
}

}  // namespace baton::cli
