// Conformance of signal records: kept from arrival, updated when a step consumes them.
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

class SignalConformance : public StoreConformance {};

SignalRecord Signal(const std::string& execution, int64_t seq, const std::string& name) {
  SignalRecord r;
  r.execution_id = execution;
  r.seq = seq;
  r.ns = "team-a";
  r.name = name;
  r.payload = Json{{"seq", seq}};
  r.sent_at = 1000 + seq;
  return r;
}

Json AsJson(const SignalRecord& r) {
  return {{"execution_id", r.execution_id},
          {"seq", r.seq},
          {"ns", r.ns},
          {"name", r.name},
          {"payload", r.payload},
          {"sent_at", r.sent_at},
          {"consumed_by", r.consumed_by},
          {"consumed_at", r.consumed_at}};
}

Json AsJson(const std::vector<SignalRecord>& rows) {
  Json out = Json::array();
  for (const SignalRecord& r : rows) out.push_back(AsJson(r));
  return out;
}

TEST_P(SignalConformance, SignalsListPerExecutionInSeqOrderWithEveryField) {
  WriteBatch b;
  b.signals = {Signal("ex-2", 2, "approve"), Signal("ex-1", 1, "go"), Signal("ex-2", 1, "go")};
  b.signals[0].payload = RichJson();
  Commit(b);
  auto two = store_->ListSignals("ex-2");
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(AsJson(*two), AsJson(std::vector<SignalRecord>{b.signals[2], b.signals[0]}));
  EXPECT_EQ(store_->ListSignals("ex-1")->size(), 1u);
  EXPECT_TRUE(store_->ListSignals("ex-3")->empty());
  // An id that is a prefix of another lists only its own.
  EXPECT_TRUE(store_->ListSignals("ex-")->empty());
}

TEST_P(SignalConformance, ConsumingASignalReplacesItsRecord) {
  WriteBatch b;
  b.signals = {Signal("ex-1", 1, "approve")};
  Commit(b);
  SignalRecord taken = b.signals[0];
  taken.consumed_by = "wait-approval";
  taken.consumed_at = 5000;
  WriteBatch update;
  update.signals = {taken};
  Commit(update);
  auto rows = store_->ListSignals("ex-1");
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(AsJson(*rows), AsJson(std::vector<SignalRecord>{taken}));
}

INSTANTIATE_TEST_SUITE_P(AllStores, SignalConformance, ::testing::ValuesIn(Factories()),
                         [](const ::testing::TestParamInfo<StoreFactory>& p) {
                           return p.param.name;
                         });

}  // namespace
}  // namespace baton
