// libFuzzer target: the bytes of one HTTP/1.1 request into the real server. They go
// through the parser with a connection's limits (request_reader.h), then the router,
// authentication and every handler, over a real SQLite store and engine; only the
// socket is missing.
//
// "@ADMIN@" and "@WORKER@" in an input are replaced by real tokens, so that seeds reach
// the handlers behind authentication. The server runs no shell step (--no-local-shell)
// and its http steps keep the egress guard's default (no private addresses), so no
// input acts outside the process.
//
// Findings: a crash, a sanitizer report, a 500 (a handler threw past its checks: the
// router's boundary caught it), an answer that is not the JSON it says it is, or a
// Responder called twice (std::promise throws).
#include "common/json_parse.h"
#include "server/request_reader.h"
#include "server/server.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <thread>

namespace {

using baton::Json;
using namespace baton::server;

struct Harness {
  std::unique_ptr<Server> server;
  ServerLimits limits;
  std::string admin;
  std::string worker;
  std::thread serving;
};

std::optional<HttpResponse> Ask(Server& server, HttpRequest request) {
  auto answer = std::make_shared<std::promise<HttpResponse>>();
  std::future<HttpResponse> future = answer->get_future();
  server.Handle(std::make_shared<const HttpRequest>(std::move(request)),
                [answer](HttpResponse r) { answer->set_value(std::move(r)); });
  // Long polls answer late by design; an input is not held for them.
  if (future.wait_for(std::chrono::seconds(5)) != std::future_status::ready) return std::nullopt;
  return future.get();
}

[[noreturn]] void Die(const char* what, const HttpResponse& r) {
  std::fprintf(stderr, "fuzz_http: %s: %d %s\n", what, r.status, r.body.substr(0, 500).c_str());
  std::abort();
}

Harness& Get() {
  static Harness* harness = [] {
    auto* h = new Harness;
    std::string dir =
        (std::filesystem::temp_directory_path() / ("baton-fuzz-http-" + std::to_string(::getpid())))
            .string();
    std::filesystem::create_directories(dir);
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.db_path = dir + "/baton.db";
    options.credentials_path = dir + "/credentials.json";
    options.io_threads = 1;
    options.local_shell = false;
    options.limits.rate_per_second = 0;  // the fuzzer is one fast client
    auto opened = Server::Open(options);
    if (!opened.ok()) {
      std::fprintf(stderr, "fuzz_http: %s\n", opened.status().message().c_str());
      std::abort();
    }
    h->server = std::move(*opened);
    h->limits = options.limits;
    Server* server = h->server.get();
    h->serving = std::thread([server] { server->Run(); });
    std::ifstream creds(options.credentials_path);
    h->admin = Json::parse(creds).at("token").get<std::string>();
    HttpRequest mint;
    mint.method = "POST";
    mint.path = "/api/v1/tokens";
    mint.headers["authorization"] = "Bearer " + h->admin;
    mint.body = R"({"name": "fuzz-worker", "scopes": ["worker", "read"]})";
    auto minted = Ask(*server, mint);
    if (!minted || minted->status != 201) std::abort();
    h->worker = Json::parse(minted->body).at("token").get<std::string>();
    return h;
  }();
  return *harness;
}

void ReplaceAll(std::string* s, const std::string& from, const std::string& to) {
  for (size_t at = s->find(from); at != std::string::npos; at = s->find(from, at + to.size())) {
    s->replace(at, from.size(), to);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Harness& h = Get();
  std::string bytes(reinterpret_cast<const char*>(data), size);
  ReplaceAll(&bytes, "@ADMIN@", h.admin);
  ReplaceAll(&bytes, "@WORKER@", h.worker);
  RequestFromBytes read = ReadRequestFromBytes(bytes, h.limits);
  if (read.refusal) {
    const int s = read.refusal->status;
    if (s != 400 && s != 413 && s != 431) Die("unexpected refusal", *read.refusal);
    return 0;
  }
  if (!read.request) return 0;
  std::optional<HttpResponse> answer = Ask(*h.server, std::move(*read.request));
  if (!answer) return 0;
  if (answer->status < 100 || answer->status > 599) Die("status out of range", *answer);
  if (answer->status == 500) Die("a handler failed", *answer);
  if (answer->content_type == "application/json" && !answer->body.empty()) {
    Json parsed;
    if (!baton::ParseJsonText(answer->body, &parsed, nullptr, {.max_depth = 100000})) {
      Die("not JSON", *answer);
    }
  }
  return 0;
}
