// `baton pool ...`: a server's pools of slots (a step's `pool:`) -- their sizes, who holds
// their slots, and how to create, resize or delete one.
#include "cli/client_common.h"
#include "cli/commands.h"

#include <CLI/CLI.hpp>

namespace baton::cli {
namespace {

using client::UrlEncode;

void PrintPools(const Json& r) {
  if (r["pools"].empty()) {
    std::printf("no pools\n");
    return;
  }
  std::printf("%-24s %-7s %-7s %-8s %s\n", "NAME", "SLOTS", "USED", "WAITING", "HOLDERS");
  for (const Json& p : r["pools"]) {
    std::string holders;
    for (const Json& h : p["holders"])
      holders += (holders.empty() ? "" : ", ") + h.get<std::string>();
    std::printf("%-24s %-7s %-7s %-8s %s\n", Str(p, "name").c_str(), Str(p, "slots").c_str(),
                Str(p, "used").c_str(), Str(p, "waiting").c_str(),
                holders.empty() ? "-" : holders.c_str());
  }
}

}  // namespace

void AddPoolCommands(CLI::App& app, std::function<int()>* action) {
  auto* pool = app.add_subcommand(
      "pool",
      "Pools of slots shared by the workflows of a namespace: a step with `pool: NAME` (and "
      "`pool_slots: N`) runs only while that many slots are free");
  pool->require_subcommand(1);
  {
    auto c = std::make_shared<Common>();
    auto* cmd = pool->add_subcommand("list", "Every pool: slots, slots in use, holders, waiting");
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [](const client::ApiClient& api) { return api.Call("GET", "/api/v1/pools"); }, PrintPools);
  }
  {
    auto name = std::make_shared<std::string>();
    auto slots = std::make_shared<int>(0);
    auto c = std::make_shared<Common>();
    auto* cmd = pool->add_subcommand(
        "set", "Create a pool or resize it (a bigger pool lets waiting steps in at once)");
    cmd->add_option("name", *name, "Pool name, [a-z0-9][a-z0-9_.-]*")->required();
    cmd->add_option("slots", *slots, "Its slots, 1 to 1000000")->required();
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [name, slots](const client::ApiClient& api) {
          return api.Call("POST", "/api/v1/pools", {{"name", *name}, {"slots", *slots}});
        },
        [](const Json& p) {
          std::printf("pool %s: %s slots (%s in use)\n", Str(p, "name").c_str(),
                      Str(p, "slots").c_str(), Str(p, "used").c_str());
        });
  }
  {
    auto name = std::make_shared<std::string>();
    auto c = std::make_shared<Common>();
    auto* cmd = pool->add_subcommand(
        "delete", "Delete a pool: holders keep their slots until they end; waiting steps fail");
    cmd->add_option("name", *name, "Pool name")->required();
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [name](const client::ApiClient& api) {
          return api.Call("DELETE", "/api/v1/pools/" + UrlEncode(*name));
        },
        [](const Json& r) { std::printf("pool %s deleted\n", Str(r, "deleted").c_str()); });
  }
}

}  // namespace baton::cli
