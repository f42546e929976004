// For the worker's tests: commands, handler scripts in a temporary directory, and the
// callbacks of one HandlerRunner::Start collected for a test to wait on.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "worker/handler_runner.h"

namespace baton::worker::testing {

inline constexpr std::chrono::seconds kWait{60};

// A command of execution exec-1, step step-1 (index 2), attempt 3.
inline protocol::Command MakeCommand(std::string command, Json data = nullptr,
                                     std::string assignment_id = "asg-1") {
  protocol::Command c;
  c.message_id = "msg-1";
  c.assignment_id = std::move(assignment_id);
  c.command = std::move(command);
  c.data = std::move(data);
  c.execution = {"exec-1", "step-1", 2, 3};
  c.metadata = {"exec-1/step-1/3", "normal"};
  return c;
}

// A fresh directory, removed with the object.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "baton-worker-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  const std::string& path() const { return path_; }

  // An executable /bin/sh script with `body`; returns its path.
  std::string Script(const std::string& name, const std::string& body) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << "#!/bin/sh\n" << body << "\n";
    chmod(file.c_str(), 0755);
    return file;
  }

 private:
  std::string path_;
};

class Recorder {
 public:
  HandlerCallbacks Callbacks() {
    HandlerCallbacks cb;
    cb.on_progress = [this](protocol::CommandProgress p) {
      std::lock_guard lock(mu_);
      progress_.push_back(std::move(p));
      progress_after_done_ |= done_count_ > 0;
      threads_.push_back(std::this_thread::get_id());
      cv_.notify_all();
    };
    cb.on_done = [this](protocol::CommandResult r) {
      std::lock_guard lock(mu_);
      ++done_count_;
      result_ = std::move(r);
      threads_.push_back(std::this_thread::get_id());
      cv_.notify_all();
    };
    return cb;
  }
  protocol::CommandResult Wait() {
    std::unique_lock lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, kWait, [&] { return done_count_ > 0; })) << "no on_done";
    return result_;
  }
  // Waits for `n` progress reports; returns them (or what came).
  std::vector<protocol::CommandProgress> WaitProgress(size_t n) {
    std::unique_lock lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, kWait, [&] { return progress_.size() >= n; }))
        << "only " << progress_.size() << " progress reports";
    return progress_;
  }
  std::vector<protocol::CommandProgress> progress() {
    std::lock_guard lock(mu_);
    return progress_;
  }
  int done_count() {
    std::lock_guard lock(mu_);
    return done_count_;
  }
  bool progress_after_done() {
    std::lock_guard lock(mu_);
    return progress_after_done_;
  }
  // The threads the callbacks ran on, in order.
  std::vector<std::thread::id> threads() {
    std::lock_guard lock(mu_);
    return threads_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<protocol::CommandProgress> progress_;
  bool progress_after_done_ = false;
  int done_count_ = 0;
  protocol::CommandResult result_;
  std::vector<std::thread::id> threads_;
};

// Runs one command to its result.
inline protocol::CommandResult RunCommand(HandlerRunner& runner, const protocol::Command& c,
                                          Recorder* recorder = nullptr) {
  Recorder own;
  Recorder& r = recorder ? *recorder : own;
  runner.Start(c, r.Callbacks());
  protocol::CommandResult result = r.Wait();
  EXPECT_EQ(r.done_count(), 1);
  return result;
}

}  // namespace baton::worker::testing
