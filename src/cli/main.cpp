#include "cli/commands.h"

#include <malloc.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>

namespace {

#ifndef BATON_WITH_JEMALLOC
// glibc gives a thread's free heap back to the kernel as soon as more than 128 KiB of
// it is free at the top. The commit thread and the I/O threads allocate and free a few
// hundred KiB per turn, so the default made every turn an madvise, a TLB shootdown on
// the other cores and page faults to get the memory back: a third of the server's CPU
// on the worker path. Keeping up to 64 MiB per arena costs little on a server and
// nothing a short command would notice. A user's own GLIBC_TUNABLES setting wins.
void KeepFreedHeap() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, "trim_threshold") != nullptr) return;
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}
#endif

}  // namespace

int main(int argc, char** argv) {
#ifndef BATON_WITH_JEMALLOC
  KeepFreedHeap();  // jemalloc, when linked, decays freed pages on its own schedule
#endif
  // Each running shell step holds ~4 descriptors; lift the soft limit to the hard one.
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  return baton::cli::Main(argc, argv);
}
