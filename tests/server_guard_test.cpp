// What the server does with hostile input: malformed HTTP on a raw socket, http steps
// aimed at internal addresses (the egress guard), shell steps on a server that runs none.
#include "support/process_util.h"
#include "support/server_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

namespace baton {
namespace {

using testing::MakeTempDir;
using testing::ServerProcess;
using testing::WaitUntil;

// Sends raw bytes to the server and returns what it answers before closing (at most
// 64 KiB, within 5 s).
std::string RawExchange(const std::string& url, const std::string& bytes) {
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return "";
  }
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  (void)!write(fd, bytes.data(), bytes.size());
  shutdown(fd, SHUT_WR);
  std::string out;
  char buf[4096];
  ssize_t n;
  while (out.size() < (64u << 10) && (n = read(fd, buf, sizeof buf)) > 0) out.append(buf, n);
  close(fd);
  return out;
}

class ServerGuard : public ::testing::Test {
 protected:
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Start(std::vector<std::string> env = {}, std::vector<std::string> args = {}) {
    dir_ = MakeTempDir();
    server_ = std::make_unique<ServerProcess>(dir_, args, env);
    ASSERT_TRUE(server_->ok()) << server_->log();
  }
  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServerGuard, MalformedRequestsGet400AndTheServerCarriesOn) {
  Start();
  for (const std::string& junk :
       {std::string("NOT HTTP AT ALL\r\n\r\n"), std::string("GET /health HTTP/9.9\r\n\r\n"),
        std::string("GET /health HTTP/1.1\r\nContent-Length: banana\r\n\r\n"),
        std::string("POST /api/v1/executions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
        std::string("GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n"), std::string(100'000, '\x01')}) {
    std::string reply = RawExchange(server_->url(), junk);
    EXPECT_TRUE(reply.empty() || reply.rfind("HTTP/1.1 400", 0) == 0) << reply;
  }
  // Oversized headers: 431.
  std::string big = "GET /health HTTP/1.1\r\nX-Big: " + std::string(20'000, 'a') + "\r\n\r\n";
  EXPECT_EQ(RawExchange(server_->url(), big).rfind("HTTP/1.1 431", 0), 0u);
  // Still serving.
  auto health = server_->As("").Call("GET", "/health");
  ASSERT_TRUE(health.ok()) << health.status().ToString();
  EXPECT_EQ((*health)["status"], "ok");
}

std::string HttpStepWorkflow(const std::string& url) {
  return "name: probe\nsteps:\n  - id: call\n    type: http\n    request: {url: \"" + url + "\"}\n";
}

Json RunProbe(ServerProcess& server, const std::string& target) {
  auto admin = server.Admin();
  auto created =
      admin.Send("POST", "/api/v1/workflows", HttpStepWorkflow(target), "application/yaml");
  EXPECT_TRUE(created.ok() && created->status < 300) << (created.ok() ? created->body : "");
  auto sub = admin.Call("POST", "/api/v1/executions", {{"workflow", "probe"}});
  EXPECT_TRUE(sub.ok()) << sub.status().ToString();
  Json last;
  WaitUntil([&] {
    auto e = admin.Call("GET", "/api/v1/executions/" + (*sub)["id"].get<std::string>());
    if (!e.ok()) return false;
    last = *e;
    return last["status"] == "completed" || last["status"] == "failed";
  });
  return last;
}

TEST_F(ServerGuard, HttpStepsToInternalAddressesAreRefused) {
  Start();
  for (const std::string& target :
       {server_->url() + "/health", std::string("http://169.254.169.254/latest/meta-data/"),
        std::string("http://10.1.2.3/"), std::string("http://[::ffff:127.0.0.1]:1/")}) {
    Json e = RunProbe(*server_, target);
    EXPECT_EQ(e["status"], "failed") << target;
    EXPECT_EQ(e["steps"][0]["error"]["code"], "NETWORK") << target;
    EXPECT_NE(e["steps"][0]["error"]["message"].get<std::string>().find("egress"),
              std::string::npos)
        << e["steps"][0]["error"].dump();
  }
}

// A server that only dispatches (`--no-local-shell`) never runs a shell step on its host:
// the step fails at once with a reason, and the file the script would create is absent.
TEST_F(ServerGuard, NoLocalShellFailsShellStepsAtOnceWithAReason) {
  const std::string marker = MakeTempDir() + "/ran";
  Start({}, {"--no-local-shell"});
  auto admin = server_->Admin();
  const std::string wf = "name: sh\nsteps:\n  - {id: a, type: shell, run: 'touch " + marker +
                         "'}\n  - {id: b, type: noop, depends_on: [a]}\n";
  auto created = admin.Send("POST", "/api/v1/workflows", wf, "application/yaml");
  ASSERT_TRUE(created.ok() && created->status == 201) << (created.ok() ? created->body : "");
  auto started = admin.Call("POST", "/api/v1/executions", {{"workflow", "sh"}});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  Json e = testing::WaitForExecutionStatus(admin, (*started)["id"], "failed");
  EXPECT_EQ(e["steps"][0]["error"]["code"], "UNSUPPORTED_STEP_TYPE") << e.dump(2);
  EXPECT_NE(e["steps"][0]["error"]["message"].get<std::string>().find("--no-local-shell"),
            std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST_F(ServerGuard, AnAllowListOpensNamedRanges) {
  Start({"BATON_HTTP_ALLOW=127.0.0.0/8"});
  Json e = RunProbe(*server_, server_->url() + "/health");  // the server calls itself
  EXPECT_EQ(e["status"], "completed") << e.dump(2);
  EXPECT_EQ(e["steps"][0]["output"]["status"], 200);
  EXPECT_EQ(e["steps"][0]["output"]["body"]["store"], "ok");
}

TEST_F(ServerGuard, ATokenPastItsRateGets429WithRetryAfter) {
  Start({}, {"--rate-limit", "2", "--rate-burst", "3"});
  auto admin = server_->Admin();
  int refused = 0;
  client::HttpReply last;
  for (int i = 0; i < 20; ++i) {
    auto r = admin.Send("GET", "/api/v1/workflows");
    ASSERT_TRUE(r.ok());
    if (r->status == 429) {
      ++refused;
      last = *r;
    } else {
      EXPECT_EQ(r->status, 200) << r->body;
    }
  }
  // 20 requests in well under the 8.5 s that 2/s plus a burst of 3 would take.
  EXPECT_GE(refused, 10);
  Json error = Json::parse(last.body)["error"];
  EXPECT_EQ(error["code"], "RATE_LIMITED");
  EXPECT_EQ(error["details"]["limit_per_second"], 2.0);
  EXPECT_GE(std::stoi(last.headers["retry-after"]), 1);
  // Health checks are not limited; another token has its own bucket.
  EXPECT_EQ(server_->As("").Send("GET", "/health")->status, 200);
  auto other = admin.Call("POST", "/api/v1/tokens", {{"name", "b"}, {"scopes", {"read"}}});
  if (other.ok()) {  // the admin's bucket may be empty: then a fresh token is not testable
    EXPECT_EQ(server_->As((*other)["token"]).Send("GET", "/api/v1/workflows")->status, 200);
  }
}

}  // namespace
}  // namespace baton
