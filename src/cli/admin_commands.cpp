// `baton token ...` and `baton workflow ...`: manage a server's tokens and workflows.
#include "cli/client_common.h"
#include "cli/commands.h"

#include <CLI/CLI.hpp>

#include <fstream>
#include <map>
#include <sstream>

namespace baton::cli {
namespace {

using client::UrlEncode;

int PrintWorkflowList(const Json& r, const char* key) {
  for (const Json& w : r[key]) {
    std::printf("%-32s v%-4s %s\n", Str(w, "name").c_str(), Str(w, "version").c_str(),
                Str(w, "created_at").c_str());
  }
  return 0;
}

void AddTokenCommands(CLI::App& app, std::function<int()>* action) {
  auto* token = app.add_subcommand("token", "Create, list and revoke API tokens (admin)");
  token->require_subcommand(1);
  {
    struct Args {
      Common c;
      std::string name, ns;
      std::vector<std::string> scopes;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = token->add_subcommand("create", "Create a token; its secret is printed once");
    cmd->add_option("--name", a->name, "What the token is for")->required();
    cmd->add_option("--scopes", a->scopes, "admin, write, read, worker (comma-separated)")
        ->delimiter(',')
        ->required();
    cmd->add_option("--namespace", a->ns, "Namespace (default: the caller's)");
    AddCommon(cmd, &a->c);
    cmd->callback([a, action] {
      *action = [a] {
        Json body = {{"name", a->name}, {"scopes", a->scopes}};
        if (!a->ns.empty()) body["namespace"] = a->ns;
        return Finish(a->c, a->c.Client().Call("POST", "/api/v1/tokens", body), [](const Json& t) {
          std::printf("%s\n", Str(t, "token").c_str());
          std::fprintf(stderr,
                       "token %s (namespace %s): keep the secret above, it "
                       "is not shown again\n",
                       Str(t, "id").c_str(), Str(t, "namespace").c_str());
        });
      };
    });
  }
  {
    auto c = std::make_shared<Common>();
    auto* cmd = token->add_subcommand("list", "List tokens (never their secrets)");
    AddCommon(cmd, c.get());
    cmd->callback([c, action] {
      *action = [c] {
        return Finish(*c, c->Client().Call("GET", "/api/v1/tokens"), [](const Json& r) {
          for (const Json& t : r["tokens"]) {
            std::printf("%-18s %-12s %-24s %-20s %s\n", Str(t, "id").c_str(),
                        Str(t, "namespace").c_str(), t["scopes"].dump().c_str(),
                        Str(t, "name").c_str(), t["revoked_at"].is_null() ? "active" : "revoked");
          }
        });
      };
    });
  }
  {
    struct Args {
      Common c;
      std::string id;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = token->add_subcommand("revoke", "Revoke a token at once");
    cmd->add_option("token_id", a->id, "The token's id (tok_...)")->required();
    AddCommon(cmd, &a->c);
    cmd->callback([a, action] {
      *action = [a] {
        return Finish(a->c, a->c.Client().Call("DELETE", "/api/v1/tokens/" + UrlEncode(a->id)),
                      [&](const Json&) { std::printf("revoked %s\n", a->id.c_str()); });
      };
    });
  }
}

void AddWorkflowCommands(CLI::App& app, std::function<int()>* action) {
  auto* wf = app.add_subcommand("workflow", "Store and inspect workflows on the server");
  wf->require_subcommand(1);
  {
    struct Args {
      Common c;
      std::string file;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = wf->add_subcommand("create", "Upload a definition (a new version when it changed)");
    cmd->add_option("file", a->file, "Workflow file (YAML or JSON)")->required();
    AddCommon(cmd, &a->c);
    cmd->callback([a, action] {
      *action = [a]() -> int {
        std::ifstream in(a->file);
        if (!in) {
          std::fprintf(stderr, "baton: cannot read '%s'\n", a->file.c_str());
          return 2;
        }
        std::stringstream ss;
        ss << in.rdbuf();
        auto created =
            a->c.Client().CallWithText("POST", "/api/v1/workflows", ss.str(), "application/yaml");
        return Finish(a->c, created, [](const Json& w) {
          std::printf("%s v%s %s\n", Str(w, "name").c_str(), Str(w, "version").c_str(),
                      w.value("created", false) ? "created" : "(unchanged)");
        });
      };
    });
  }
  {
    auto c = std::make_shared<Common>();
    auto* cmd = wf->add_subcommand("list", "List workflows (latest versions)");
    AddCommon(cmd, c.get());
    cmd->callback([c, action] {
      *action = [c] {
        return Finish(*c, c->Client().Call("GET", "/api/v1/workflows"),
                      [](const Json& r) { PrintWorkflowList(r, "workflows"); });
      };
    });
  }
  for (const char* verb : {"get", "versions", "delete"}) {
    struct Args {
      Common c;
      std::string name;
      int version = 0;
    };
    auto a = std::make_shared<Args>();
    static const std::map<std::string, std::string> kHelp = {
        {"get", "Print a workflow's definition (latest, or --version)"},
        {"versions", "List every version of a workflow"},
        {"delete", "Delete every version (running executions keep their snapshot)"}};
    auto* cmd = wf->add_subcommand(verb, kHelp.at(verb));
    cmd->add_option("name", a->name, "Workflow name")->required();
    if (std::string(verb) == "get") cmd->add_option("--version", a->version, "A version");
    AddCommon(cmd, &a->c);
    std::string v = verb;
    cmd->callback([a, action, v] {
      *action = [a, v]() -> int {
        const std::string path = "/api/v1/workflows/" + UrlEncode(a->name);
        if (v == "delete") {
          return Finish(a->c, a->c.Client().Call("DELETE", path),
                        [&](const Json&) { std::printf("deleted %s\n", a->name.c_str()); });
        }
        if (v == "versions") {
          return Finish(a->c, a->c.Client().Call("GET", path + "/versions"),
                        [](const Json& r) { PrintWorkflowList(r, "versions"); });
        }
        std::string q = a->version > 0 ? "?version=" + std::to_string(a->version) : "";
        return Finish(a->c, a->c.Client().Call("GET", path + q),
                      [](const Json& w) { std::printf("%s\n", w["definition"].dump(2).c_str()); });
      };
    });
  }
}

void AddScheduleCommands(CLI::App& app, std::function<int()>* action) {
  auto* sch = app.add_subcommand("schedule", "Cron schedules that start workflows on the server");
  sch->require_subcommand(1);
  {
    struct Args {
      Common c;
      std::string name, workflow, cron, timezone, overlap, catchup;
      int version = 0;
      std::vector<std::string> inputs;
    };
    auto a = std::make_shared<Args>();
    auto* cmd = sch->add_subcommand("create", "Start WORKFLOW at every time CRON names");
    cmd->add_option("--name", a->name, "A name for the schedule")->required();
    cmd->add_option("--workflow", a->workflow, "The workflow to start")->required();
    cmd->add_option("--cron", a->cron, "5-field cron, e.g. '*/15 * * * *' or @daily")->required();
    cmd->add_option("--timezone", a->timezone, "IANA zone, e.g. Europe/Berlin (default UTC)");
    cmd->add_option("--version", a->version, "Workflow version (default: the latest at each run)");
    cmd->add_option("-i,--input", a->inputs,
                    "Input as key=value; the value is JSON when it parses");
    cmd->add_option("--overlap", a->overlap,
                    "When the last run is still going: skip|allow|cancel_old");
    cmd->add_option("--catchup", a->catchup, "Runs missed while the server was down: skip|once");
    AddCommon(cmd, &a->c);
    cmd->callback([a, action] {
      *action = [a]() -> int {
        Json body = {{"name", a->name}, {"workflow", a->workflow}, {"cron", a->cron}};
        if (!a->timezone.empty()) body["timezone"] = a->timezone;
        if (a->version > 0) body["version"] = a->version;
        if (!a->overlap.empty()) body["overlap"] = a->overlap;
        if (!a->catchup.empty()) body["catchup"] = a->catchup;
        auto input = ParseInputPairs(a->inputs);
        if (!input.ok()) {
          std::fprintf(stderr, "baton: %s\n", input.status().message().c_str());
          return 2;
        }
        body["input"] = *input;
        return Finish(
            a->c, a->c.Client().Call("POST", "/api/v1/schedules", body), [](const Json& r) {
              std::printf("%s next run %s\n", Str(r, "id").c_str(), Str(r, "next_fire_at").c_str());
            });
      };
    });
  }
  {
    auto c = std::make_shared<Common>();
    auto* cmd = sch->add_subcommand("list", "List schedules and their next runs");
    AddCommon(cmd, c.get());
    cmd->callback([c, action] {
      *action = [c] {
        return Finish(*c, c->Client().Call("GET", "/api/v1/schedules"), [](const Json& r) {
          for (const Json& s : r["schedules"]) {
            std::printf("%-16s %-20s %-16s %-16s next %s\n", Str(s, "id").c_str(),
                        Str(s, "name").c_str(), Str(s, "workflow").c_str(), Str(s, "cron").c_str(),
                        Str(s, "next_fire_at").c_str());
          }
        });
      };
    });
  }
  AddDeleteCommand(sch, action, "Delete a schedule", "schedule_id", "/api/v1/schedules/");
}

}  // namespace

void AddAdminCommands(CLI::App& app, std::function<int()>* action) {
  AddTokenCommands(app, action);
  AddWorkflowCommands(app, action);
  AddScheduleCommands(app, action);
}

}  // namespace baton::cli
