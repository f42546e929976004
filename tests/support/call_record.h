// For runner tests: a request, and the callbacks of one Runner::Start collected for a
// test to wait on.
#pragma once

#include <baton/runner.h>

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <utility>

namespace baton::testing {

// A request of execution e1, step s1.
inline RunRequest StepRequest(StepType type, Json spec, std::string assignment_id = "a1") {
  RunRequest r;
  r.execution_id = "e1";
  r.step_id = "s1";
  r.assignment_id = std::move(assignment_id);
  r.type = type;
  r.spec = MakeSpec(std::move(spec));
  return r;
}

class CallRecord {
 public:
  // `wait`: how long Wait() and WaitStarted() wait before they give up.
  explicit CallRecord(std::chrono::seconds wait = std::chrono::seconds(60)) : wait_(wait) {}

  RunCallbacks Callbacks() {
    RunFunctions cb;
    cb.on_started = [this] {
      std::lock_guard lock(mu_);
      started_ = true;
      started_before_done_ = done_count_ == 0;
      cv_.notify_all();
    };
    cb.on_done = [this](RunResult r) {
      std::lock_guard lock(mu_);
      ++done_count_;
      result_ = std::move(r);
      cv_.notify_all();
    };
    return cb;
  }
  RunResult Wait() {
    std::unique_lock lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, wait_, [&] { return done_count_ > 0; })) << "no on_done";
    return result_;
  }
  bool WaitStarted() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, wait_, [&] { return started_; });
  }
  int done_count() {
    std::lock_guard lock(mu_);
    return done_count_;
  }
  // on_started came, and before on_done.
  bool started() {
    std::lock_guard lock(mu_);
    return started_ && started_before_done_;
  }

 private:
  const std::chrono::seconds wait_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool started_ = false;
  bool started_before_done_ = false;
  int done_count_ = 0;
  RunResult result_;
};

}  // namespace baton::testing
