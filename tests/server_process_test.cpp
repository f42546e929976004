// Tests of the test fixture that runs the real server: a flaky fixture fails tests that
// have nothing wrong with them.
#include "support/server_process.h"
#include "support/process_util.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace baton::testing {
namespace {

int PortOf(const std::string& url) {
  return std::stoi(url.substr(url.rfind(':') + 1));
}

// Another process listening on the port the server had: what a neighbouring test's
// port-0 server can be given while this one is down.
int ListenOn(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 1) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

TEST(ServerProcess, RestartTakesAFreshPortWhenItsOldOneWasTaken) {
  ServerProcess server(MakeTempDir());
  ASSERT_TRUE(server.ok()) << server.log();
  const int old_port = PortOf(server.url());
  server.Kill9();
  int squatter = ListenOn(old_port);
  ASSERT_GE(squatter, 0) << "could not take port " << old_port;
  server.Restart();
  close(squatter);
  ASSERT_TRUE(server.ok()) << server.log();
  EXPECT_NE(PortOf(server.url()), old_port);
  auto health = server.Admin().Call("GET", "/health");
  EXPECT_TRUE(health.ok());
}

TEST(ServerProcess, RestartKeepsThePortWhenItIsFree) {
  ServerProcess server(MakeTempDir());
  ASSERT_TRUE(server.ok()) << server.log();
  const std::string url = server.url();
  server.Restart();
  ASSERT_TRUE(server.ok()) << server.log();
  EXPECT_EQ(server.url(), url);
}

}  // namespace
}  // namespace baton::testing
