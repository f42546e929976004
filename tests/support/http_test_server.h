// A tiny HTTP/1.1 server on loopback for the http runner's tests (plain POSIX sockets,
// one thread per connection, an ephemeral port): each test gives it a handler that maps
// a request to the raw response text. A connection factory can put another byte stream
// (TLS) over the accepted socket.
#pragma once

#include <baton/runner.h>

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runners/http_runner.h"
#include "support/call_record.h"

namespace baton::testing {

inline constexpr std::chrono::seconds kHttpWait{30};

struct Received {
  std::string method, target, body;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string Header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "<none>" : it->second;
  }
};

inline std::string Response(int status, const std::string& body,
                            std::vector<std::pair<std::string, std::string>> headers = {}) {
  std::string out = "HTTP/1.1 " + std::to_string(status) + " X\r\n";
  for (const auto& [k, v] : headers) out += k + ": " + v + "\r\n";
  out += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  return out + body;
}

// One accepted connection's byte stream. The socket itself is closed by the server.
class ServerConn {
 public:
  virtual ~ServerConn() = default;
  virtual long Read(char* buf, size_t n) = 0;  // <= 0: closed or failed
  virtual long Write(const char* buf, size_t n) = 0;
  // After the response, before the server half-closes the socket (TLS: close_notify).
  virtual void EndResponse() {}
};

class PlainConn : public ServerConn {
 public:
  explicit PlainConn(int fd) : fd_(fd) {}
  long Read(char* buf, size_t n) override { return read(fd_, buf, n); }
  long Write(const char* buf, size_t n) override { return send(fd_, buf, n, MSG_NOSIGNAL); }

 private:
  int fd_;
};

class TestServer {
 public:
  // The handler returns the raw response; "" means close without answering. `Hang()`
  // inside a handler blocks until the server is destroyed.
  using Handler = std::function<std::string(const Received&)>;
  // Makes the byte stream of an accepted socket; nullptr drops the connection.
  using ConnFactory = std::function<std::unique_ptr<ServerConn>(int fd)>;

  explicit TestServer(Handler handler, ConnFactory factory = nullptr)
      : handler_(std::move(handler)), factory_(std::move(factory)) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof addr;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }
  ~TestServer() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    shutdown(fd_, SHUT_RDWR);
    accept_thread_.join();
    close(fd_);
    for (auto& t : connections_) t.join();
  }

  int port() const { return port_; }
  std::string Url(const std::string& path, const std::string& scheme = "http") const {
    return scheme + "://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<Received> requests() {
    std::lock_guard lock(mu_);
    return requests_;
  }
  void Hang() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return stopping_; });
  }

 private:
  void AcceptLoop() {
    for (;;) {
      int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      std::lock_guard lock(mu_);
      if (stopping_) {
        close(c);
        return;
      }
      connections_.emplace_back([this, c] {
        std::unique_ptr<ServerConn> conn = factory_ ? factory_(c) : std::make_unique<PlainConn>(c);
        if (conn) Serve(*conn, c);
        conn.reset();
        close(c);
      });
    }
  }

  void Serve(ServerConn& conn, int c) {
    std::string data;
    char buf[4096];
    size_t header_end;
    while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
      long n = conn.Read(buf, sizeof buf);
      if (n <= 0) return;
      data.append(buf, static_cast<size_t>(n));
    }
    Received r;
    std::string head = data.substr(0, header_end);
    size_t line_end = head.find("\r\n");
    std::string line = head.substr(0, line_end);
    r.method = line.substr(0, line.find(' '));
    r.target = line.substr(r.method.size() + 1, line.rfind(' ') - r.method.size() - 1);
    size_t pos = line_end;
    while (pos != std::string::npos && pos < head.size()) {
      size_t next = head.find("\r\n", pos + 2);
      std::string h =
          head.substr(pos + 2, next == std::string::npos ? std::string::npos : next - pos - 2);
      size_t colon = h.find(':');
      if (colon != std::string::npos) {
        std::string value = h.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        std::string name = h.substr(0, colon);
        for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        r.headers[name] = value;
      }
      pos = next;
    }
    size_t length = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    r.body = data.substr(header_end + 4);
    while (r.body.size() < length) {
      long n = conn.Read(buf, sizeof buf);
      if (n <= 0) break;
      r.body.append(buf, static_cast<size_t>(n));
    }
    {
      std::lock_guard lock(mu_);
      requests_.push_back(r);
    }
    std::string response = handler_(r);
    size_t sent = 0;
    while (sent < response.size()) {
      long n = conn.Write(response.data() + sent, response.size() - sent);
      if (n <= 0) break;
      sent += static_cast<size_t>(n);
    }
    conn.EndResponse();
    shutdown(c, SHUT_WR);
    while (read(c, buf, sizeof buf) > 0) {
    }
  }

  Handler handler_;
  ConnFactory factory_;
  int fd_ = -1;
  int port_ = 0;
  std::thread accept_thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::vector<std::thread> connections_;
  std::vector<Received> requests_;
};

inline RunRequest HttpRequest(Json spec, std::string id = "a1") {
  return StepRequest(StepType::kHttp, std::move(spec), std::move(id));
}

// Options whose egress guard lets loopback through, as the test servers are there.
inline HttpRunnerOptions LoopbackAllowed() {
  HttpRunnerOptions options;
  options.allow = *runners::ParseCidrList("127.0.0.0/8,::1/128");
  return options;
}

// Starts one request on `runner` and waits for its result (on_done exactly once).
inline RunResult RunHttp(Runner& runner, Json spec) {
  CallRecord call(kHttpWait);
  runner.Start(HttpRequest(std::move(spec)), call.Callbacks());
  RunResult r = call.Wait();
  EXPECT_EQ(call.done_count(), 1);
  return r;
}

}  // namespace baton::testing
