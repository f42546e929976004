#include "support/http_receiver.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>

namespace baton::testing {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parses the head of a request ("METHOD target HTTP/1.1\r\nName: value\r\n...").
void ParseHead(const std::string& head, ReceivedRequest* r) {
  size_t line_end = head.find("\r\n");
  std::string line = head.substr(0, line_end);
  r->method = line.substr(0, line.find(' '));
  r->target = line.substr(r->method.size() + 1, line.rfind(' ') - r->method.size() - 1);
  size_t pos = line_end;
  while (pos != std::string::npos && pos < head.size()) {
    size_t next = head.find("\r\n", pos + 2);
    std::string h = head.substr(pos + 2, next == std::string::npos ? next : next - pos - 2);
    size_t colon = h.find(':');
    if (colon != std::string::npos) {
      std::string value = h.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      r->headers[Lower(h.substr(0, colon))] = value;
    }
    pos = next;
  }
}

}  // namespace

std::string ReceivedRequest::Header(const std::string& name) const {
  auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

HttpReceiver::HttpReceiver(std::deque<int> statuses) : statuses_(std::move(statuses)) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  listen(fd_, 16);
  socklen_t len = sizeof addr;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

HttpReceiver::~HttpReceiver() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  shutdown(fd_, SHUT_RDWR);
  accept_thread_.join();
  close(fd_);
  for (auto& t : connections_) t.join();
}

std::string HttpReceiver::Url(const std::string& path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + path;
}

std::vector<ReceivedRequest> HttpReceiver::requests() {
  std::lock_guard lock(mu_);
  return requests_;
}

bool HttpReceiver::WaitForRequests(size_t n, int timeout_ms) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                      [&] { return requests_.size() >= n; });
}

void HttpReceiver::AcceptLoop() {
  for (;;) {
    int c = accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    std::lock_guard lock(mu_);
    if (stopping_) {
      close(c);
      return;
    }
    connections_.emplace_back([this, c] { Serve(c); });
  }
}

void HttpReceiver::Serve(int c) {
  std::string data;
  char buf[4096];
  size_t header_end;
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = read(c, buf, sizeof buf);
    if (n <= 0) return (void)close(c);
    data.append(buf, static_cast<size_t>(n));
  }
  ReceivedRequest r;
  ParseHead(data.substr(0, header_end), &r);
  const std::string length_text = r.Header("content-length");
  const size_t length = length_text.empty() ? 0 : std::stoul(length_text);
  r.body = data.substr(header_end + 4);
  while (r.body.size() < length) {
    ssize_t n = read(c, buf, sizeof buf);
    if (n <= 0) break;
    r.body.append(buf, static_cast<size_t>(n));
  }
  int status = 200;
  {
    std::lock_guard lock(mu_);
    if (!statuses_.empty()) {
      status = statuses_.front();
      statuses_.pop_front();
    }
    requests_.push_back(r);
  }
  cv_.notify_all();
  const std::string body = "{}";
  const std::string response =
      "HTTP/1.1 " + std::to_string(status) +
      " X\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nConnection: close\r\n\r\n" + body;
  size_t sent = 0;
  while (sent < response.size()) {
    ssize_t n = send(c, response.data() + sent, response.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  shutdown(c, SHUT_WR);
  while (read(c, buf, sizeof buf) > 0) {
  }
  close(c);
}

}  // namespace baton::testing
