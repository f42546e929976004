#include "support/server_process.h"

#include "support/process_util.h"

#include <gtest/gtest.h>
#include <algorithm>

#include <baton/json.h>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace baton::testing {

bool WaitUntil(const std::function<bool()>& done, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a bounded poll
  }
  return done();
}

Json WaitForExecutionStatus(const client::ApiClient& api, const std::string& id,
                            const std::string& status) {
  Json last;
  WaitUntil([&] {
    auto r = api.Call("GET", "/api/v1/executions/" + id);
    if (!r.ok()) return false;
    last = *r;
    return last["status"] == status;
  });
  EXPECT_EQ(last["status"], status) << last.dump(2);
  return last;
}

ServerProcess::ServerProcess(std::string dir, std::vector<std::string> extra_args,
                             std::vector<std::string> extra_env)
    : dir_(std::move(dir)), extra_args_(std::move(extra_args)), extra_env_(std::move(extra_env)) {
  Start();
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Terminate();
}

void ServerProcess::Start() {
  // A restart keeps the port, so clients (workers) find the server where it was. Another
  // test's server listening on port 0 may have been given that port meanwhile; then the
  // restart takes a fresh one rather than failing the test for a neighbour's luck.
  std::string listen = "127.0.0.1:0";
  if (size_t colon = url_.rfind(':'); !url_.empty() && colon != std::string::npos) {
    listen = "127.0.0.1:" + url_.substr(colon + 1);
  }
  StartListening(listen);
  if (pid_ < 0 && listen != "127.0.0.1:0" && log().find("cannot listen on") != std::string::npos) {
    StartListening("127.0.0.1:0");
  }
}

void ServerProcess::StartListening(const std::string& listen) {
  const std::string creds = dir_ + "/credentials.json";
  std::vector<std::string> argv = {BatonBin(),      "server", "--listen",     listen,
                                   "--credentials", creds,    "--io-threads", "2"};
  // A server on PostgreSQL takes no SQLite file.
  if (std::find(extra_args_.begin(), extra_args_.end(), "--postgres") == extra_args_.end()) {
    argv.insert(argv.end(), {"--db", dir_ + "/baton.db"});
  }
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  ++starts_;
  const std::string log_file = dir_ + "/server-" + std::to_string(starts_) + ".log";
  pid_ = StartProcess(argv, log_file, extra_env_);
  url_.clear();
  WaitUntil([&] {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {  // died before serving (a crash point)
      pid_ = -1;
      return true;
    }
    std::string log = ReadFile(log_file);
    size_t at = log.find("baton: serving ");
    if (at == std::string::npos) return false;
    size_t end = log.find(' ', at + 15);
    url_ = log.substr(at + 15, end - at - 15);
    return true;
  });
  Json j = Json::parse(ReadFile(creds), nullptr, false);
  if (j.is_object()) token_ = j.value("token", "");
}

ProcessResult ServerProcess::Cli(std::vector<std::string> args) const {
  args.insert(args.begin(), BatonBin());
  return RunProcess(args, "", {"BATON_SERVER=" + url_, "BATON_TOKEN=" + token_});
}

std::string ServerProcess::log() const {
  return ReadFile(dir_ + "/server-" + std::to_string(starts_) + ".log");
}

void ServerProcess::Kill9() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  WaitProcess(pid_);
  pid_ = -1;
}

void ServerProcess::Signal(int signal) {
  if (pid_ > 0) kill(pid_, signal);
}

int ServerProcess::Terminate() {
  if (pid_ <= 0) return -1;
  kill(pid_, SIGTERM);
  int code = -1;
  bool exited = WaitUntil(
      [&] {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return true;
      },
      10'000);
  if (!exited) {
    kill(pid_, SIGKILL);
    code = WaitProcess(pid_);
  }
  pid_ = -1;
  return code;
}

bool ServerProcess::Exited() {
  if (pid_ <= 0) return true;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
  pid_ = -1;
  return true;
}

void ServerProcess::Restart() {
  if (pid_ > 0) Terminate();
  Start();
}

void ServerProcess::Restart(std::vector<std::string> extra_args) {
  extra_args_ = std::move(extra_args);
  Restart();
}

}  // namespace baton::testing
