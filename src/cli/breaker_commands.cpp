// `baton breaker ...`: a server's circuit breakers -- which dependencies are failing
// fast, until when, and a manual reset for when one is known to be back.
#include "cli/client_common.h"
#include "cli/commands.h"

#include <CLI/CLI.hpp>

namespace baton::cli {
namespace {

using client::UrlEncode;

void PrintBreakers(const Json& r) {
  if (r["breakers"].empty()) {
    std::printf("no circuit breakers\n");
    return;
  }
  std::printf("%-32s %-10s %-9s %-6s %-24s %s\n", "KEY", "STATE", "FAILURES", "TRIPS", "NEXT PROBE",
              "LAST ERROR");
  for (const Json& b : r["breakers"]) {
    const Json& last = b["last_error"];
    std::string error = last.is_object() ? Str(last, "code") : "";
    std::printf("%-32s %-10s %-9s %-6s %-24s %s\n", Str(b, "key").c_str(), Str(b, "state").c_str(),
                (Str(b, "failures") + "/" + Str(b, "failure_threshold")).c_str(),
                Str(b, "trips").c_str(),
                b["probe_at"].is_string() ? Str(b, "probe_at").c_str() : "-",
                error.empty() ? "-" : error.c_str());
  }
}

}  // namespace

void AddBreakerCommands(CLI::App& app, std::function<int()>* action) {
  auto* breaker = app.add_subcommand(
      "breaker",
      "Circuit breakers: after failure_threshold consecutive failures against a dependency "
      "(an http host, a command, a key), its steps fail fast with CIRCUIT_OPEN until a probe "
      "succeeds. List them or close one by hand");
  breaker->require_subcommand(1);
  {
    auto c = std::make_shared<Common>();
    auto* cmd = breaker->add_subcommand(
        "list", "Every circuit breaker of the namespace: state, failures, next probe, trips");
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [](const client::ApiClient& api) { return api.Call("GET", "/api/v1/breakers"); },
        PrintBreakers);
  }
  {
    auto key = std::make_shared<std::string>();
    auto c = std::make_shared<Common>();
    auto* cmd = breaker->add_subcommand(
        "reset", "Close a circuit breaker now, its counts cleared: attempts go through again");
    cmd->add_option("key", *key, "The breaker's key (as `baton breaker list` shows it)")
        ->required();
    AddCommon(cmd, c.get());
    OnRun(
        cmd, action, c,
        [key](const client::ApiClient& api) {
          return api.Call("POST", "/api/v1/breakers/" + UrlEncode(*key) + "/reset");
        },
        [](const Json& b) { std::printf("circuit breaker %s closed\n", Str(b, "key").c_str()); });
  }
}

}  // namespace baton::cli
