// `baton submit --batch FILE.jsonl`: many submissions, 1,000 per request.
#include "cli/client_common.h"
#include "client/api_client.h"
#include "common/json_parse.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace baton::cli {
namespace {

constexpr size_t kPerRequest = 1000;  // the server's limit per batch

// "executions[12].input" -> 12; npos when the field names no item.
size_t ItemOf(const Json& error) {
  const std::string field = error["details"].value("field", "");
  if (!field.starts_with("executions[")) return std::string::npos;
  return std::strtoull(field.c_str() + 11, nullptr, 10);
}

}  // namespace

int SubmitBatchFile(const Common& c, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "baton submit: cannot read '%s'\n", path.c_str());
    return 2;
  }
  // Every line is read and checked before anything is sent: a typo on line 9,000 must
  // not leave 8,999 executions started.
  std::vector<Json> items;
  std::vector<int> lines;
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    Json item;
    JsonParseError error;
    if (!ParseJsonText(text, &item, &error) || !item.is_object()) {
      std::fprintf(stderr, "baton submit: %s:%d: %s\n", path.c_str(), line,
                   item.is_object() || !error.message.empty()
                       ? ("not valid JSON: " + error.Describe()).c_str()
                       : "expected a JSON object like {\"workflow\": \"NAME\", \"input\": {...}}");
      return 2;
    }
    items.push_back(std::move(item));
    lines.push_back(line);
  }
  if (items.empty()) {
    std::fprintf(stderr, "baton submit: %s holds no submissions\n", path.c_str());
    return 2;
  }
  client::ApiClient api = c.Client();
  Json all = Json::array();
  int failed = 0;
  for (size_t first = 0; first < items.size(); first += kPerRequest) {
    const size_t n = std::min(kPerRequest, items.size() - first);
    Json body = {{"executions", Json::array()}};
    for (size_t i = 0; i < n; ++i) body["executions"].push_back(std::move(items[first + i]));
    auto reply = api.Send("POST", "/api/v1/executions/batch", body.dump());
    auto stop = [&](const std::string& why) {
      std::fprintf(stderr, "baton submit: %s\n", why.c_str());
      if (first > 0) {
        std::fprintf(stderr,
                     "baton submit: lines before %d were submitted; from line %d on, none\n",
                     lines[first], lines[first]);
      }
      return 1;
    };
    if (!reply.ok()) return stop(reply.status().message());
    Json answer = Json::parse(reply->body, nullptr, false);
    if (reply->status >= 300 && reply->status != 207) {
      const Json& error = answer.is_object() ? answer["error"] : Json();
      const size_t item = error.is_object() ? ItemOf(error) : std::string::npos;
      std::string where = path;
      if (item < n) where += ":" + std::to_string(lines[first + item]);
      const int code = stop(
          where + ": " + (error.is_object() ? error.value("message", reply->body) : reply->body));
      return reply->status == 400 ? 2 : code;
    }
    const Json& results = answer["executions"];
    for (size_t i = 0; i < results.size() && i < n; ++i) {
      const Json& r = results[i];
      if (r.contains("error")) {
        ++failed;
        std::fprintf(stderr, "baton submit: %s:%d: %s: %s\n", path.c_str(), lines[first + i],
                     r["error"].value("code", "").c_str(), r["error"].value("message", "").c_str());
      } else if (!c.json) {
        std::printf("%s %s\n", r.value("id", "").c_str(),
                    r.value("created", true) ? "submitted" : "(existing, same idempotency key)");
      }
      all.push_back(r);
    }
  }
  if (c.json) std::cout << Json{{"executions", all}}.dump(2) << std::endl;
  return failed > 0 ? 1 : 0;
}

}  // namespace baton::cli
