// A real `baton server` process on a loopback port, for the server's integration tests.
#pragma once

#include "client/api_client.h"
#include "support/process_util.h"

#include <sys/types.h>

#include <string>

namespace baton::testing {

class ServerProcess {
 public:
  // Starts `baton server --listen 127.0.0.1:0` over `dir`/baton.db and waits until it
  // serves (its credentials file names the port). The directory outlives restarts.
  explicit ServerProcess(std::string dir, std::vector<std::string> extra_args = {},
                         std::vector<std::string> extra_env = {});
  ~ServerProcess();  // SIGTERM, then SIGKILL

  bool ok() const { return pid_ > 0 && !url_.empty(); }
  pid_t pid() const { return pid_; }
  const std::string& url() const { return url_; }
  const std::string& admin_token() const { return token_; }
  const std::string& dir() const { return dir_; }
  std::string log() const;

  client::ApiClient Admin() const { return client::ApiClient({url_, token_}); }
  client::ApiClient As(const std::string& token) const { return client::ApiClient({url_, token}); }
  // Runs `baton ARGS...` against this server as its admin (BATON_SERVER, BATON_TOKEN set).
  ProcessResult Cli(std::vector<std::string> args) const;

  void Kill9();  // what a crash leaves
  // Sends `signal` to the running process (SIGSTOP / SIGCONT: a frozen server).
  void Signal(int signal);
  int Terminate();  // SIGTERM; returns the exit code
  void Restart();   // a new process over the same directory and port
  // The same with other extra arguments (kept for later restarts).
  void Restart(std::vector<std::string> extra_args);
  // The environment of the next start (NAME=value), e.g. a BATON_CRASH_AT point.
  void SetEnv(std::vector<std::string> extra_env) { extra_env_ = std::move(extra_env); }
  // True once the process has exited by itself (a crash point); it is reaped then.
  bool Exited();

 private:
  void Start();
  void StartListening(const std::string& listen);  // "127.0.0.1:PORT"
  std::string dir_;
  std::vector<std::string> extra_args_;
  std::vector<std::string> extra_env_;  // NAME=value
  pid_t pid_ = -1;
  std::string url_;
  std::string token_;
  int starts_ = 0;
};

// Polls `done` every 20 ms for up to `timeout_ms`; true when it held.
bool WaitUntil(const std::function<bool()>& done, int timeout_ms = 20'000);

// GET /api/v1/executions/{id} until its status is `status` (a test failure otherwise);
// the last execution read.
Json WaitForExecutionStatus(const client::ApiClient& api, const std::string& id,
                            const std::string& status);

}  // namespace baton::testing
