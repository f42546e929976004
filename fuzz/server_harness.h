// The real server for the fuzz targets that drive it whole (fuzz_http, fuzz_websocket):
// opened once per process on a fresh SQLite file in a temporary directory, serving on a
// free loopback port from a thread of its own, with an admin token and a worker token.
// It runs no shell step (--no-local-shell), has no rate limit (the fuzzer is one fast
// client) and commits without fsync (--sync-normal). Never stopped: the process exits under it.
#pragma once

#include "server/server.h"

#include <memory>
#include <optional>
#include <string>
#include <thread>

namespace baton::fuzz {

struct FuzzServer {
  std::unique_ptr<server::Server> server;
  server::ServerLimits limits;
  std::string admin;   // a token with every scope
  std::string worker;  // worker and read scopes
  std::thread serving;
};

// Opens the server on the first call (aborting, with the reason, if it cannot); `name`
// names the temporary directory and the messages.
FuzzServer& SharedFuzzServer(const std::string& name);

// Hands `request` to the server's router and waits up to 5 s for its answer: nullopt
// when none came by then (a long poll answers late by design).
std::optional<server::HttpResponse> Ask(server::Server& server, server::HttpRequest request);

}  // namespace baton::fuzz
