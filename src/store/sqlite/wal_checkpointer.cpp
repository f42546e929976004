#include "store/sqlite/wal_checkpointer.h"

#include "common/thread_name.h"

#include <pthread.h>

#include <csignal>

namespace baton::sqlite {

WalCheckpointer::WalCheckpointer(const std::string& path, sqlite3* writer, std::mutex& writer_mu,
                                 int busy_timeout_ms)
    : writer_(writer), writer_mu_(writer_mu) {
  sqlite3* raw = nullptr;
  if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) !=
      SQLITE_OK) {
    sqlite3_close_v2(raw);
    return;  // the writer keeps checkpointing inside its commits
  }
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  // A connection that has not read the file yet does not know it is in WAL mode, and its
  // checkpoints would do nothing (and say SQLITE_OK).
  if (sqlite3_exec(raw, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr) != SQLITE_OK) {
    sqlite3_close_v2(raw);
    return;
  }
  db_ = raw;
  // Replaces the automatic checkpoint's own hook (sqlite3_wal_autocheckpoint installs
  // one with this same call), so the writer's commits no longer checkpoint.
  sqlite3_wal_hook(writer_, &WalCheckpointer::OnCommit, this);
  // The thread takes no signal: a process-directed SIGINT must reach the thread the
  // program chose (the CLI's sigwait), and the store may be opened before the program
  // blocks signals in its threads. A new thread inherits the mask it is created with.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &previous);
  thread_ = std::thread([this] { Run(); });
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

WalCheckpointer::~WalCheckpointer() {
  if (db_ == nullptr) return;
  sqlite3_wal_hook(writer_, nullptr, nullptr);
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  thread_.join();
  sqlite3_close_v2(db_);
}

int64_t WalCheckpointer::background_checkpoints() const {
  std::lock_guard lock(mu_);
  return background_;
}

int64_t WalCheckpointer::inline_checkpoints() const {
  std::lock_guard lock(mu_);
  return inline_;
}

bool WalCheckpointer::WaitForBackgroundCheckpoints(int64_t count,
                                                   std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return done_.wait_for(lock, timeout, [&] { return background_ >= count; });
}

int WalCheckpointer::OnCommit(void* self, sqlite3* db, const char* name, int pages) {
  auto* c = static_cast<WalCheckpointer*>(self);
  if (pages >= kInlinePages) {
    // As SQLite's own hook does; a failure here leaves the WAL to the next attempt and
    // does not fail the commit, which is already durable.
    if (sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr) ==
        SQLITE_OK) {
      std::lock_guard lock(c->mu_);
      ++c->inline_;
    }
    return SQLITE_OK;
  }
  if (pages >= kWakePages) {
    bool was_pending;
    {
      std::lock_guard lock(c->mu_);
      was_pending = c->pending_;
      c->pending_ = true;
    }
    if (!was_pending) c->wake_.notify_one();
  }
  return SQLITE_OK;
}

void WalCheckpointer::Run() {
  SetThreadName("baton-ckpt");
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return pending_ || stop_; });
    if (stop_) return;
    pending_ = false;
    lock.unlock();
    // PASSIVE copies what it can without waiting for the writer or the readers: the
    // frames committed when it started. Then the frames committed meanwhile (a few
    // commits' worth, often none), with the writer held off so that no more come, after
    // which the next commit can restart the WAL. A frame a reader still needs stays for
    // a later checkpoint (the writer wakes us again while the WAL is past kWakePages).
    int rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    if (rc == SQLITE_OK) {
      std::lock_guard writer(writer_mu_);
      rc = sqlite3_wal_checkpoint_v2(db_, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    }
    lock.lock();
    if (rc == SQLITE_OK) {
      ++background_;
      done_.notify_all();
    }
  }
}

}  // namespace baton::sqlite
