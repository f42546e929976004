// `baton cache ...`: a server's cached step results -- what is cached, for which
// workflow and step, how often it was used -- and clearing them.
#include "cli/client_common.h"
#include "cli/commands.h"

#include <CLI/CLI.hpp>

namespace baton::cli {
namespace {

using client::UrlEncode;

std::string Filters(const std::string& workflow, const std::string& step) {
  std::string q;
  if (!workflow.empty()) q += "?workflow=" + UrlEncode(workflow);
  if (!step.empty()) q += (q.empty() ? "?" : "&") + ("step=" + UrlEncode(step));
  return q;
}

void PrintCacheEntries(const Json& r) {
  std::printf("%s cached result(s), %s bytes\n", Str(r, "total").c_str(), Str(r, "bytes").c_str());
  if (r["entries"].empty()) return;
  std::printf("%-16s %-20s %-16s %-6s %-9s %-24s %s\n", "KEY", "WORKFLOW", "STEP", "HITS", "BYTES",
              "EXPIRES", "FROM EXECUTION");
  for (const Json& e : r["entries"]) {
    std::printf("%-16s %-20s %-16s %-6s %-9s %-24s %s\n", Str(e, "key").substr(0, 16).c_str(),
                Str(e, "workflow").c_str(), Str(e, "step_id").c_str(), Str(e, "hits").c_str(),
                Str(e, "bytes").c_str(),
                e["expires_at"].is_string() ? Str(e, "expires_at").c_str() : "never",
                Str(e, "execution_id").c_str());
  }
}

}  // namespace

void AddCacheCommands(CLI::App& app, std::function<int()>* action) {
  auto* cache = app.add_subcommand(
      "cache",
      "Cached step results (steps with `cache:`): a step whose key -- a SHA-256 of what it "
      "is asked to do -- has a live entry completes `cached` without running. List or clear");
  cache->require_subcommand(1);
  {
    auto workflow = std::make_shared<std::string>();
    auto step = std::make_shared<std::string>();
    auto c = std::make_shared<Common>();
    auto* cmd = cache->add_subcommand("list", "Cached results of the namespace, by key");
    cmd->add_option("--workflow", *workflow, "Only entries of this workflow");
    cmd->add_option("--step", *step, "Only entries of this step id");
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [workflow, step](const client::ApiClient& api) {
          return api.Call("GET", "/api/v1/cache" + Filters(*workflow, *step));
        },
        PrintCacheEntries);
  }
  {
    auto key = std::make_shared<std::string>();
    auto workflow = std::make_shared<std::string>();
    auto step = std::make_shared<std::string>();
    auto all = std::make_shared<bool>(false);
    auto c = std::make_shared<Common>();
    auto* cmd = cache->add_subcommand(
        "clear",
        "Delete cached results: one by KEY, or those of --workflow (and --step), or --all; "
        "the next identical step runs again");
    cmd->add_option("key", *key, "The entry's full key (as `baton cache list --json` shows it)");
    cmd->add_option("--workflow", *workflow, "Every entry of this workflow");
    cmd->add_option("--step", *step, "Every entry of this step id");
    cmd->add_flag("--all", *all, "Every entry of the namespace");
    AddCommon(cmd, c.get());
    cmd->callback([key, workflow, step, all, c, action] {
      *action = [key, workflow, step, all, c]() -> int {
        const bool filtered = !workflow->empty() || !step->empty();
        if (static_cast<int>(!key->empty()) + static_cast<int>(filtered) + static_cast<int>(*all) !=
            1) {
          std::fprintf(stderr,
                       "baton cache clear: give a KEY, or --workflow/--step, or --all (one of "
                       "them)\n");
          return 2;
        }
        const std::string target = key->empty() ? "/api/v1/cache" + Filters(*workflow, *step)
                                                : "/api/v1/cache/" + UrlEncode(*key);
        return Finish(*c, c->Client().Call("DELETE", target), [](const Json& r) {
          std::printf("%s cached result(s) deleted\n", Str(r, "deleted").c_str());
        });
      };
    });
  }
}

}  // namespace baton::cli
