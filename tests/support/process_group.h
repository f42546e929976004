// For tests that check that a process group leaves nothing behind.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <cerrno>

namespace baton::testing {

// While it lives, orphans of this process's descendants become its children, so a test
// can reap the zombies of a killed group and see the group vanish however the
// container's init behaves.
class SubreaperScope {
 public:
  SubreaperScope() { prctl(PR_SET_CHILD_SUBREAPER, 1); }
  ~SubreaperScope() { prctl(PR_SET_CHILD_SUBREAPER, 0); }
  SubreaperScope(const SubreaperScope&) = delete;
  SubreaperScope& operator=(const SubreaperScope&) = delete;
};

// Reaps what is left of process group `pgid` (blocking: its members must have been
// killed) and says whether no process of it is left.
inline bool GroupGone(pid_t pgid) {
  while (waitpid(-pgid, nullptr, 0) > 0) {
  }
  return kill(-pgid, 0) == -1 && errno == ESRCH;
}

// Whether process `pid` is gone (a zombie still counts as there).
inline bool ProcessGone(pid_t pid) {
  return kill(pid, 0) == -1 && errno == ESRCH;
}

}  // namespace baton::testing
