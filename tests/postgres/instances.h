// Several `baton server` instances on one private PostgreSQL cluster, for the tests of
// tests/postgres/: started with names i1, i2, ... and stopped with the fixture.
#pragma once

#include "support/pg_cluster.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace baton::testing {

// How many times a test's shell step ran: the lines it appended to `dir`/runs.
inline int Runs(const std::string& dir) {
  std::ifstream in(dir + "/runs");
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// A shell step's `run` that notes its start and its end in `dir`/log, and runs until the
// file `dir`/go exists.
inline std::string LogUntilGo(const std::string& dir) {
  return "['sh', '-c', 'echo start >> \"$0/log\"; while [ ! -f \"$0/go\" ]; do sleep 0.05; "
         "done; echo end >> \"$0/log\"', '" +
         dir + "']";
}

// The lines of the file at `path`.
inline std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The status of the first step of execution `id`, read through `api` ("" when it does
// not answer).
inline std::string StepStatus(const client::ApiClient& api, const std::string& id) {
  auto detail = api.Call("GET", "/api/v1/executions/" + id);
  if (!detail.ok()) return "";
  return (*detail)["steps"][0]["status"];
}

struct Instances {
  PgCluster cluster;
  std::string url;
  std::vector<std::unique_ptr<ServerProcess>> servers;
  std::string token;  // the first instance's admin token: the database's

  // `n` instances named i1, i2, ... with `lease`.
  void Start(int n, const std::string& lease) {
    ASSERT_EQ(cluster.Start(), "");
    url = cluster.NewSchema("instances" + std::to_string(getpid()));
    ASSERT_FALSE(url.empty());
    for (int i = 1; i <= n; ++i) {
      servers.push_back(std::make_unique<ServerProcess>(
          MakeTempDir(),
          std::vector<std::string>{"--postgres", url, "--instance", "i" + std::to_string(i),
                                   "--lease", lease, "--parallel", "8"}));
      ASSERT_TRUE(servers.back()->ok()) << servers.back()->log();
    }
    token = servers[0]->admin_token();
    ASSERT_FALSE(token.empty());
  }
  client::ApiClient Api(size_t i) const { return servers[i]->As(token); }

  // Registers a workflow through instance `i`.
  void Create(size_t i, const char* yaml) {
    auto r = Api(i).Send("POST", "/api/v1/workflows", yaml, "application/yaml");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ASSERT_EQ(r->status, 201) << r->body;
  }

  // Submits `workflow` to instance `i`; its id, or "" when refused.
  std::string Submit(size_t i, const std::string& workflow) {
    auto r = Api(i).Send("POST", "/api/v1/executions", Json{{"workflow", workflow}}.dump());
    if (!r.ok() || r->status != 201) return "";
    return Json::parse(r->body)["id"];
  }
};

}  // namespace baton::testing
