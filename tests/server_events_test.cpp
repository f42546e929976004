// The live feed (WebSocket /api/v1/events) and the CLI that follows it, against the real
// server process.
#include "client/event_stream.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <baton/store.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>

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
  // Event messages (not "ready" or "gap") until `last` holds for one (or 20 s).
  static std::vector<Json> ReadEventsUntil(EventStream& s,
                                           const std::function<bool(const Json&)>& last) {
    std::vector<Json> out;
    for (int waited = 0; waited < 20'000;) {
      auto m = s.Next(100);
      if (!m.ok()) break;
      if (!m->has_value()) {
        waited += 100;
        continue;
      }
      if (!(**m).contains("position")) continue;
      out.push_back(**m);
      if (last(out.back())) break;
    }
    return out;
  }
  static bool Ready(EventStream& s) {
    auto m = s.Next(5'000);
    return m.ok() && m->has_value() && (**m)["type"] == "ready";
  }
  // Every stored event of the execution, through the REST API, page by page.
  std::vector<Json> StoredEvents(const std::string& id) {
    std::vector<Json> out;
    for (std::string after = "0";;) {
      auto page = server_->Admin().Call(
          "GET", "/api/v1/executions/" + id + "/events?limit=2&after=" + after);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) return out;
      for (const Json& e : (*page)["events"]) out.push_back(e);
      if ((*page)["next_after"].is_null()) return out;
      after = (*page)["next_after"].dump();
    }
  }
  bool Finished(const std::string& id) {
    auto e = server_->Admin().Call("GET", "/api/v1/executions/" + id);
    return e.ok() && IsTerminal(ParseExecutionStatus((*e)["status"].get<std::string>())
                                    .value_or(ExecutionStatus::kRunning));
  }
  // "execution#seq@position": what identifies an event, and where it stands.
  static std::vector<std::string> Keys(const std::vector<Json>& events) {
    std::vector<std::string> out;
    for (const Json& e : events) {
      out.push_back(e["execution_id"].get<std::string>() + "#" + e["seq"].dump() + "@" +
                    e["position"].dump());
    }
    return out;
  }

  // Follows `filter` live, drops the connection mid-run, lets executions start and finish
  // while disconnected, then reconnects with after=<the last position received> while
  // another one runs: the two connections deliver every stored event of the executions
  // the filter selects exactly once, in position order, and nothing else.
  void ResumeByPosition(const std::string& filter, bool quick_too) {
    ASSERT_EQ(server_->Admin()
                  .Send("POST", "/api/v1/workflows",
                        "name: quick\nsteps:\n  - {id: q, type: noop}\n", "application/yaml")
                  ->status,
              201);
    client::Endpoint endpoint{server_->url(), server_->admin_token()};
    std::vector<Json> received;
    std::vector<std::string> slow, quick;
    {
      auto s = EventStream::Open(endpoint, filter);
      ASSERT_TRUE(s.ok()) << s.status().ToString();
      ASSERT_TRUE(Ready(**s));
      slow.push_back(Submit("slow"));
      quick.push_back(Submit("quick"));
      int n = 0;
      received = ReadEventsUntil(**s, [&n](const Json&) { return ++n == 4; });
    }
    ASSERT_EQ(received.size(), 4u);
    ASSERT_FALSE(Finished(slow[0]));  // dropped mid-run
    const int64_t last = received.back()["position"];

    slow.push_back(Submit("slow"));
    quick.push_back(Submit("quick"));
    ASSERT_TRUE(testing::WaitUntil([&] {
      for (const auto& ids : {slow, quick}) {
        for (const std::string& id : ids) {
          if (!Finished(id)) return false;
        }
      }
      return true;
    }));
    slow.push_back(Submit("slow"));  // live across the reconnect: replayed, then live
    auto s = EventStream::Open(
        endpoint, filter + (filter.empty() ? "" : "&") + "after=" + std::to_string(last));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    for (Json& m : ReadEventsUntil(**s, [&](const Json& m) {
           return m["execution_id"] == slow.back() && m["type"] == "execution.completed";
         })) {
      received.push_back(std::move(m));
    }
    // Nothing else comes: every followed execution is finished.
    auto more = (*s)->Next(300);
    ASSERT_TRUE(more.ok());
    if (more->has_value()) {
      EXPECT_EQ((**more)["type"], "ready") << (**more).dump();
    }

    std::vector<Json> stored;
    for (const std::string& id : slow) {
      for (Json& e : StoredEvents(id)) stored.push_back(std::move(e));
    }
    if (quick_too) {
      for (const std::string& id : quick) {
        for (Json& e : StoredEvents(id)) stored.push_back(std::move(e));
      }
    }
    std::sort(stored.begin(), stored.end(), [](const Json& a, const Json& b) {
      return a["position"].get<int64_t>() < b["position"].get<int64_t>();
    });
    for (size_t i = 1; i < received.size(); ++i) {
      EXPECT_LT(received[i - 1]["position"], received[i]["position"]) << i;
    }
    EXPECT_EQ(Keys(received), Keys(stored));
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

TEST_F(LiveFeed, ReconnectingToAWorkflowWithAfterMissesNothing) {
  ResumeByPosition("workflow=slow", /*quick_too=*/false);
}

TEST_F(LiveFeed, ReconnectingToEverythingWithAfterMissesNothing) {
  ResumeByPosition("", /*quick_too=*/true);
}

TEST_F(LiveFeed, AfterReplaysOneExecutionByPositionAndIsValidated) {
  std::string id = Submit();
  client::Endpoint endpoint{server_->url(), server_->admin_token()};
  auto s = EventStream::Open(endpoint, "execution=" + id + "&after=0");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<Json> events =
      ReadEventsUntil(**s, [](const Json& m) { return m["type"] == "execution.completed"; });
  EXPECT_EQ(Keys(events), Keys(StoredEvents(id)));
  for (const Json& e : events) EXPECT_EQ(e["workflow"], "slow");
  // From the middle of the log: the rest only.
  auto rest =
      EventStream::Open(endpoint, "execution=" + id + "&after=" + events[2]["position"].dump());
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(Keys(ReadEventsUntil(**rest,
                                 [](const Json& m) { return m["type"] == "execution.completed"; })),
            Keys(std::vector<Json>(events.begin() + 3, events.end())));

  for (const char* bad : {"after=x", "after=-1", "after=", "execution=ID&since=0&after=0"}) {
    std::string query = bad;
    if (query.find("ID") != std::string::npos) query.replace(query.find("ID"), 2, id);
    EXPECT_EQ(EventStream::Open(endpoint, query).status().code(), errc::kInvalidArgument) << bad;
  }
}

// The stored events of `id` whose type `keep` accepts.
std::vector<Json> StoredOfTypes(const std::vector<Json>& stored,
                                const std::function<bool(const std::string&)>& keep) {
  std::vector<Json> out;
  for (const Json& e : stored) {
    if (keep(e["type"].get<std::string>())) out.push_back(e);
  }
  return out;
}

TEST_F(LiveFeed, TypesSendsOnlyTheEventTypesAskedLive) {
  client::Endpoint endpoint{server_->url(), server_->admin_token()};
  auto s = EventStream::Open(endpoint, "workflow=slow&types=step.completed,execution.completed");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE(Ready(**s));
  std::string id = Submit();
  std::vector<Json> events =
      ReadEventsUntil(**s, [](const Json& m) { return m["type"] == "execution.completed"; });
  std::vector<std::string> types;
  for (const Json& e : events)
    types.push_back(e["type"].get<std::string>() + " " + e.value("step_id", ""));
  EXPECT_EQ(types, (std::vector<std::string>{"step.completed first", "step.completed second",
                                             "step.completed third", "execution.completed "}));
  // The same events (positions and all) as the store's, that type aside.
  EXPECT_EQ(Keys(events), Keys(StoredOfTypes(StoredEvents(id), [](const std::string& t) {
              return t == "step.completed" || t == "execution.completed";
            })));
  for (const Json& e : events) EXPECT_TRUE(e.contains("progress")) << e.dump();
}

TEST_F(LiveFeed, TypesAppliesToTheReplayBySeqAndByPosition) {
  std::string id = Submit();
  client::Endpoint endpoint{server_->url(), server_->admin_token()};
  {
    auto s = EventStream::Open(endpoint, "execution=" + id + "&since=0");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ReadUntilFinal(**s);
  }
  ASSERT_TRUE(Finished(id));
  const std::vector<Json> stored = StoredEvents(id);
  // A family, replayed by seq: every step.* event and nothing else.
  auto steps = EventStream::Open(endpoint, "execution=" + id + "&since=0&types=step.*");
  ASSERT_TRUE(steps.ok()) << steps.status().ToString();
  const std::vector<Json> want_steps =
      StoredOfTypes(stored, [](const std::string& t) { return t.rfind("step.", 0) == 0; });
  ASSERT_GE(want_steps.size(), 6u);
  size_t n = 0;
  EXPECT_EQ(Keys(ReadEventsUntil(**steps, [&](const Json&) { return ++n == want_steps.size(); })),
            Keys(want_steps));
  EXPECT_TRUE(Ready(**steps)) << "the replay ends with ready, and skips the other types";
  // Types, replayed by position.
  auto ends = EventStream::Open(
      endpoint, "execution=" + id + "&after=0&types=execution.started,execution.completed");
  ASSERT_TRUE(ends.ok()) << ends.status().ToString();
  std::vector<Json> got =
      ReadEventsUntil(**ends, [](const Json& m) { return m["type"] == "execution.completed"; });
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0]["type"], "execution.started");
  EXPECT_EQ(Keys(got), Keys(StoredOfTypes(stored, [](const std::string& t) {
              return t == "execution.started" || t == "execution.completed";
            })));
}

TEST_F(LiveFeed, TypesRefusesWhatIsNotAnEventTypeNamingIt) {
  client::Endpoint endpoint{server_->url(), server_->admin_token()};
  std::string many = "types=step.ready";
  for (int i = 0; i < 64; ++i) many += ",step.ready";
  const std::string huge = "types=" + std::string(100'000 / 2, 'x');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"types=execution.complete", "'execution.complete' is not an event type"},
      {"types=", "an empty entry"},
      {"types=step.ready,,step.started", "an empty entry"},
      {"types=step.ready,", "an empty entry"},
      {"types=nope.*", "'nope.*' is not a family"},
      {"types=*", "'*' is not an event type"},
      {"types=step.", "'step.' is not an event type"},
      {many, "more than 64 entries"},
      {huge, ""},
  };
  for (const auto& [query, says] : cases) {
    auto s = EventStream::Open(endpoint, "workflow=slow&" + query);
    ASSERT_FALSE(s.ok()) << query.substr(0, 80);
    if (says.empty()) continue;  // too long for the request line: refused before the feed
    EXPECT_EQ(s.status().code(), errc::kInvalidArgument) << query.substr(0, 80);
    EXPECT_NE(s.status().message().find(says), std::string::npos)
        << query.substr(0, 80) << ": " << s.status().message();
  }
  // The server is still serving, and the good form still works.
  auto ok = EventStream::Open(endpoint, "types=execution.*,step.failed");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(Ready(**ok));
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
  // The other namespace's feed hears nothing of this one, stored or live.
  auto sb = EventStream::Open(b, "after=0");
  ASSERT_TRUE(sb.ok());
  ASSERT_TRUE(Ready(**sb));
  Submit("quick");
  auto nothing = (*sb)->Next(500);
  ASSERT_TRUE(nothing.ok());
  EXPECT_FALSE(nothing->has_value());
}

// `events --follow` prints the lines `events` prints: with the attempt and the error
// (issue 16: it printed the type and the step alone).
TEST_F(LiveFeed, CliFollowPrintsTheAttemptAndTheError) {
  auto put = server_->Admin().Send(
      "POST", "/api/v1/workflows",
      "name: broken\nsteps:\n  - {id: boom, type: shell, run: 'echo disk on fire >&2; exit 3'}\n",
      "application/yaml");
  ASSERT_TRUE(put.ok() && put->status < 300) << (put.ok() ? put->body : put.status().ToString());
  std::string id = Submit("broken");
  auto r = testing::RunProcess({testing::BatonBin(), "events", id, "--follow", "--server",
                                server_->url(), "--token", server_->admin_token()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("step.failed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("boom attempt=1 EXIT_NONZERO: exited with code 3"), std::string::npos)
      << r.out;
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

// The REST page of an execution's events takes the same types= as the feed: each page is
// the stored page filtered (it may come out short), and next_after still walks them all.
TEST_F(LiveFeed, TypesFiltersTheRestPagesOfAnExecutionsEvents) {
  std::string id = Submit();
  {
    auto s =
        EventStream::Open({server_->url(), server_->admin_token()}, "execution=" + id + "&since=0");
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    ReadUntilFinal(**s);
  }
  const std::vector<Json> want =
      StoredOfTypes(StoredEvents(id), [](const std::string& t) { return t == "step.completed"; });
  ASSERT_EQ(want.size(), 3u);
  std::vector<Json> got;
  for (std::string after = "0";;) {
    auto page = server_->Admin().Call(
        "GET", "/api/v1/executions/" + id + "/events?limit=2&types=step.completed&after=" + after);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    ASSERT_LE((*page)["events"].size(), 2u);
    for (const Json& e : (*page)["events"]) got.push_back(e);
    if ((*page)["next_after"].is_null()) break;
    after = (*page)["next_after"].dump();
  }
  EXPECT_EQ(Keys(got), Keys(want));
  auto bad = server_->Admin().Send("GET", "/api/v1/executions/" + id + "/events?types=step.nope");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400) << bad->body;
  EXPECT_NE(bad->body.find("'step.nope' is not an event type"), std::string::npos) << bad->body;
}

TEST_F(LiveFeed, CliEventsPrintsOnlyTheTypesAskedForAndFollowsToTheEnd) {
  std::string id = Submit();
  const std::vector<std::string> common = {"--server", server_->url(), "--token",
                                           server_->admin_token()};
  auto follow = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {testing::BatonBin(), "events", id});
    args.insert(args.end(), common.begin(), common.end());
    return testing::RunProcess(args);
  };
  // Followed from the start: the step events only, and it still stops at the end.
  auto f = follow({"--follow", "--types", "step.*"});
  EXPECT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(f.out.find("step.completed"), std::string::npos) << f.out;
  EXPECT_EQ(f.out.find("execution."), std::string::npos) << f.out;
  // Afterwards, from the store.
  auto r = follow({"--types", "step.completed,execution.completed"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  size_t lines = 0;
  for (size_t at = 0; (at = r.out.find('\n', at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 4u) << r.out;  // three steps completed, then the execution
  EXPECT_EQ(r.out.find("step.started"), std::string::npos) << r.out;
  auto bad = follow({"--types", "step.nope"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("step.nope"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace baton
