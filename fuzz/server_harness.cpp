#include "server_harness.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>

namespace baton::fuzz {

using server::HttpRequest;
using server::HttpResponse;

std::optional<HttpResponse> Ask(server::Server& server, HttpRequest request) {
  auto answer = std::make_shared<std::promise<HttpResponse>>();
  std::future<HttpResponse> future = answer->get_future();
  // A second answer would throw from set_value: a finding, as the Responder's contract
  // is "once".
  server.Handle(std::make_shared<const HttpRequest>(std::move(request)),
                [answer](HttpResponse r) { answer->set_value(std::move(r)); });
  if (future.wait_for(std::chrono::seconds(5)) != std::future_status::ready) return std::nullopt;
  return future.get();
}

namespace {
// The shared server's directory, removed when the fuzzer exits normally (a crash leaves
// it, with the database, next to the artifact). Every run used to leave one in /tmp.
std::string* server_dir = nullptr;
void RemoveServerDir() {
  std::error_code ec;
  if (server_dir) std::filesystem::remove_all(*server_dir, ec);
}
}  // namespace

FuzzServer& SharedFuzzServer(const std::string& name) {
  static FuzzServer* shared = [&name] {
    auto* h = new FuzzServer;
    const std::string dir = (std::filesystem::temp_directory_path() /
                             ("baton-" + name + "-" + std::to_string(::getpid())))
                                .string();
    std::filesystem::create_directories(dir);
    server_dir = new std::string(dir);
    std::atexit(RemoveServerDir);
    server::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.db_path = dir + "/baton.db";
    options.credentials_path = dir + "/credentials.json";
    options.local_shell = false;
    options.sync_normal = true;  // no fsync per commit: durability is not under test here
    options.limits.rate_per_second = 0;
    auto opened = server::Server::Open(options);
    if (!opened.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), opened.status().message().c_str());
      std::abort();
    }
    h->server = std::move(*opened);
    h->limits = options.limits;
    server::Server* s = h->server.get();
    h->serving = std::thread([s] { s->Run(); });
    std::ifstream creds(options.credentials_path);
    h->admin = Json::parse(creds).at("token").get<std::string>();
    HttpRequest mint;
    mint.method = "POST";
    mint.path = "/api/v1/tokens";
    mint.headers["authorization"] = "Bearer " + h->admin;
    mint.body = R"({"name": "fuzz-worker", "scopes": ["worker", "read"]})";
    std::optional<HttpResponse> minted = Ask(*s, mint);
    if (!minted || minted->status != 201) {
      std::fprintf(stderr, "%s: cannot mint a worker token\n", name.c_str());
      std::abort();
    }
    h->worker = Json::parse(minted->body).at("token").get<std::string>();
    return h;
  }();
  return *shared;
}

}  // namespace baton::fuzz
