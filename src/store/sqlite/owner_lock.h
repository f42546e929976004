// One owning process per database file.
//
// Two processes running the same execution off one SQLite file each dispatch its
// running step (issue 11, defect 7). The store therefore takes an exclusive flock(2) on
// "<db>.lock" when it opens the database and holds it for its life; the lock file
// names the holder's pid and command so that a second process can say who has it. The
// kernel drops the lock when the holder dies, even by kill -9, so a crash never leaves
// the file locked.
//
// This is whole-file ownership, the SQLite form of what PostgreSQL will do per
// execution with leases (an owner id and an expiry, checked at every write): the store
// owns the question "may this process act on this execution?", not the engine.
#pragma once

#include <baton/status.h>

#include <string>

namespace baton::sqlite {

class OwnerLock {
 public:
  // Takes the lock on `db_path` + ".lock" without waiting. Fails with kStore naming the
  // holder: "database x.db is in use by another baton process (pid 42: baton run ...)".
  static Result<OwnerLock> Acquire(const std::string& db_path);

  OwnerLock(OwnerLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  OwnerLock& operator=(OwnerLock&& other) noexcept;
  OwnerLock(const OwnerLock&) = delete;
  OwnerLock& operator=(const OwnerLock&) = delete;
  ~OwnerLock();

 private:
  explicit OwnerLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace baton::sqlite
