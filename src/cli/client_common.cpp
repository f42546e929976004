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

Result<Json> ParseInputPairs(const std::vector<std::string>& pairs) {
  Json input = Json::object();
  for (const std::string& kv : pairs) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status(errc::kInvalidArgument, "--input takes key=value, got '" + kv + "'");
    }
    Json v = Json::parse(kv.substr(eq + 1), nullptr, false);
    input[kv.substr(0, eq)] = v.is_discarded() ? Json(kv.substr(eq + 1)) : v;
  }
  return input;
}

void AddDeleteCommand(CLI::App* parent, std::function<int()>* action, const char* help,
                      const char* id_name, const std::string& prefix, const char* name,
                      const char* done) {
  struct Args {
    Common c;
    std::string id;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = parent->add_subcommand(name, help);
  cmd->add_option(id_name, a->id, std::string("The ") + id_name)->required();
  AddCommon(cmd, &a->c);
  cmd->callback([a, action, prefix, done] {
    *action = [a, prefix, done]() -> int {
      return Finish(a->c, a->c.Client().Call("DELETE", prefix + client::UrlEncode(a->id)),
                    [&](const Json&) { std::printf("%s %s\n", done, a->id.c_str()); });
    };
  });
}

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "-";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string EventDetail(const Json& e) {
  std::string out;
  if (e.contains("attempt")) out += " attempt=" + Str(e, "attempt");
  const Json data = e.contains("data") && e["data"].is_object() ? e["data"] : Json::object();
  if (data.contains("error") && data["error"].is_object()) {
    out += " " + Str(data["error"], "code") + ": " + Str(data["error"], "message");
  }
  if (data.contains("reason")) out += " (" + Str(data, "reason") + ")";
  return out;
}

}  // namespace baton::cli
