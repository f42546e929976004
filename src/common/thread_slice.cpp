#include "common/thread_slice.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

namespace baton {
namespace {

// The kernel's struct sched_attr (glibc 2.36 has no wrapper for the calls).
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;  // for SCHED_OTHER since Linux 6.12: the requested slice, ns
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};

constexpr uint64_t kResetOnFork = 0x01;  // SCHED_FLAG_RESET_ON_FORK

bool Read(SchedAttr* attr) {
#ifdef SYS_sched_getattr
  std::memset(attr, 0, sizeof *attr);
  return syscall(SYS_sched_getattr, 0, attr, sizeof *attr, 0) == 0;
#else
  (void)attr;
  return false;
#endif
}

}  // namespace

bool RequestShortSlices(std::chrono::microseconds slice) {
#ifdef SYS_sched_setattr
  SchedAttr attr;
  if (slice.count() <= 0 || !Read(&attr) || attr.sched_policy != SCHED_OTHER) return false;
  // Policy and nice as they are: changing neither needs privilege. Without
  // SCHED_FLAG_UTIL_CLAMP the utilisation clamps stay as they are. Reset on fork: a thread
  // or process this thread starts (a step's command) gets the kernel's default slice.
  attr.size = sizeof attr;
  attr.sched_flags = kResetOnFork;
  attr.sched_runtime = static_cast<uint64_t>(slice.count()) * 1000;
  if (syscall(SYS_sched_setattr, 0, &attr, 0) != 0) return false;
  return OwnSlice().count() > 0;
#else
  (void)slice;
  return false;
#endif
}

std::chrono::microseconds OwnSlice() {
  SchedAttr attr;
  if (!Read(&attr) || attr.sched_policy != SCHED_OTHER) return std::chrono::microseconds(0);
  return std::chrono::microseconds(attr.sched_runtime / 1000);
}

}  // namespace baton
