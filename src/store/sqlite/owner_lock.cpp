#include "store/sqlite/owner_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace baton::sqlite {
namespace {

// "baton server --db x.db" from /proc/self/cmdline, for the holder's description.
std::string OwnCommandLine() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (char& c : raw) {
    if (c == '\0') c = ' ';
  }
  while (!raw.empty() && raw.back() == ' ') raw.pop_back();
  if (raw.size() > 200) raw = raw.substr(0, 200) + "...";
  return raw;
}

}  // namespace

Result<OwnerLock> OwnerLock::Acquire(const std::string& db_path) {
  const std::string path = db_path + ".lock";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status(errc::kStore, "cannot open the lock file " + path + ": " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder;
    char buf[512];
    ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
    if (n > 0) holder.assign(buf, static_cast<size_t>(n));
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    ::close(fd);
    if (err != EWOULDBLOCK) {
      return Status(errc::kStore, "cannot lock " + path + ": " + std::strerror(err));
    }
    return Status(errc::kStore, "database " + db_path + " is in use by another baton process (" +
                                    (holder.empty() ? std::string("pid unknown") : holder) +
                                    "); one process owns a database file at a time");
  }
  std::ostringstream who;
  who << "pid " << ::getpid() << ": " << OwnCommandLine() << "\n";
  const std::string text = who.str();
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, text.data(), text.size(), 0) < 0) {
    // The lock holds without the note; only the message of a refused process suffers.
  }
  return OwnerLock(fd);
}

OwnerLock& OwnerLock::operator=(OwnerLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

OwnerLock::~OwnerLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace baton::sqlite
