// The libpq connection against a real, private PostgreSQL cluster (tests/support/
// pg_cluster.h): statements with parameters, and the errors a user sees when the
// database is unreachable or refuses the password -- never showing the password.
#include "store/postgres/pg_connection.h"

#include "store/postgres/pg_test_util.h"
#include "support/pg_cluster.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace baton::pg {
namespace {

using baton::testing::PgCluster;

class PgConnection : public PgTest {};

TEST(PgRedaction, HidesThePasswordInEitherForm) {
  EXPECT_EQ(RedactedUrl("postgresql://baton:hunter2@db.example:5432/baton"),
            "postgresql://baton:***@db.example:5432/baton");
  EXPECT_EQ(RedactedUrl("postgres://baton@db/baton"), "postgres://baton@db/baton");
  EXPECT_EQ(RedactedUrl("postgresql://db/baton?user=b&password=hunter2&sslmode=require"),
            "postgresql://db/baton?user=b&password=***&sslmode=require");
  EXPECT_EQ(RedactedUrl("host=db user=baton password=hunter2 dbname=baton"),
            "host=db user=baton password=*** dbname=baton");
  EXPECT_EQ(RedactedUrl("host=db password='hun ter2' dbname=baton"),
            "host=db password=*** dbname=baton");
  // Not a password field: left alone.
  EXPECT_EQ(RedactedUrl("host=db oldpassword=x"), "host=db oldpassword=x");
}

TEST_F(PgConnection, RunsStatementsWithParametersAndNulls) {
  auto c = Connection::Open(cluster_->Url());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_GE(c->server_version(), 120000);
  ASSERT_TRUE(c->Script("CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT)", "creating t").ok());
  auto ins = c->Exec("INSERT INTO t (k, v) VALUES ($1, $2), ($3, $4)",
                     {"a", std::nullopt, "b", "it's \"quoted\"; DROP TABLE t"}, "inserting");
  ASSERT_TRUE(ins.ok()) << ins.status().ToString();
  EXPECT_EQ(ins->affected(), 2);
  auto rows = c->Exec("SELECT k, v FROM t WHERE k >= $1 ORDER BY k", {"a"}, "reading t");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  ASSERT_EQ(rows->columns(), 2u);
  EXPECT_EQ(rows->at(0, 0), "a");
  EXPECT_EQ(rows->at(0, 1), std::nullopt);  // NULL is not ""
  EXPECT_EQ(rows->at(1, 1), "it's \"quoted\"; DROP TABLE t");
}

TEST_F(PgConnection, AFailedStatementNamesWhatAndTheSqlState) {
  auto c = Connection::Open(cluster_->Url());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->Script("CREATE TABLE u (k TEXT PRIMARY KEY)", "creating u").ok());
  ASSERT_TRUE(c->Exec("INSERT INTO u VALUES ($1)", {"x"}, "first insert").ok());
  auto again = c->Exec("INSERT INTO u VALUES ($1)", {"x"}, "writing u");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), errc::kStore);
  EXPECT_NE(again.status().message().find("writing u: "), std::string::npos)
      << again.status().message();
  EXPECT_NE(again.status().message().find("SQLSTATE 23505"), std::string::npos)
      << again.status().message();
  EXPECT_TRUE(c->ok());  // a failed statement leaves the connection usable
}

TEST_F(PgConnection, AWrongPasswordSaysSoWithoutShowingIt) {
  auto c = Connection::Open(cluster_->Url("not-the-password"));
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_EQ(c.status().code(), errc::kStore);
  EXPECT_NE(m.find("password authentication failed"), std::string::npos) << m;
  EXPECT_NE(m.find("baton:***@127.0.0.1:" + std::to_string(cluster_->port())), std::string::npos)
      << m;
  EXPECT_EQ(m.find("not-the-password"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

TEST(PgConnectionRefused, AnUnreachableServerIsNamed) {
  const int port = PgCluster::FreePort();  // nothing listens there
  const std::string url =
      "postgresql://baton:hunter2@127.0.0.1:" + std::to_string(port) + "/postgres";
  auto c = Connection::Open(url, {.connect_timeout = std::chrono::seconds(5)});
  ASSERT_FALSE(c.ok());
  const std::string& m = c.status().message();
  EXPECT_NE(m.find("connecting to PostgreSQL at postgresql://baton:***@127.0.0.1:" +
                   std::to_string(port)),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("Connection refused"), std::string::npos) << m;
  EXPECT_EQ(m.find("hunter2"), std::string::npos) << m;
}

}  // namespace
}  // namespace baton::pg
