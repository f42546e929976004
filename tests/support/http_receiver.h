// A receiver for notification tests: the shared test server (http_test_server.h) answering
// each request with the next scripted status (200 once the script is used up).
#pragma once

#include "support/http_test_server.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace baton::testing {

class HttpReceiver {
 public:
  explicit HttpReceiver(std::deque<int> statuses = {})
      : statuses_(std::move(statuses)), server_([this](const Received&) { return Answer(); }) {}

  std::string Url(const std::string& path) const { return server_.Url(path); }
  std::vector<Received> requests() { return server_.requests(); }
  // Waits (bounded) until `n` requests were answered; false on timeout.
  bool WaitForRequests(size_t n, int timeout_ms = 20'000) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                        [&] { return answered_ >= n; });
  }

 private:
  std::string Answer() {
    int status = 200;
    {
      std::lock_guard lock(mu_);
      if (!statuses_.empty()) {
        status = statuses_.front();
        statuses_.pop_front();
      }
      ++answered_;
    }
    cv_.notify_all();
    return Response(status, "{}", {{"Content-Type", "application/json"}});
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<int> statuses_;
  size_t answered_ = 0;
  TestServer server_;  // last: its threads stop before the members above go
};

}  // namespace baton::testing
