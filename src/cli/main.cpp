#include "cli/commands.h"

#include <sys/resource.h>

int main(int argc, char** argv) {
  // Each running shell step holds ~4 descriptors; lift the soft limit to the hard one.
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
  }
  return baton::cli::Main(argc, argv);
}
