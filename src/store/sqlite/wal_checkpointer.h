// WalCheckpointer: copies the WAL back into the database file on a thread of its own.
//
// SQLite's default checkpoints inside the commit that pushes the WAL past 1,000 pages:
// that commit also writes every page of the WAL into the database file and fsyncs it,
// so one commit in ~70 (on the engine's writes) takes several times as long, and every
// batch queued behind it waits too. Here the writer's automatic checkpoint is off and
// its WAL hook only wakes this thread, which checkpoints PASSIVE on its own connection:
// WAL mode lets that run while the writer goes on appending (the checkpointer takes no
// write lock and skips frames committed after it started). The WAL starts over from its
// beginning only at a write that finds every frame copied, which never happens while
// writes keep coming during the checkpoint; so the thread then copies the frames written
// meanwhile (a few commits' worth) holding the store's write mutex, and the next commit
// restarts the WAL, as it would after SQLite's own checkpoint.
//
// The WAL stays bounded if the checkpointer falls behind: past kInlinePages the writer's
// hook checkpoints (PASSIVE) itself, as SQLite's default would have.
//
// Threading: the WAL hook runs on the committing thread under the store's write mutex;
// everything else is this class's own thread. Destroy it before the writer connection.
#pragma once

#include <sqlite3.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace baton::sqlite {

class WalCheckpointer {
 public:
  // Past this many WAL pages (after a commit) the thread is woken: SQLite's default.
  static constexpr int kWakePages = 1000;
  // Past this many the writer checkpoints itself (the thread is behind or failing).
  static constexpr int kInlinePages = 16 * kWakePages;

  // Opens its own connection to `path` (a file database, already in WAL mode) and
  // installs the hook on `writer`, whose automatic checkpoint it turns off; `writer_mu`
  // is the mutex every use of `writer` holds. On failure to open, `writer` keeps
  // SQLite's automatic checkpoint and ok() is false.
  WalCheckpointer(const std::string& path, sqlite3* writer, std::mutex& writer_mu,
                  int busy_timeout_ms);
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  bool ok() const { return db_ != nullptr; }
  // Checkpoints completed by the thread and by the writer's fallback (for tests).
  int64_t background_checkpoints() const;
  int64_t inline_checkpoints() const;
  // Waits until the thread has completed `count` checkpoints; false on `timeout`.
  bool WaitForBackgroundCheckpoints(int64_t count, std::chrono::milliseconds timeout) const;

 private:
  static int OnCommit(void* self, sqlite3* db, const char* name, int pages);
  void Run();

  sqlite3* writer_;
  std::mutex& writer_mu_;
  sqlite3* db_ = nullptr;  // the checkpointer's own connection
  mutable std::mutex mu_;
  std::condition_variable wake_;
  mutable std::condition_variable done_;  // after each background checkpoint
  bool pending_ = false;
  bool stop_ = false;
  int64_t background_ = 0;
  int64_t inline_ = 0;
  std::thread thread_;
};

}  // namespace baton::sqlite
