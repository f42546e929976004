// For the Agent's tests: the server's end of in-memory connections. The test reads what
// the worker sent, pushes server messages, drops connections and makes connects fail.
// Every wait is bounded (kWait) and wakes on a condition variable.
#pragma once

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "worker/connection.h"
#include "worker/worker_test_util.h"

namespace baton::worker::testing {

class FakeServer {
 public:
  // One connection: what each side sent, and whether it is closed.
  struct Pipe {
    std::vector<protocol::WorkerMessage> from_worker;
    std::vector<size_t> frames;  // how many of from_worker each frame carried, in order
    std::deque<protocol::ServerMessage> to_worker;
    bool dropped = false;  // by the server
    bool closed = false;   // by the worker
    bool interrupted = false;
  };

  // The worker's connector.
  Connector connector() {
    return [this]() -> Result<std::unique_ptr<Connection>> {
      std::lock_guard lock(mu_);
      ++connects_;
      cv_.notify_all();
      if (!refusal_.ok()) return refusal_;
      if (failures_ > 0) {
        --failures_;
        return Status(errc::kIo, "connection refused (test)");
      }
      pipes_.push_back(std::make_shared<Pipe>());
      return std::unique_ptr<Connection>(new Conn(this, pipes_.back()));
    };
  }

  // The next `n` connects fail (retryable).
  void FailConnects(int n) {
    std::lock_guard lock(mu_);
    failures_ = n;
  }
  // Every connect is refused with `status`.
  void Refuse(Status status) {
    std::lock_guard lock(mu_);
    refusal_ = std::move(status);
  }
  int connects() {
    std::lock_guard lock(mu_);
    return connects_;
  }

  // Waits for the `n`-th message of type M (0 = the first) the worker sent on connection
  // `conn` (0 = the first connection).
  template <class M>
  M Wait(size_t conn, size_t n = 0) {
    std::unique_lock lock(mu_);
    std::optional<M> found;
    bool ok = cv_.wait_for(lock, kWait, [&] {
      found = Nth<M>(conn, n);
      return found.has_value();
    });
    EXPECT_TRUE(ok) << "connection " << conn << ": no " << M::kType << " #" << n;
    return found.value_or(M{});
  }
  // The messages of type M sent on connection `conn` so far.
  template <class M>
  std::vector<M> All(size_t conn) {
    std::lock_guard lock(mu_);
    std::vector<M> out;
    if (conn >= pipes_.size()) return out;
    for (const auto& m : pipes_[conn]->from_worker) {
      if (auto* v = std::get_if<M>(&m)) out.push_back(*v);
    }
    return out;
  }
  // Every message sent on connection `conn` so far.
  std::vector<protocol::WorkerMessage> Sent(size_t conn) {
    std::lock_guard lock(mu_);
    return conn < pipes_.size() ? pipes_[conn]->from_worker
                                : std::vector<protocol::WorkerMessage>{};
  }

  // The sizes of the frames sent on connection `conn` so far (a batch frame: its count).
  std::vector<size_t> Frames(size_t conn) {
    std::lock_guard lock(mu_);
    return conn < pipes_.size() ? pipes_[conn]->frames : std::vector<size_t>{};
  }

  // Waits for `register` on connection `conn` and answers `registered`; `batching`: the
  // server reads batch frames.
  protocol::Register Accept(size_t conn, int64_t heartbeat_interval_ms = 600000,
                            bool batching = false) {
    protocol::Register r = Wait<protocol::Register>(conn);
    protocol::Registered registered{r.worker_id, heartbeat_interval_ms, 2 * heartbeat_interval_ms};
    registered.batching = batching;
    Push(conn, registered);
    return r;
  }

  void Push(size_t conn, protocol::ServerMessage m) { PushAll(conn, {std::move(m)}); }
  // Several at once: the worker finds them all waiting, as the messages of one frame.
  void PushAll(size_t conn, std::vector<protocol::ServerMessage> messages) {
    std::lock_guard lock(mu_);
    if (conn < pipes_.size()) {
      for (auto& m : messages) pipes_[conn]->to_worker.push_back(std::move(m));
    }
    cv_.notify_all();
  }
  // The server drops connection `conn`.
  void Drop(size_t conn) {
    std::lock_guard lock(mu_);
    if (conn < pipes_.size()) pipes_[conn]->dropped = true;
    cv_.notify_all();
  }
  // Waits until the worker closed connection `conn`.
  bool WaitClosed(size_t conn) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kWait, [&] { return conn < pipes_.size() && pipes_[conn]->closed; });
  }

 private:
  class Conn : public Connection {
   public:
    Conn(FakeServer* server, std::shared_ptr<Pipe> pipe) : s_(server), p_(std::move(pipe)) {}
    Status Send(const protocol::WorkerMessage& m) override {
      std::lock_guard lock(s_->mu_);
      if (p_->dropped || p_->closed) return Status(errc::kIo, "connection lost (test)");
      p_->from_worker.push_back(m);
      p_->frames.push_back(1);
      s_->cv_.notify_all();
      return Status::Ok();
    }
    Status SendBatch(const std::vector<protocol::WorkerMessage>& messages) override {
      std::lock_guard lock(s_->mu_);
      if (p_->dropped || p_->closed) return Status(errc::kIo, "connection lost (test)");
      p_->from_worker.insert(p_->from_worker.end(), messages.begin(), messages.end());
      p_->frames.push_back(messages.size());
      s_->cv_.notify_all();
      return Status::Ok();
    }
    Result<std::optional<protocol::ServerMessage>> Receive(Duration timeout) override {
      std::unique_lock lock(s_->mu_);
      s_->cv_.wait_for(lock, timeout, [&] {
        return p_->interrupted || p_->dropped || p_->closed || !p_->to_worker.empty();
      });
      if (p_->dropped || p_->closed) return Status(errc::kIo, "connection lost (test)");
      if (std::exchange(p_->interrupted, false) || p_->to_worker.empty()) {
        return std::optional<protocol::ServerMessage>();
      }
      protocol::ServerMessage m = std::move(p_->to_worker.front());
      p_->to_worker.pop_front();
      return std::optional<protocol::ServerMessage>(std::move(m));
    }
    void Interrupt() override {
      std::lock_guard lock(s_->mu_);
      p_->interrupted = true;
      s_->cv_.notify_all();
    }
    void Close() override {
      std::lock_guard lock(s_->mu_);
      p_->closed = true;
      s_->cv_.notify_all();
    }

   private:
    FakeServer* s_;
    std::shared_ptr<Pipe> p_;
  };

  // mu_ held.
  template <class M>
  std::optional<M> Nth(size_t conn, size_t n) const {
    if (conn >= pipes_.size()) return std::nullopt;
    for (const auto& m : pipes_[conn]->from_worker) {
      auto* v = std::get_if<M>(&m);
      if (v && n-- == 0) return *v;
    }
    return std::nullopt;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::shared_ptr<Pipe>> pipes_;
  int failures_ = 0;
  int connects_ = 0;
  Status refusal_;
};

// The agent's log lines, for a test to wait on.
class LogRecorder {
 public:
  std::function<void(const std::string&)> Sink() {
    return [this](const std::string& line) {
      std::lock_guard lock(mu_);
      lines_.push_back(line);
      cv_.notify_all();
    };
  }
  // Waits until `count` lines contain `text`.
  bool WaitFor(const std::string& text, size_t count = 1) {
    std::unique_lock lock(mu_);
    bool ok = cv_.wait_for(lock, kWait, [&] { return Count(text) >= count; });
    EXPECT_TRUE(ok) << "no log line '" << text << "' (x" << count << ") in:\n" << Joined();
    return ok;
  }
  size_t CountOf(const std::string& text) {
    std::lock_guard lock(mu_);
    return Count(text);
  }

 private:
  size_t Count(const std::string& text) const {
    size_t n = 0;
    for (const auto& l : lines_) n += l.find(text) != std::string::npos;
    return n;
  }
  std::string Joined() const {
    std::string out;
    for (const auto& l : lines_) out += l + "\n";
    return out;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;
};

}  // namespace baton::worker::testing
