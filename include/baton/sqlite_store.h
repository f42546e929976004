// The SQLite store: the default durable store, one file in WAL mode. Its own module
// (src/store/sqlite, target baton_store_sqlite); see <baton/store.h> for the contract.
#pragma once

#include <baton/store.h>

#include <memory>
#include <string>

namespace baton {

// The SQLite store runs in WAL mode. `synchronous_full` picks the durability trade:
//  - FULL (default): the WAL is fsynced at every commit, so Commit() returning ok means
//    the batches survive a power loss or OS crash. Group commit (CommitQueue) amortises
//    the fsync over many batches.
//  - NORMAL: the WAL is fsynced only at checkpoints. A process crash loses nothing, but
//    a power loss or OS crash may lose the most recent commits (they roll back as a
//    whole; the database is never corrupted). Use it when re-running the last few
//    steps after a power cut is acceptable; it breaks "acknowledged means durable" for
//    remote workers in that case.
struct SqliteOptions {
  bool synchronous_full = true;  // false = NORMAL
  int busy_timeout_ms = 5000;    // how long to wait for another connection's lock
  // Hold an exclusive lock on "<path>.lock" for the store's life, so that a second
  // process opening the same file fails at once, naming the holder's pid, instead of
  // running the same executions a second time.
  bool exclusive = true;
};
// Opens (creating if needed) the database file and applies pending schema migrations,
// each in its own transaction. Fails with errc::kStore when the file is not a SQLite
// database, cannot be opened, has a schema newer than this build knows, or (with
// `exclusive`) is owned by another live process.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path,
                                               const SqliteOptions& options = {});

}  // namespace baton
