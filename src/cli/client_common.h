// What the client commands share: server/token/--json options, reply printing.
#pragma once

#include "client/api_client.h"

#include <baton/json.h>
#include <baton/status.h>

#include <functional>
#include <string>

namespace CLI {
class App;
}

namespace baton::cli {

struct Common {
  std::string server;
  std::string token;
  bool json = false;
  client::ApiClient Client() const;
};

void AddCommon(CLI::App* cmd, Common* c);
// Prints the reply (JSON with --json, else via `human`) and maps errors to exit codes:
// 2 for a rejected request (validation), 1 for anything else.
int Finish(const Common& c, const Result<Json>& reply,
           const std::function<void(const Json&)>& human);
// The field as text: strings bare, other values as JSON, "-" when absent or null.
std::string Str(const Json& j, const char* key);

}  // namespace baton::cli
