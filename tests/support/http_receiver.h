// A tiny HTTP/1.1 server on 127.0.0.1 for tests: records every request and answers each
// with the next scripted status (200 once the script is used up). One thread per
// connection, Connection: close.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace baton::testing {

struct ReceivedRequest {
  std::string method, target, body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string Header(const std::string& name) const;
};

class HttpReceiver {
 public:
  explicit HttpReceiver(std::deque<int> statuses = {});
  ~HttpReceiver();
  HttpReceiver(const HttpReceiver&) = delete;
  HttpReceiver& operator=(const HttpReceiver&) = delete;

  int port() const { return port_; }
  std::string Url(const std::string& path) const;
  std::vector<ReceivedRequest> requests();
  // Waits (bounded) until `n` requests arrived; false on timeout.
  bool WaitForRequests(size_t n, int timeout_ms = 20'000);

 private:
  void AcceptLoop();
  void Serve(int fd);

  int fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::deque<int> statuses_;
  std::vector<std::thread> connections_;
  std::vector<ReceivedRequest> requests_;
};

}  // namespace baton::testing
