// What the client commands share: server/token/--json options, reply printing.
#pragma once

#include "client/api_client.h"

#include <baton/json.h>
#include <baton/status.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

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
// When `cmd` is chosen: runs `call` against the server and prints through `human` (or
// --json). `App` is CLI::App (a template so this header need not include CLI11).
template <class App, class Call, class Human>
void OnRun(App* cmd, std::function<int()>* action, std::shared_ptr<Common> c, Call call,
           Human human) {
  cmd->callback([=] { *action = [=] { return Finish(*c, call(c->Client()), human); }; });
}
// `baton submit --batch FILE`: one JSON object per line, each the body of a single
// submit, sent 1,000 per request after every line is checked. Prints "ID submitted" per
// line (or the whole answer with --json); 2 for a bad file or a refused batch.
int SubmitBatchFile(const Common& c, const std::string& path);
// "key=value" pairs as an input object; a value is JSON when it parses, else a string.
// INVALID_ARGUMENT naming the pair without '='.
Result<Json> ParseInputPairs(const std::vector<std::string>& pairs);
// A subcommand `name` taking one positional ID that sends DELETE `prefix`ID and prints
// "`done` ID".
void AddDeleteCommand(CLI::App* parent, std::function<int()>* action, const char* help,
                      const char* id_name, const std::string& prefix, const char* name = "delete",
                      const char* done = "deleted");
// The field as text: strings bare, other values as JSON, "-" when absent or null.
std::string Str(const Json& j, const char* key);
// What an event (as REST and the live feed give it) says beyond its type and step: the
// attempt, the error ("CODE: message"), and why (a cancel's reason).
std::string EventDetail(const Json& event);

}  // namespace baton::cli
