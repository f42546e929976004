// Migrations on a real PostgreSQL: a fresh database gets every table once, instances
// that start together migrate it once, and a newer schema is refused by name.
#include "store/postgres/pg_migrations.h"

#include "store/postgres/pg_test_util.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

namespace baton::pg {
namespace {

class PgMigrations : public PgTest {};

std::set<std::string> Tables(Connection& c) {
  auto rows =
      c.Exec("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'", {},
             "listing tables");
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  std::set<std::string> out;
  if (!rows.ok()) return out;
  for (size_t i = 0; i < rows->size(); ++i) out.insert(*rows->at(i, 0));
  return out;
}

TEST_F(PgMigrations, AFreshDatabaseGetsTheWholeSchemaOnce) {
  auto c = Connection::Open(NewDatabase());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(*SchemaVersion(*c), 0);
  ASSERT_TRUE(Migrate(*c).ok());
  EXPECT_EQ(*SchemaVersion(*c), LatestSchemaVersion());
  // The record kinds of <baton/store.h>, each in its table, and the instances' leases.
  const std::set<std::string> want = {"schema_migrations",
                                      "workflows",
                                      "executions",
                                      "steps",
                                      "attempts",
                                      "events",
                                      "dead_letters",
                                      "tokens",
                                      "schedules",
                                      "hooks",
                                      "triggers",
                                      "deliveries",
                                      "workers",
                                      "assignments",
                                      "reassignments",
                                      "signals",
                                      "breakers",
                                      "cache_entries",
                                      "pools",
                                      "execution_leases",
                                      "leaders",
                                      "offered_dispatches",
                                      "control_requests",
                                      "cache_deletions",
                                      "pool_holds"};
  EXPECT_EQ(Tables(*c), want);
  // Again: nothing to do, nothing recorded twice.
  ASSERT_TRUE(Migrate(*c).ok());
  auto n = c->Exec("SELECT COUNT(*) FROM schema_migrations", {}, "counting");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->at(0, 0), std::to_string(LatestSchemaVersion()));
}

TEST_F(PgMigrations, InstancesStartingTogetherMigrateOnce) {
  const std::string url = NewDatabase();
  constexpr int kInstances = 4;
  std::vector<Status> results(kInstances);
  std::vector<std::thread> threads;
  for (int i = 0; i < kInstances; ++i) {
    threads.emplace_back([&, i] {
      auto c = Connection::Open(url);
      results[i] = c.ok() ? Migrate(*c) : c.status();
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.ToString();
  auto c = Connection::Open(url);
  ASSERT_TRUE(c.ok());
  auto rows =
      c->Exec("SELECT version, COUNT(*) FROM schema_migrations GROUP BY version", {}, "counting");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), static_cast<size_t>(LatestSchemaVersion()));
  for (size_t i = 0; i < rows->size(); ++i) EXPECT_EQ(rows->at(i, 1), "1");
}

TEST_F(PgMigrations, ASchemaNewerThanThisBuildIsRefused) {
  auto c = Connection::Open(NewDatabase());
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(Migrate(*c).ok());
  const int newer = LatestSchemaVersion() + 1;
  ASSERT_TRUE(c->Exec("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, 0)",
                      {std::to_string(newer)}, "faking a newer build")
                  .ok());
  Status s = Migrate(*c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), errc::kStore);
  EXPECT_NE(
      s.message().find("schema is at version " + std::to_string(newer) +
                       ", newer than this baton's (" + std::to_string(LatestSchemaVersion()) + ")"),
      std::string::npos)
      << s.message();
  // The refusal changed nothing, and the connection is usable.
  EXPECT_EQ(*SchemaVersion(*c), newer);
  EXPECT_TRUE(c->ok());
}

// A migration that fails leaves no table of it behind: the whole run is one transaction.
TEST_F(PgMigrations, AFailedMigrationLeavesNothingHalfApplied) {
  auto c = Connection::Open(NewDatabase());
  ASSERT_TRUE(c.ok());
  // A table in the way of migration 1's `pools` makes it fail after most of its tables.
  ASSERT_TRUE(c->Script("CREATE TABLE pools (x INTEGER)", "blocking").ok());
  Status s = Migrate(*c);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("applying schema migration 1"), std::string::npos) << s.message();
  EXPECT_EQ(Tables(*c), (std::set<std::string>{"pools"}));
  EXPECT_EQ(*SchemaVersion(*c), 0);
}

}  // namespace
}  // namespace baton::pg
