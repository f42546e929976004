// Hostile request bodies against the real server: each is refused with a 400 that says
// why, and the server keeps serving (issue 11, defects 1, 2 and 9).
#include "support/process_util.h"
#include "support/server_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>

#include <filesystem>

namespace baton {
namespace {

using testing::MakeTempDir;
using testing::ServerProcess;

class HostileInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    server_ = std::make_unique<ServerProcess>(dir_);
    ASSERT_TRUE(server_->ok()) << server_->log();
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  void ExpectStillServing() {
    auto health = server_->As("").Call("GET", "/health");
    ASSERT_TRUE(health.ok()) << health.status().ToString() << "\n" << server_->log();
    EXPECT_EQ((*health)["status"], "ok");
  }
  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
};

// Regression: each of these numbers aborted the server through an uncaught
// out_of_range exception on every JSON route but /workflows.
TEST_F(HostileInput, NumbersBeyondADoubleGet400NamingTheField) {
  auto admin = server_->Admin();
  const std::vector<std::string> routes = {"/api/v1/workers/register", "/api/v1/executions",
                                           "/api/v1/tokens",           "/api/v1/hooks",
                                           "/api/v1/schedules",        "/api/v1/triggers"};
  for (const std::string& number :
       {std::string("1e99999"), std::string("1E400"), std::string("-1e400"),
        std::string("1.7976931348623157e309"), std::string(100000, '7')}) {
    for (const std::string& route : routes) {
      auto reply = admin.Send("POST", route, R"({"name": "x", "capacity": )" + number + "}");
      ASSERT_TRUE(reply.ok()) << route << " " << number.substr(0, 24) << ": "
                              << reply.status().ToString() << "\n"
                              << server_->log();
      EXPECT_EQ(reply->status, 400) << route << " " << reply->body;
      EXPECT_NE(reply->body.find("field 'capacity'"), std::string::npos) << reply->body;
      EXPECT_NE(reply->body.find("out of range"), std::string::npos) << reply->body;
    }
  }
  ExpectStillServing();
}

// Regression: an input nested 100,000 levels deep (200 KB) overflowed the stack.
TEST_F(HostileInput, DeepNestingGets400BeforeAnyRecursiveWalk) {
  auto admin = server_->Admin();
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto created = admin.Send("POST", "/api/v1/workflows",
                            "name: w\nsteps:\n  - id: a\n    type: noop\n", "application/yaml");
  ASSERT_TRUE(created.ok() && created->status == 201) << (created.ok() ? created->body : "");
  auto submit = admin.Send("POST", "/api/v1/executions",
                           R"({"workflow": "w", "input": {"x": )" + deep + "}}");
  ASSERT_TRUE(submit.ok()) << submit.status().ToString() << "\n" << server_->log();
  EXPECT_EQ(submit->status, 400) << submit->body;
  EXPECT_NE(submit->body.find("nesting deeper than 128 levels"), std::string::npos)
      << submit->body.substr(0, 300);

  for (const std::string& body :
       {"name: d\nsteps:\n  - id: a\n    type: noop\n    with: {x: " + deep + "}\n",
        R"({"name": "d", "steps": [{"id": "a", "type": "noop", "with": {"x": )" + deep + "}}]}"}) {
    auto wf = admin.Send("POST", "/api/v1/workflows", body, "application/yaml");
    ASSERT_TRUE(wf.ok()) << wf.status().ToString() << "\n" << server_->log();
    EXPECT_EQ(wf->status, 400) << wf->body.substr(0, 300);
    EXPECT_NE(wf->body.find("nesting deeper than 128 levels"), std::string::npos)
        << wf->body.substr(0, 300);
  }
  ExpectStillServing();
}

// Regression: a 459-byte document took 5.8 s and 350 MB before its 400, and three at
// once stalled /health.
TEST_F(HostileInput, BillionLaughsGets400) {
  std::string doc = "name: lol\nx0: &x0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int level = 1; level < 9; ++level) {
    std::string prev = "*x" + std::to_string(level - 1);
    doc += "x" + std::to_string(level) + ": &x" + std::to_string(level) + " [" + prev;
    for (int k = 1; k < 9; ++k) doc += ", " + prev;
    doc += "]\n";
  }
  auto reply = server_->Admin().Send("POST", "/api/v1/workflows", doc, "application/yaml");
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  EXPECT_EQ(reply->status, 400) << reply->body.substr(0, 300);
  EXPECT_NE(reply->body.find("billion laughs"), std::string::npos) << reply->body.substr(0, 300);
  ExpectStillServing();
}

// Regression (issue 11, defect 9): a workflow name over 64 KiB was saved and then
// aborted the server; `..` was accepted as a hook or namespace name.
TEST_F(HostileInput, HugeNamesAndDotNamesAreRefused) {
  auto admin = server_->Admin();
  auto huge = admin.Send("POST", "/api/v1/workflows",
                         "name: " + std::string(70000, 'a') + "\nsteps: [{id: a, type: noop}]\n",
                         "application/yaml");
  ASSERT_TRUE(huge.ok()) << huge.status().ToString() << "\n" << server_->log();
  EXPECT_EQ(huge->status, 400);
  EXPECT_NE(huge->body.find("at most 253 bytes"), std::string::npos) << huge->body.substr(0, 300);
  EXPECT_LT(huge->body.size(), 4096u);  // the message abbreviates the name
  auto step = admin.Send("POST", "/api/v1/workflows",
                         "name: w\nsteps: [{id: " + std::string(300, 'b') + ", type: noop}]\n",
                         "application/yaml");
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(step->status, 400) << step->body.substr(0, 300);
  ASSERT_EQ(admin
                .Send("POST", "/api/v1/workflows", "name: w\nsteps: [{id: a, type: noop}]\n",
                      "application/yaml")
                ->status,
            201);
  for (const std::string& name : {std::string(".."), std::string(".")}) {
    auto hook = admin.Send("POST", "/api/v1/hooks", Json{{"name", name}, {"workflow", "w"}}.dump());
    ASSERT_TRUE(hook.ok());
    EXPECT_EQ(hook->status, 400) << name << " " << hook->body;
    auto token = admin.Send("POST", "/api/v1/tokens",
                            Json{{"name", "t"}, {"scopes", {"read"}}, {"namespace", name}}.dump());
    ASSERT_TRUE(token.ok());
    EXPECT_EQ(token->status, 400) << name << " " << token->body;
  }
  ExpectStillServing();
}

// Regression (issue 11, defect 9): a header trickled in was given the 60 s idle timeout,
// where the README promises the request timeout.
TEST(HostileInputTimeouts, ATrickledHeaderGetsTheRequestTimeoutNotTheIdleOne) {
  const std::string dir = MakeTempDir();
  ServerProcess server(dir, {"--request-timeout", "1", "--idle-timeout", "60"});
  ASSERT_TRUE(server.ok()) << server.log();
  const int port = std::stoi(server.url().substr(server.url().rfind(':') + 1));
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string start = "GET /health HTTP/1.1\r\nHost: x\r\n";  // never finished
  ASSERT_EQ(write(fd, start.data(), start.size()), static_cast<ssize_t>(start.size()));
  timeval tv{20, 0};  // far below the idle timeout, far above the request timeout
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const auto began = std::chrono::steady_clock::now();
  char buf[256];
  const ssize_t n = read(fd, buf, sizeof buf);  // 0 (closed) once the deadline passes
  const auto waited = std::chrono::steady_clock::now() - began;
  close(fd);
  EXPECT_LE(n, 0);
  EXPECT_LT(waited, std::chrono::seconds(15)) << "the connection was held past the request timeout";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace baton
