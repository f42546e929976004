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
#include "server_harness.h"

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

[[noreturn]] void Die(const char* what, const HttpResponse& r) {
  std::fprintf(stderr, "fuzz_http: %s: %d %s\n", what, r.status, r.body.substr(0, 500).c_str());
  std::abort();
}

void ReplaceAll(std::string* s, const std::string& from, const std::string& to) {
  for (size_t at = s->find(from); at != std::string::npos; at = s->find(from, at + to.size())) {
    s->replace(at, from.size(), to);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  baton::fuzz::FuzzServer& h = baton::fuzz::SharedFuzzServer("fuzz-http");
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
  std::optional<HttpResponse> answer = baton::fuzz::Ask(*h.server, std::move(*read.request));
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
