// The I/O threads of the server: one io_context per thread, each run by its own thread.
//
// A connection lives on one context for its whole life (the listener hands each accepted
// socket the next context in turn), so all of its handlers run on one thread. With one
// io_context shared by several threads, a request's read, parse and answer handlers moved
// between the threads: two threads woke each other five or six times per request (perf
// sched showed the pairs, ~10 us each), and the request waited for every one of those
// wake-ups. Work posted from other threads (the engine's answers, the live feed) wakes
// only the thread that owns the connection.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

namespace baton::server {

class IoPool {
 public:
  // `threads`: at least one. A nonzero `slice`: each thread asks for time slices that
  // short (common/thread_slice.h), to get a core as soon as a request wakes it.
  explicit IoPool(int threads, std::chrono::microseconds slice = {});
  IoPool(const IoPool&) = delete;
  IoPool& operator=(const IoPool&) = delete;

  // The first context: the acceptor and server-wide timers live here.
  boost::asio::io_context& first() { return *contexts_.front(); }
  // The context for a new connection: each in turn. Thread-safe.
  boost::asio::io_context& next();

  // Runs every context, the first on the calling thread, and returns when Stop() was
  // called and all of them have returned.
  void Run();
  // Makes Run() return: pending handlers are dropped. Thread-safe.
  void Stop();

 private:
  using Guard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;
  std::vector<std::unique_ptr<boost::asio::io_context>> contexts_;
  std::vector<Guard> guards_;  // a context with no connection yet must keep running
  std::atomic<size_t> next_{0};
  std::chrono::microseconds slice_;
};

}  // namespace baton::server
