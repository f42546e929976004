// The I/O pool: connections go to each thread in turn, and everything posted to one
// context runs on that context's one thread.
#include "server/io_pool.h"

#include <gtest/gtest.h>
#include <boost/asio/post.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace baton::server {
namespace {

namespace net = boost::asio;

TEST(IoPool, HandsOutEachContextInTurn) {
  IoPool pool(3);
  net::io_context* a = &pool.next();
  net::io_context* b = &pool.next();
  net::io_context* c = &pool.next();
  EXPECT_NE(a, b);
  EXPECT_NE(b, c);
  EXPECT_NE(a, c);
  EXPECT_EQ(&pool.next(), a);
  EXPECT_EQ(&pool.first(), a);
}

TEST(IoPool, OneThreadPerContextUntilStopped) {
  IoPool pool(2);
  net::io_context& first = pool.next();
  net::io_context& second = pool.next();
  std::mutex mu;
  std::set<std::thread::id> on_first, on_second;
  std::atomic<int> ran{0};
  constexpr int kPosts = 200;
  std::thread runner([&] { pool.Run(); });  // returns only after Stop(), even when idle
  const std::thread::id runner_id = runner.get_id();
  // Posted from two outside threads at once, as the engine and the feed do.
  std::vector<std::thread> posters;
  for (int p = 0; p < 2; ++p) {
    posters.emplace_back([&] {
      for (int i = 0; i < kPosts; ++i) {
        net::post(first, [&] {
          std::lock_guard lock(mu);
          on_first.insert(std::this_thread::get_id());
          ++ran;
        });
        net::post(second, [&] {
          std::lock_guard lock(mu);
          on_second.insert(std::this_thread::get_id());
          ++ran;
        });
      }
    });
  }
  for (auto& t : posters) t.join();
  while (ran.load() < 4 * kPosts) std::this_thread::yield();
  pool.Stop();
  runner.join();
  ASSERT_EQ(on_first.size(), 1u);
  ASSERT_EQ(on_second.size(), 1u);
  EXPECT_NE(*on_first.begin(), *on_second.begin());
  EXPECT_EQ(*on_first.begin(), runner_id);  // the first context runs on Run()'s caller
}

}  // namespace
}  // namespace baton::server
