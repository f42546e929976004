// The live feed (WebSocket /api/v1/events) and the CLI that follows it, against the real
// server process.
#include "client/event_stream.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace baton {
namespace {

using client::ApiClient;
using client::EventStream;
using testing::MakeTempDir;
using testing::ServerProcess;

constexpr const char* kSlow = R"(
name: slow
steps:
  - {id: first, type: wait, duration: 200ms}
  - {id: second, type: wait, duration: 200ms, depends_on: [first]}
  - {id: third, type: noop, depends_on: [second]}
)";

class LiveFeed : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = MakeTempDir();
    server_ = std::make_unique<ServerProcess>(dir_);
    ASSERT_TRUE(server_->ok()) << server_->log();
    auto r = server_->Admin().Send("POST", "/api/v1/workflows", kSlow, "application/yaml");
    ASSERT_TRUE(r.ok() && r->status == 201);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string Submit(const std::string& workflow = "slow") {
    auto r = server_->Admin().Call("POST", "/api/v1/executions", {{"workflow", workflow}});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)["id"].get<std::string>() : "";
  }
  // Messages until the execution's final event (or `max` messages, or 20 s).
  std::vector<Json> ReadUntilFinal(EventStream& s, size_t max = 100000) {
    std::vector<Json> out;
    for (int waited = 0; waited < 20'000 && out.size() < max;) {
      auto m = s.Next(100);
      if (!m.ok()) break;
      if (!m->has_value()) {
        waited += 100;
        continue;
      }
      out.push_back(**m);
      std::string type = (**m).value("type", "");
      if (type == "execution.completed" || type == "execution.failed") break;
    }
    return out;
  }
  static std::vector<int64_t> Seqs(const std::vector<Json>& messages) {
    std::vector<int64_t> out;
    for (const Json& m : messages) {
      if (m.contains("seq")) out.push_back(m["seq"]);
    }
    return out;
  }

  std::string dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(LiveFeed, FollowsOneExecutionFromTheStartWithoutGapsOrDuplicates) {
  std::string id = Submit();
  auto s =
      EventStream::Open({server_->url(), server_->admin_token()}, "execution=" + id + "&since=0");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<Json> messages = ReadUntilFinal(**s);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages.back()["type"], "execution.completed");
  std::vector<int64_t> seqs = Seqs(messages);
  for (size_t i = 0; i < seqs.size(); ++i) EXPECT_EQ(seqs[i], static_cast<int64_t>(i + 1));
  // The same events as the store's log.
  auto stored = server_->Admin().Call("GET", "/api/v1/executions/" + id + "/events");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(seqs.size(), (*stored)["events"].size());
}

TEST_F(LiveFeed, ReconnectingWithSinceMissesNothing) {
  std::string id = Submit();
  client::Endpoint endpoint{server_->url(), server_->admin_token()};
  std::vector<int64_t> seen;
  {
    auto s = EventStream::Open(endpoint, "execution=" + id + "&since=0");
    ASSERT_TRUE(s.ok());
    seen = Seqs(ReadUntilFinal(**s, 4));  // a few, then drop the connection
  }
  ASSERT_FALSE(seen.empty());
  auto s = EventStream::Open(endpoint, "execution=" + id + "&since=" + std::to_string(seen.back()));
  ASSERT_TRUE(s.ok());
  for (int64_t q : Seqs(ReadUntilFinal(**s))) seen.push_back(q);
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], static_cast<int64_t>(i + 1));
  auto stored = server_->Admin().Call("GET", "/api/v1/executions/" + id + "/events");
  EXPECT_EQ(seen.size(), (*stored)["events"].size());
}

TEST_F(LiveFeed, FiltersByWorkflowAndNamespaceAndNeedsAToken) {
  // No token, and another namespace's view of an execution id: refused.
  std::string id = Submit();
  auto none = EventStream::Open({server_->url(), ""}, "execution=" + id);
  EXPECT_EQ(none.status().code(), "UNAUTHORIZED");
  auto other = server_->Admin().Call(
      "POST", "/api/v1/tokens", {{"name", "b"}, {"scopes", {"read"}}, {"namespace", "team-b"}});
  ASSERT_TRUE(other.ok());
  client::Endpoint b{server_->url(), (*other)["token"]};
  EXPECT_EQ(EventStream::Open(b, "execution=" + id).status().code(), "NOT_FOUND");

  // A workflow subscription sees that workflow's executions only.
  auto quick =
      server_->Admin().Send("POST", "/api/v1/workflows",
                            "name: quick\nsteps:\n  - {id: q, type: noop}\n", "application/yaml");
  ASSERT_EQ(quick->status, 201);
  auto s = EventStream::Open({server_->url(), server_->admin_token()}, "workflow=slow");
  ASSERT_TRUE(s.ok());
  auto ready = (*s)->Next(5'000);
  ASSERT_TRUE(ready.ok() && ready->has_value());
  EXPECT_EQ((**ready)["type"], "ready");
  Submit("quick");
  std::string slow_id = Submit("slow");
  bool slow_done = false;
  for (int i = 0; i < 10 && !slow_done; ++i) {  // `id` (also slow) may finish first
    for (const Json& m : ReadUntilFinal(**s)) {
      EXPECT_EQ(m["workflow"], "slow");
      EXPECT_TRUE(m["execution_id"] == slow_id || m["execution_id"] == id) << m.dump();
      slow_done = slow_done || (m["execution_id"] == slow_id && m["type"] == "execution.completed");
    }
  }
  EXPECT_TRUE(slow_done);
  // The other namespace's feed hears nothing of this one.
  auto sb = EventStream::Open(b, "");
  ASSERT_TRUE(sb.ok());
  ASSERT_TRUE((*sb)->Next(5'000)->has_value());  // ready
  Submit("quick");
  auto nothing = (*sb)->Next(500);
  ASSERT_TRUE(nothing.ok());
  EXPECT_FALSE(nothing->has_value());
}

TEST_F(LiveFeed, CliFollowsUntilTheExecutionFinishes) {
  std::string id = Submit();
  auto r = testing::RunProcess({testing::BatonBin(), "events", id, "--follow", "--server",
                                server_->url(), "--token", server_->admin_token()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("execution.started"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("execution.completed"), std::string::npos) << r.out;
  auto w = testing::RunProcess({testing::BatonBin(), "status", id, "--watch", "--server",
                                server_->url(), "--token", server_->admin_token()});
  EXPECT_EQ(w.exit_code, 0) << w.err;
  EXPECT_NE(w.err.find("completed"), std::string::npos) << w.err;
}

}  // namespace
}  // namespace baton
