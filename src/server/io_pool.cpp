#include "server/io_pool.h"

#include "common/thread_name.h"
#include "common/thread_slice.h"

#include <algorithm>
#include <thread>

namespace baton::server {

namespace net = boost::asio;

IoPool::IoPool(int threads, std::chrono::microseconds slice) : slice_(slice) {
  const int n = std::max(1, threads);
  for (int i = 0; i < n; ++i) {
    // Concurrency hint 1: one thread runs each context, so its scheduler never hands work
    // to another thread (posting from other threads stays safe).
    contexts_.push_back(std::make_unique<net::io_context>(1));
    guards_.push_back(net::make_work_guard(*contexts_.back()));
  }
}

net::io_context& IoPool::next() {
  return *contexts_[next_.fetch_add(1, std::memory_order_relaxed) % contexts_.size()];
}

void IoPool::Run() {
  std::vector<std::thread> threads;
  for (size_t i = 1; i < contexts_.size(); ++i) {
    threads.emplace_back([this, i] {
      SetThreadName("baton-io");
      RequestShortSlices(slice_);
      contexts_[i]->run();
    });
  }
  RequestShortSlices(slice_);
  contexts_.front()->run();
  for (auto& t : threads) t.join();
}

void IoPool::Stop() {
  for (auto& c : contexts_) c->stop();
}

}  // namespace baton::server
