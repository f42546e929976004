#include "cli/client_common.h"

#include "server/server.h"

#include <CLI/CLI.hpp>

#include <iostream>

namespace baton::cli {

client::ApiClient Common::Client() const {
  return client::ApiClient(
      client::ResolveEndpoint(server, token, server::DefaultCredentialsPath()));
}

void AddCommon(CLI::App* cmd, Common* c) {
  cmd->add_option("--server", c->server,
                  "Server URL (default: $BATON_SERVER, else the credentials file)");
  cmd->add_option("--token", c->token,
                  "Bearer token (default: $BATON_TOKEN, else the credentials file)");
  cmd->add_flag("--json", c->json, "Print the server's JSON reply");
}

// Prints the reply (JSON or via `human`) and maps errors to exit codes.
int Finish(const Common& c, const Result<Json>& reply,
           const std::function<void(const Json&)>& human) {
  if (!reply.ok()) {
    std::fprintf(stderr, "baton: %s: %s\n", reply.status().code().c_str(),
                 reply.status().message().c_str());
    const std::string& code = reply.status().code();
    return code == errc::kValidation || code == errc::kInvalidArgument ? 2 : 1;
  }
  if (c.json) {
    if (!reply->is_null()) std::cout << reply->dump(2) << std::endl;  // 204: nothing
  } else {
    human(*reply);
  }
  return 0;
}

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "-";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace baton::cli
