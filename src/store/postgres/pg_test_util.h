// A test fixture with one private PostgreSQL cluster per test binary run (started on
// first use, stopped at exit), and a fresh database per test.
#pragma once

#include <baton/postgres_store.h>

#include "store/postgres/pg_connection.h"

#include "support/pg_cluster.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <memory>
#include <string>

namespace baton::pg {

class PgTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new testing::PgCluster();
    start_error_ = new std::string(cluster_->Start());
  }
  static void TearDownTestSuite() {
    delete cluster_;
    delete start_error_;
    cluster_ = nullptr;
    start_error_ = nullptr;
  }
  void SetUp() override { ASSERT_EQ(*start_error_, "") << "the test cluster did not start"; }

  // A new, empty database of the cluster, named after the test; its URL.
  std::string NewDatabase() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "t_" + std::string(info->name());
    for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    // The process id too: a cluster shared by a whole ctest run outlives each binary's
    // run (ctest --repeat runs a test again on it).
    name = name.substr(0, 48) + "_" + std::to_string(getpid()) + "_" + std::to_string(++databases_);
    auto admin = Connection::Open(cluster_->Url());
    EXPECT_TRUE(admin.ok()) << admin.status().ToString();
    if (!admin.ok()) return "";
    Status s = admin->Script("CREATE DATABASE " + name, "creating the test database");
    EXPECT_TRUE(s.ok()) << s.ToString();
    return "postgresql://baton:" + cluster_->password() +
           "@127.0.0.1:" + std::to_string(cluster_->port()) + "/" + name;
  }

  // A store of `url` for the server instance `instance` (leases and the offer board).
  static std::unique_ptr<Store> OpenInstance(const std::string& url, const std::string& instance,
                                             Duration lease = Duration(60'000)) {
    PostgresOptions o;
    o.instance = instance;
    o.lease = lease;
    auto store = OpenPostgresStore(url, o);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (!store.ok()) return nullptr;
    return std::move(store).value();
  }

  static inline testing::PgCluster* cluster_ = nullptr;
  static inline std::string* start_error_ = nullptr;
  static inline int databases_ = 0;
};

}  // namespace baton::pg
