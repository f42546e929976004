#include "cli/commands.h"

#include <malloc.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>

#ifdef BATON_WITH_JEMALLOC
// jemalloc returns freed pages to the kernel as later allocations advance its decay clock,
// ten seconds after they were freed. A server that goes quiet after a burst (a restart
// that recovered thousands of waiting executions, a batch submit) never advanced it and
// kept every page the burst had freed: 68 MB resident for 10,000 waiting executions
// after a restart, against 51 MB before it. A background thread purges on schedule
// instead, and freed pages go back after one second. The MALLOC_CONF environment
// variable, read after this string, still overrides either setting.
extern "C" {
// NOLINTNEXTLINE: the name and the type are jemalloc's (man jemalloc, TUNING)
const char* malloc_conf = "background_thread:true,dirty_decay_ms:1000";
}
#endif

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
