// Cron schedules through the API of the real server: validation, listing, namespaces,
// surviving restarts, and firing on a server whose clock runs 60 times as fast (a minute
// per second), with a catch-up run after downtime. (Every policy is tested in virtual
// time in src/server/triggers/scheduler_test.cpp.)
#include "server/views.h"
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace baton {
namespace {

using testing::MakeTempDir;
using testing::ServerProcess;
using testing::WaitUntil;

TEST(ServerSchedules, CreateListRestartDelete) {
  std::string dir = MakeTempDir();
  {
    ServerProcess server(dir);
    ASSERT_TRUE(server.ok()) << server.log();
    auto admin = server.Admin();
    ASSERT_EQ(admin
                  .Send("POST", "/api/v1/workflows",
                        "name: tick\nsteps:\n  - {id: t, type: noop}\n", "application/yaml")
                  ->status,
              201);
    Json good = {{"name", "hourly"},    {"workflow", "tick"},
                 {"cron", "0 * * * *"}, {"timezone", "Europe/Berlin"},
                 {"overlap", "skip"},   {"catchup", "once"}};
    auto created = admin.Call("POST", "/api/v1/schedules", good);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    const std::string id = (*created)["id"];
    const std::string next = (*created)["next_fire_at"];
    EXPECT_NE(next.find(":00:00.000Z"), std::string::npos) << next;  // on the hour (CET/CEST)

    auto field_of = [&](Json body) {
      auto r = admin.Send("POST", "/api/v1/schedules", body.dump());
      EXPECT_EQ(r->status, 400) << r->body;
      return Json::parse(r->body)["error"]["details"].value("field", "");
    };
    Json bad = good;
    bad["cron"] = "0 25 * * *";
    EXPECT_EQ(field_of(bad), "cron");
    bad = good;
    bad["timezone"] = "Mars/Olympus";
    EXPECT_EQ(field_of(bad), "timezone");
    bad = good;
    bad["overlap"] = "queue";
    EXPECT_EQ(field_of(bad), "overlap");
    bad = good;
    bad["workflow"] = "nope";
    EXPECT_EQ(admin.Send("POST", "/api/v1/schedules", bad.dump())->status, 404);

    // Another namespace sees none of it.
    auto other = admin.Call("POST", "/api/v1/tokens",
                            {{"name", "b"}, {"scopes", {"write"}}, {"namespace", "team-b"}});
    ASSERT_TRUE(other.ok());
    auto b = server.As((*other)["token"]);
    EXPECT_TRUE((*b.Call("GET", "/api/v1/schedules"))["schedules"].empty());
    EXPECT_EQ(b.Send("DELETE", "/api/v1/schedules/" + id)->status, 404);

    server.Kill9();
    server.Restart();
    ASSERT_TRUE(server.ok()) << server.log();
    auto again = server.Admin();
    auto listed = again.Call("GET", "/api/v1/schedules");
    ASSERT_TRUE(listed.ok());
    ASSERT_EQ((*listed)["schedules"].size(), 1u);
    EXPECT_EQ((*listed)["schedules"][0]["next_fire_at"], next);  // the stored fire time

    // The CLI sees the same.
    auto r = testing::RunProcess({testing::BatonBin(), "schedule", "list", "--server", server.url(),
                                  "--token", server.admin_token()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("hourly"), std::string::npos) << r.out;

    EXPECT_EQ(again.Send("DELETE", "/api/v1/schedules/" + id)->status, 204);
    EXPECT_EQ(again.Send("DELETE", "/api/v1/schedules/" + id)->status, 404);
    EXPECT_TRUE((*again.Call("GET", "/api/v1/schedules"))["schedules"].empty());
  }
  std::filesystem::remove_all(dir);
}

struct Fire {
  TimeMs key_time;    // the fire time in the idempotency key
  TimeMs created_at;  // when the execution was made, by the server's clock
  bool operator<(const Fire& o) const { return key_time < o.key_time; }
};

// The schedule's executions, by fire time.
std::vector<Fire> Fires(const client::ApiClient& api, const std::string& schedule_id) {
  std::vector<Fire> out;
  auto list = api.Call("GET", "/api/v1/executions?workflow=tick&limit=1000");
  if (!list.ok()) return out;
  const std::string prefix = "schedule/" + schedule_id + "/";
  for (const Json& e : (*list)["executions"]) {
    const std::string key = e["idempotency_key"].is_string() ? e["idempotency_key"] : "";
    if (key.rfind(prefix, 0) != 0) continue;
    out.push_back({std::stoll(key.substr(prefix.size())),
                   ParseTime(e["created_at"].get<std::string>()).value()});
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ServerSchedules, FiresOnTheServersClockAndCatchesUpOnceAfterDowntime) {
  constexpr TimeMs kMinute = 60'000;
  constexpr TimeMs k2030 = 1'893'456'000'000;  // 2030-01-01T00:00:00Z
  constexpr TimeMs kRestart = k2030 + 300 * kMinute;
  std::string dir = MakeTempDir();
  ServerProcess server(dir,
                       {"--test-clock-start", "2030-01-01T00:00:00Z", "--test-clock-rate", "60"});
  ASSERT_TRUE(server.ok()) << server.log();
  auto admin = server.Admin();
  ASSERT_EQ(admin
                .Send("POST", "/api/v1/workflows", "name: tick\nsteps:\n  - {id: t, type: noop}\n",
                      "application/yaml")
                ->status,
            201);
  auto created = admin.Call(
      "POST", "/api/v1/schedules",
      {{"name", "minutely"}, {"workflow", "tick"}, {"cron", "* * * * *"}, {"catchup", "once"}});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string id = (*created)["id"];
  std::vector<Fire> fired;
  ASSERT_TRUE(WaitUntil([&] {
    fired = Fires(admin, id);
    return fired.size() >= 3;
  })) << server.log();
  for (size_t i = 0; i < fired.size(); ++i) {
    EXPECT_EQ(fired[i].key_time % kMinute, 0) << fired[i].key_time;  // on the minute
    EXPECT_GE(fired[i].created_at, fired[i].key_time);
    EXPECT_LT(fired[i].key_time, k2030 + 60 * kMinute);
    if (i > 0) {
      EXPECT_EQ(fired[i].key_time - fired[i - 1].key_time, kMinute);  // none skipped
    }
  }

  // Down for about five hours by the server's clock: at start, one run for all the
  // missed minutes (keyed by the first one missed), then on the minute again.
  server.Kill9();
  server.Restart({"--test-clock-start", "2030-01-01T05:00:00Z", "--test-clock-rate", "60"});
  ASSERT_TRUE(server.ok()) << server.log();
  auto again = server.Admin();
  ASSERT_TRUE(WaitUntil([&] {
    fired = Fires(again, id);
    return !fired.empty() && fired.back().key_time >= kRestart + 2 * kMinute;
  })) << server.log();
  std::vector<Fire> before, catch_up, after;
  for (const Fire& f : fired) {
    if (f.key_time >= kRestart) {
      after.push_back(f);
    } else if (f.created_at >= kRestart) {
      catch_up.push_back(f);
    } else {
      before.push_back(f);
    }
  }
  ASSERT_EQ(catch_up.size(), 1u);
  EXPECT_EQ(catch_up[0].key_time, before.back().key_time + kMinute);  // the first missed
  for (size_t i = 1; i < after.size(); ++i) {
    EXPECT_EQ(after[i].key_time - after[i - 1].key_time, kMinute);
  }
}

}  // namespace
}  // namespace baton