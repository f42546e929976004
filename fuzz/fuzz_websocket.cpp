// libFuzzer target: WebSocket frames from a client into the real server's two WebSocket
// endpoints, the workers' connection and the live feed. Each input is one connection
// on loopback: a well-formed upgrade, then the frames the input describes (valid or
// not: bad opcodes, reserved bits, unmasked, fragments, garbage), then a close.
//
// Input: the first byte picks the endpoint (even: /api/v1/workers/connect with a worker
// token, odd: /api/v1/events). Then records of [header][length: 2 bytes LE][payload]:
// header bits 0-3 are the opcode, bit 4 clears FIN (a fragment), bit 5 sets RSV1,
// bit 6 sends the frame unmasked, bit 7 sends the payload as raw bytes, unframed.
// Payloads are masked with a zero key, so seeds stay readable.
//
// Findings: a crash or sanitizer report in the server (it runs in this process), or a
// server that no longer completes the next connection's handshake (a stuck I/O thread).
#include "server/server.h"
#include "server_harness.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <thread>

namespace {

using baton::Json;
using namespace baton::server;

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "fuzz_websocket: %s\n", what.c_str());
  std::abort();
}

// How many descriptors the process has open: server sessions that never end show here.
std::string OpenFds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return " (" + std::to_string(n) + " descriptors open)";
}

class Connection {
 public:
  explicit Connection(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    if (fd_ < 0) Die(std::string("socket(): ") + std::strerror(errno) + OpenFds());
    // libFuzzer's timers interrupt system calls (SIGALRM): every call here retries on
    // EINTR, and an interrupted connect completes in the background.
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 &&
        !(errno == EINTR && Connected())) {
      Die(std::string("cannot connect: ") + std::strerror(errno) + OpenFds());
    }
    // For the handshake: a server that takes this long to answer one is stuck. (Under
    // load, answers past 5 s were seen twice; they are reported below, not failed, until
    // their cause is known: see issue 11's note.)
    Wait(30);
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~Connection() { close(fd_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // False once the server has closed its side (a write then fails: not a finding).
  bool Send(const std::string& bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  // Reads until the headers' end; on a timeout or close, what was read and why it stopped.
  std::string ReadHead() {
    std::string head;
    char c;
    ssize_t got = 0;
    while (head.size() < 16384 && (got = Recv(&c, 1)) == 1) {
      head += c;
      if (head.ends_with("\r\n\r\n")) return head;
    }
    return head +
           (got == 0 ? "[closed by the server]" : "[" + std::string(std::strerror(errno)) + "]");
  }
  void Wait(int seconds) {
    timeval tv{seconds, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  }
  // Reads and drops until the server closes or goes quiet for 2 s.
  void Drain() {
    Wait(2);
    char buf[16384];
    while (Recv(buf, sizeof buf) > 0) {
    }
  }
  void ShutdownWrite() { shutdown(fd_, SHUT_WR); }

 private:
  ssize_t Recv(char* buf, size_t size) {
    ssize_t n;
    while ((n = recv(fd_, buf, size, 0)) < 0 && errno == EINTR) {
    }
    return n;
  }
  // After an interrupted connect: waits for it to finish; false (errno set) on failure.
  bool Connected() {
    pollfd p{fd_, POLLOUT, 0};
    int ready;
    while ((ready = poll(&p, 1, 30000)) < 0 && errno == EINTR) {
    }
    if (ready != 1) {
      errno = ready == 0 ? ETIMEDOUT : errno;
      return false;
    }
    int error = 0;
    socklen_t len = sizeof error;
    getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &len);
    errno = error;
    return error == 0;
  }
  int fd_ = -1;
};

std::string Frame(uint8_t header, std::string_view payload) {
  std::string out;
  uint8_t b0 = header & 0x0f;
  if ((header & 0x10) == 0) b0 |= 0x80;  // FIN
  if (header & 0x20) b0 |= 0x40;         // RSV1
  out += static_cast<char>(b0);
  const uint8_t mask = (header & 0x40) ? 0 : 0x80;
  if (payload.size() < 126) {
    out += static_cast<char>(mask | payload.size());
  } else {
    out += static_cast<char>(mask | 126);
    out += static_cast<char>(payload.size() >> 8);
    out += static_cast<char>(payload.size() & 0xff);
  }
  if (mask) out.append(4, '\0');  // a zero key: the payload goes as it is
  out.append(payload);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  baton::fuzz::FuzzServer& h = baton::fuzz::SharedFuzzServer("fuzz-websocket");
  if (size == 0) return 0;
  const bool workers = (data[0] & 1) == 0;
  Connection conn(h.server->port());
  std::string upgrade =
      std::string("GET ") + (workers ? "/api/v1/workers/connect" : "/api/v1/events?after=0") +
      " HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
      "Authorization: Bearer " +
      (workers ? h.worker : h.admin) + "\r\n\r\n";
  if (!conn.Send(upgrade)) Die("cannot send the upgrade");
  const auto asked = std::chrono::steady_clock::now();
  const std::string head = conn.ReadHead();
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - asked)
                          .count();
  if (waited > 5000)
    std::fprintf(stderr, "fuzz_websocket: slow handshake: %lld ms\n",
                 static_cast<long long>(waited));
  if (!head.starts_with("HTTP/1.1 101")) {
    Die("the server did not complete a well-formed handshake after " + std::to_string(waited) +
        " ms: " + head.substr(0, 200) + OpenFds());
  }
  std::string frames;
  size_t at = 1;
  while (at + 3 <= size) {
    const uint8_t header = data[at];
    const size_t len = std::min<size_t>(data[at + 1] | (data[at + 2] << 8), size - at - 3);
    std::string_view payload(reinterpret_cast<const char*>(data + at + 3), len);
    at += 3 + len;
    frames += (header & 0x80) ? std::string(payload) : Frame(header, payload);
  }
  frames += Frame(0x08, std::string("\x03\xe8", 2));  // close, 1000
  // One write: small writes one after another wait on the peer's delayed ACKs.
  (void)conn.Send(frames);
  conn.ShutdownWrite();
  conn.Drain();
  return 0;
}
