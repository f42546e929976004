// Conformance of the dead-letter queue: ids, replacement by id, filters, cursor pages
// and counts by workflow, step and fingerprint. Every Store implementation must pass
// these (the fixture is in conformance_test_util.h).
#include <baton/store.h>

#include "store/conformance_test_util.h"
#include "store/store_test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton {
namespace {

using testing::DeadLetter;
using testing::Factories;
using testing::RichJson;
using testing::StoreConformance;
using testing::StoreFactory;
using testing::ToJson;

class DeadLetterConformance : public StoreConformance {
 protected:
  // An entry of workflow `wf`, failing `code` at `at`.
  static DeadLetterRecord Entry(const std::string& ns, const std::string& wf,
                                const std::string& step, const std::string& code, TimeMs at) {
    DeadLetterRecord d = DeadLetter("ex-" + wf, step, RichJson(),
                                    Json::array({{{"code", code}, {"attempt", 1}}}), at);
    d.ns = ns;
    d.workflow = wf;
    d.version = 3;
    d.code = code;
    d.fingerprint = code + ": boom N";
    d.first_failed_at = at - 10;
    d.last_failed_at = at;
    d.first_attempt = 1;
    d.last_attempt = 2;
    return d;
  }
  std::vector<int64_t> Ids(const DeadLetterFilter& f) {
    auto rows = store_->ListDeadLetters(f);
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<int64_t> out;
    if (rows.ok()) {
      for (const DeadLetterRecord& d : *rows) out.push_back(d.id);
    }
    return out;
  }
};

TEST_P(DeadLetterConformance, NumbersNewEntriesAndReplacesByIdWithEveryField) {
  WriteBatch b;
  b.dead_letters = {Entry("a", "deploy", "push", "EXIT_NONZERO", 100),
                    Entry("a", "deploy", "push", "TIMEOUT", 200)};
  Commit(b);
  auto all = store_->ListDeadLetters("");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_GT((*all)[0].id, 0);
  EXPECT_GT((*all)[1].id, (*all)[0].id);
  EXPECT_EQ(ToJson(*all), ToJson(b.dead_letters));

  DeadLetterRecord replayed = (*all)[0];
  replayed.status = kDeadLetterReplayed;
  replayed.resolved_at = 300;
  replayed.replay_attempt = 3;
  WriteBatch update;
  update.dead_letters = {replayed, Entry("a", "deploy", "push", "EXIT_NONZERO", 400)};
  Commit(update);
  auto got = store_->GetDeadLetter(replayed.id);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->id, replayed.id);
  EXPECT_EQ(ToJson(*got), ToJson(replayed));
  all = store_->ListDeadLetters("");
  ASSERT_EQ(all->size(), 3u);
  EXPECT_GT((*all)[2].id, (*all)[1].id);  // never a reused id

  EXPECT_EQ(store_->GetDeadLetter(987654).status().code(), errc::kNotFound);
}

TEST_P(DeadLetterConformance, FiltersNarrowAndTheCursorPages) {
  WriteBatch b;
  b.dead_letters = {Entry("a", "deploy", "push", "EXIT_NONZERO", 100),
                    Entry("a", "deploy", "test", "TIMEOUT", 200),
                    Entry("b", "deploy", "push", "EXIT_NONZERO", 300),
                    Entry("a", "ingest", "load", "EXIT_NONZERO", 400),
                    Entry("a", "deploy", "push", "EXIT_NONZERO", 500)};
  b.dead_letters[4].status = kDeadLetterDiscarded;
  Commit(b);
  std::vector<int64_t> ids;
  for (const DeadLetterRecord& d : *store_->ListDeadLetters("")) ids.push_back(d.id);
  ASSERT_EQ(ids.size(), 5u);

  DeadLetterFilter f;
  f.ns = "a";
  f.limit = 0;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{ids[0], ids[1], ids[3], ids[4]}));
  f.workflow = "deploy";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{ids[0], ids[1], ids[4]}));
  f.status = kDeadLetterOpen;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{ids[0], ids[1]}));
  f.step_id = "push";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{ids[0]}));
  f = {};
  f.limit = 0;
  f.code = "TIMEOUT";
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{ids[1]}));
  f.code.clear();
  f.fingerprint = "EXIT_NONZERO: boom N";
  f.since = 300;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{ids[2], ids[3], ids[4]}));
  f = {};
  f.execution_id = "ex-ingest";
  f.limit = 0;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{ids[3]}));

  // Pages of two, each after the last id of the one before.
  f = {};
  f.limit = 2;
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{ids[0], ids[1]}));
  f.after_id = ids[1];
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{ids[2], ids[3]}));
  f.after_id = ids[3];
  EXPECT_EQ(Ids(f), (std::vector<int64_t>{ids[4]}));
}

TEST_P(DeadLetterConformance, CountsGroupByWorkflowStepAndFingerprintLargestFirst) {
  WriteBatch b;
  b.dead_letters = {Entry("a", "deploy", "test", "TIMEOUT", 100),
                    Entry("a", "deploy", "push", "EXIT_NONZERO", 200),
                    Entry("a", "deploy", "push", "EXIT_NONZERO", 300),
                    Entry("a", "deploy", "push", "TIMEOUT", 400),
                    Entry("b", "deploy", "push", "EXIT_NONZERO", 500)};
  Commit(b);
  DeadLetterFilter f;
  f.ns = "a";
  auto groups = store_->CountDeadLetters(f);
  ASSERT_TRUE(groups.ok()) << groups.status().ToString();
  ASSERT_EQ(groups->size(), 3u);
  const DeadLetterGroup& top = (*groups)[0];
  EXPECT_EQ(top.workflow, "deploy");
  EXPECT_EQ(top.step_id, "push");
  EXPECT_EQ(top.fingerprint, "EXIT_NONZERO: boom N");
  EXPECT_EQ(top.code, "EXIT_NONZERO");
  EXPECT_EQ(top.count, 2);
  EXPECT_EQ(top.first_failed_at, 190);
  EXPECT_EQ(top.last_failed_at, 300);
  // Ties by workflow, step, fingerprint.
  EXPECT_EQ((*groups)[1].step_id, "push");
  EXPECT_EQ((*groups)[1].code, "TIMEOUT");
  EXPECT_EQ((*groups)[2].step_id, "test");
  auto ids = store_->ListDeadLetters("");
  EXPECT_EQ(top.last_id, (*ids)[2].id);

  f.code = "TIMEOUT";
  groups = store_->CountDeadLetters(f);
  ASSERT_EQ(groups->size(), 2u);
  f = {};
  f.ns = "nobody";
  EXPECT_TRUE(store_->CountDeadLetters(f)->empty());
}

INSTANTIATE_TEST_SUITE_P(AllStores, DeadLetterConformance, ::testing::ValuesIn(Factories()),
                         [](const ::testing::TestParamInfo<StoreFactory>& p) {
                           return p.param.name;
                         });

}  // namespace
}  // namespace baton
