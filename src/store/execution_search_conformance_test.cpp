// Conformance of the execution searches the dashboard uses: ExecutionFilter::text over
// ids, inputs and outputs, and CountExecutions by status. Every Store implementation must
// pass these (the fixture is in conformance_test_util.h).
#include <baton/store.h>

#include "store/conformance_test_util.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace baton {
namespace {

using testing::Execution;
using testing::Factories;
using testing::StoreConformance;
using testing::StoreFactory;

class ExecutionSearchConformance : public StoreConformance {
 protected:
  void SetUp() override {
    StoreConformance::SetUp();
    WriteBatch b;
    ExecutionRecord a = Execution("ex-apple", ExecutionStatus::kCompleted, 100, "fruit");
    a.input = {{"customer", "acme"}, {"note", "<script>x</script>"}};
    a.output = {{"shipped", "crate-17"}};
    ExecutionRecord p = Execution("ex-pear", ExecutionStatus::kFailed, 200, "fruit");
    p.input = {{"customer", "globex"}};
    ExecutionRecord k = Execution("ex-kiwi", ExecutionStatus::kRunning, 300, "fruit");
    k.input = {{"customer", "acme"}, {"size", 3}};
    ExecutionRecord o = Execution("ex-other", ExecutionStatus::kCompleted, 400, "veg");
    o.input = {{"customer", "acme"}};
    o.ns = "team-b";
    b.executions = {a, p, k, o};
    Commit(b);
  }
  std::vector<std::string> Ids(ExecutionFilter f) {
    auto got = store_->ListExecutions(f);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    std::vector<std::string> out;
    if (got.ok()) {
      for (const ExecutionRecord& e : *got) out.push_back(e.id);
    }
    return out;
  }
  std::map<std::string, int64_t> Counts(ExecutionFilter f) {
    auto got = store_->CountExecutions(f);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    std::map<std::string, int64_t> out;
    if (got.ok()) {
      for (const ExecutionCount& c : *got) out[ToString(c.status)] = c.count;
    }
    return out;
  }
};

using V = std::vector<std::string>;

TEST_P(ExecutionSearchConformance, TextMatchesTheIdTheInputOrTheOutput) {
  ExecutionFilter f;
  f.ns = kDefaultNamespace;
  f.text = "acme";
  EXPECT_EQ(Ids(f), (V{"ex-kiwi", "ex-apple"})) << "in the input; other namespaces apart";
  f.text = "crate-17";
  EXPECT_EQ(Ids(f), (V{"ex-apple"})) << "in the output";
  f.text = "pear";
  EXPECT_EQ(Ids(f), (V{"ex-pear"})) << "in the id";
  f.text = "<script>";
  EXPECT_EQ(Ids(f), (V{"ex-apple"})) << "markup is text like any other";
  f.text = "\"size\":3";
  EXPECT_EQ(Ids(f), (V{"ex-kiwi"})) << "compact JSON text";
  f.text = "ACME";
  EXPECT_TRUE(Ids(f).empty()) << "case-sensitive";
  f.text = "acme";
  f.status = ExecutionStatus::kRunning;
  EXPECT_EQ(Ids(f), (V{"ex-kiwi"})) << "with the other filters";
  f.status.reset();
  f.limit = 1;
  EXPECT_EQ(Ids(f), (V{"ex-kiwi"}));
  f.after = ExecutionCursor{300, "ex-kiwi"};
  EXPECT_EQ(Ids(f), (V{"ex-apple"})) << "paged";
}

TEST_P(ExecutionSearchConformance, CountsByStatusIgnoreTheStatusAndThePage) {
  ExecutionFilter f;
  f.ns = kDefaultNamespace;
  EXPECT_EQ(Counts(f),
            (std::map<std::string, int64_t>{{"completed", 1}, {"failed", 1}, {"running", 1}}));
  f.status =
      ExecutionStatus::kFailed;  // not applied: the counts are what a status filter picks from
  f.limit = 1;
  f.after = ExecutionCursor{150, "ex-zzz"};
  EXPECT_EQ(Counts(f),
            (std::map<std::string, int64_t>{{"completed", 1}, {"failed", 1}, {"running", 1}}));
  f.text = "acme";
  EXPECT_EQ(Counts(f), (std::map<std::string, int64_t>{{"completed", 1}, {"running", 1}}));
  f.text.clear();
  f.created_from = 150;
  f.created_until = 300;
  EXPECT_EQ(Counts(f), (std::map<std::string, int64_t>{{"failed", 1}}));
  ExecutionFilter all;
  EXPECT_EQ(Counts(all),
            (std::map<std::string, int64_t>{{"completed", 2}, {"failed", 1}, {"running", 1}}));
  ExecutionFilter none;
  none.workflow = "nothing";
  EXPECT_TRUE(Counts(none).empty());
}

INSTANTIATE_TEST_SUITE_P(AllStores, ExecutionSearchConformance, ::testing::ValuesIn(Factories()),
                         [](const ::testing::TestParamInfo<StoreFactory>& p) {
                           return p.param.name;
                         });

}  // namespace
}  // namespace baton
