// Cron schedules through the API of the real server: validation, listing, namespaces,
// and surviving restarts. (Firing itself is tested in virtual time in
// src/server/triggers/scheduler_test.cpp.)
#include "support/process_util.h"
#include "support/server_process.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace baton {
namespace {

using testing::MakeTempDir;
using testing::ServerProcess;

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

}  // namespace
}  // namespace baton
