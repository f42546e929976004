// Conformance of circuit breaker records: one per namespace and key, replaced whole.
// Every Store implementation must pass these (the fixture is in conformance_test_util.h).
#include <baton/store.h>

#include "store/conformance_test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton {
namespace {

using testing::Factories;
using testing::RichJson;
using testing::StoreConformance;
using testing::StoreFactory;

class BreakerConformance : public StoreConformance {};

BreakerRecord Breaker(const std::string& ns, const std::string& key) {
  BreakerRecord r;
  r.ns = ns;
  r.key = key;
  r.state = kBreakerOpen;
  r.failures = 5;
  r.successes = 1;
  r.opened_at = 1000;
  r.probe_at = 31'000;
  r.trips = 3;
  r.last_error = Json{{"code", "HTTP_STATUS"}, {"message", "503"}};
  r.failure_threshold = 5;
  r.recovery_timeout_ms = 30'000;
  r.success_threshold = 2;
  r.updated_at = 1000;
  return r;
}

Json AsJson(const BreakerRecord& r) {
  return {{"ns", r.ns},
          {"key", r.key},
          {"state", r.state},
          {"failures", r.failures},
          {"successes", r.successes},
          {"opened_at", r.opened_at},
          {"probe_at", r.probe_at},
          {"trips", r.trips},
          {"last_error", r.last_error},
          {"failure_threshold", r.failure_threshold},
          {"recovery_timeout_ms", r.recovery_timeout_ms},
          {"success_threshold", r.success_threshold},
          {"updated_at", r.updated_at}};
}

Json AsJson(const std::vector<BreakerRecord>& rows) {
  Json out = Json::array();
  for (const BreakerRecord& r : rows) out.push_back(AsJson(r));
  return out;
}

TEST_P(BreakerConformance, BreakersListByNamespaceThenKeyWithEveryField) {
  WriteBatch b;
  b.breakers = {Breaker("team-b", "api.example.com"), Breaker("team-a", "train"),
                Breaker("team-a", "api.example.com")};
  b.breakers[1].last_error = RichJson();
  b.breakers[2].state = kBreakerHalfOpen;
  Commit(b);
  auto a = store_->ListBreakers("team-a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(AsJson(*a), AsJson(std::vector<BreakerRecord>{b.breakers[2], b.breakers[1]}));
  auto all = store_->ListBreakers("");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(AsJson(*all),
            AsJson(std::vector<BreakerRecord>{b.breakers[2], b.breakers[1], b.breakers[0]}));
  EXPECT_TRUE(store_->ListBreakers("team-c")->empty());
  EXPECT_TRUE(store_->ListBreakers("team")->empty());  // a prefix is not a namespace
}

TEST_P(BreakerConformance, AWriteReplacesTheBreakerOfItsNamespaceAndKey) {
  WriteBatch b;
  b.breakers = {Breaker("team-a", "train")};
  Commit(b);
  BreakerRecord closed = b.breakers[0];
  closed.state = kBreakerClosed;
  closed.failures = 0;
  closed.successes = 0;
  closed.last_error = nullptr;
  closed.updated_at = 9000;
  WriteBatch update;
  update.breakers = {closed};
  Commit(update);
  auto rows = store_->ListBreakers("team-a");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(AsJson(*rows), AsJson(std::vector<BreakerRecord>{closed}));
}

PoolRecord Pool(const std::string& ns, const std::string& name, int slots) {
  PoolRecord p;
  p.ns = ns;
  p.name = name;
  p.slots = slots;
  p.created_at = 100;
  p.updated_at = 200;
  return p;
}

std::vector<std::string> PoolRows(const std::vector<PoolRecord>& pools) {
  std::vector<std::string> out;
  for (const PoolRecord& p : pools) {
    out.push_back(p.ns + "/" + p.name + "=" + std::to_string(p.slots) + "@" +
                  std::to_string(p.created_at) + "," + std::to_string(p.updated_at));
  }
  return out;
}

TEST_P(BreakerConformance, PoolsAreUpsertedByNamespaceAndNameListedAndDeleted) {
  WriteBatch b;
  b.pools = {Pool("team-b", "gpu", 2), Pool("team-a", "gpu", 4), Pool("team-a", "db", 1)};
  Commit(b);
  EXPECT_EQ(PoolRows(*store_->ListPools("")),
            (std::vector<std::string>{"team-a/db=1@100,200", "team-a/gpu=4@100,200",
                                      "team-b/gpu=2@100,200"}));
  PoolRecord resized = Pool("team-a", "gpu", 8);
  resized.updated_at = 300;
  WriteBatch update;
  update.pools = {resized};
  Commit(update);
  EXPECT_EQ(PoolRows(*store_->ListPools("team-a")),
            (std::vector<std::string>{"team-a/db=1@100,200", "team-a/gpu=8@100,300"}));
  EXPECT_EQ(store_->DeletePool("team-b", "db").code(), errc::kNotFound);
  ASSERT_TRUE(store_->DeletePool("team-a", "gpu").ok());
  EXPECT_EQ(PoolRows(*store_->ListPools("team-a")),
            (std::vector<std::string>{"team-a/db=1@100,200"}));
}

INSTANTIATE_TEST_SUITE_P(AllStores, BreakerConformance, ::testing::ValuesIn(Factories()),
                         [](const ::testing::TestParamInfo<StoreFactory>& p) {
                           return p.param.name;
                         });

}  // namespace
}  // namespace baton
