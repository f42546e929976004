// The ctest fixture around the shared test cluster (pg_cluster.h):
//   baton_pg_cluster start FILE   start a cluster, describe it in FILE, leave it running
//   baton_pg_cluster stop FILE    stop the cluster FILE describes, remove it and FILE
#include "support/pg_cluster.h"

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: baton_pg_cluster start|stop FILE\n");
    return 2;
  }
  const std::string verb = argv[1], file = argv[2];
  if (verb == "stop") {
    baton::testing::PgCluster::StopShared(file);
    return 0;
  }
  if (verb != "start") {
    std::fprintf(stderr, "baton_pg_cluster: unknown verb '%s'\n", verb.c_str());
    return 2;
  }
  baton::testing::PgCluster::StopShared(file);  // one left by an interrupted run
  unsetenv("BATON_TEST_PG");                    // start one, never attach to one
  baton::testing::PgCluster cluster;
  if (std::string error = cluster.Start(); !error.empty()) {
    std::fprintf(stderr, "baton_pg_cluster: %s\n", error.c_str());
    return 1;
  }
  if (!cluster.Detach(file)) {
    std::fprintf(stderr, "baton_pg_cluster: cannot write %s\n", file.c_str());
    return 1;
  }
  std::printf("baton_pg_cluster: started on port %d (%s)\n", cluster.port(), file.c_str());
  return 0;
}
