// Signal handling for long-running commands (run, server): SIGINT and SIGTERM are
// taken by a dedicated thread through sigwait, never by an async handler.
#pragma once

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

namespace baton::cli {

// Ctrl-C and SIGTERM become a clean cancel; the next one exits at once. The signals are
// blocked in every thread (set before any thread starts) and taken by sigwait here.
class SignalCatcher {
 public:
  // The first `handled` signals go to on_signal; the next one exits at once.
  explicit SignalCatcher(std::function<void(int)> on_signal, int handled = 1)
      : on_signal_(std::move(on_signal)), handled_(handled) {
    thread_ = std::thread([this] {
      sigset_t set = Set();
      int count = 0;
      for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0) continue;
        if (sig == SIGUSR2) return;
        if (++count > handled_) {
          std::fprintf(stderr, "\nbaton: interrupted again, exiting now\n");
          std::_Exit(130);
        }
        on_signal_(sig);
      }
    });
  }
  ~SignalCatcher() {
    pthread_kill(thread_.native_handle(), SIGUSR2);
    thread_.join();
  }
  static sigset_t Set() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGUSR2);
    return set;
  }
  static void BlockInThisAndFutureThreads() {
    sigset_t set = Set();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
  }

 private:
  std::function<void(int)> on_signal_;
  int handled_;
  std::thread thread_;
};

}  // namespace baton::cli
