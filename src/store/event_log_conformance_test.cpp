// Conformance of the store-wide event order: positions, ListEvents and its filters, and
// LastEventPosition. Every Store implementation must pass these (the fixture is in
// conformance_test_util.h).
#include <baton/store.h>

#include "store/conformance_test_util.h"
#include "store/store_test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton {
namespace {

using testing::Event;
using testing::Execution;
using testing::Factories;
using testing::StoreConformance;
using testing::StoreFactory;
using testing::ToJson;

class EventLogConformance : public StoreConformance {
 protected:
  // Positions of what ListEvents returns, after checking each event is the stored one.
  std::vector<int64_t> Listed(const EventQuery& q) {
    auto events = store_->ListEvents(q);
    EXPECT_TRUE(events.ok()) << events.status().ToString();
    std::vector<int64_t> out;
    if (!events.ok()) return out;
    for (const EventRecord& e : *events) {
      auto stored = store_->GetEvents(e.execution_id, e.seq - 1, 1);
      EXPECT_TRUE(stored.ok() && stored->size() == 1);
      if (stored.ok() && stored->size() == 1) {
        EXPECT_EQ(ToJson(e), ToJson(stored->front()));
      }
      out.push_back(e.position);
    }
    return out;
  }
  static EventQuery Query(const std::string& ns, int64_t after = 0, size_t limit = 0) {
    EventQuery q;
    q.ns = ns;
    q.after = after;
    q.limit = limit;
    return q;
  }
};

EventRecord At(const std::string& execution, int64_t seq, int64_t position) {
  EventRecord e = Event(execution, seq);
  e.position = position;
  return e;
}

ExecutionRecord In(const std::string& ns, const std::string& id, const std::string& workflow) {
  ExecutionRecord e = Execution(id, ExecutionStatus::kRunning, 1, workflow);
  e.ns = ns;
  return e;
}

// a (default, x), b (default, y), c (team, x) and a record-less "ghost", interleaved.
WriteBatch Interleaved() {
  WriteBatch b;
  b.executions = {In(kDefaultNamespace, "a", "x"), In(kDefaultNamespace, "b", "y"),
                  In("team", "c", "x")};
  b.events = {At("a", 1, 1), At("b", 1, 2), At("c", 1, 3), At("a", 2, 4), At("ghost", 1, 5),
              At("b", 2, 6), At("a", 3, 7), At("c", 2, 8), At("b", 3, 9)};
  return b;
}

using Positions = std::vector<int64_t>;

TEST_P(EventLogConformance, ListsEventsInPositionOrderByNamespaceWorkflowAndExecution) {
  Commit(Interleaved());
  EXPECT_EQ(Listed(Query(kDefaultNamespace)), (Positions{1, 2, 4, 6, 7, 9}));
  EXPECT_EQ(Listed(Query("team")), (Positions{3, 8}));
  EXPECT_EQ(Listed(Query("nobody")), Positions{});

  EventQuery x = Query(kDefaultNamespace);
  x.workflow = "x";
  EXPECT_EQ(Listed(x), (Positions{1, 4, 7}));
  x.ns = "team";
  EXPECT_EQ(Listed(x), (Positions{3, 8}));

  EventQuery one = Query(kDefaultNamespace);
  one.execution_id = "b";
  EXPECT_EQ(Listed(one), (Positions{2, 6, 9}));
  one.workflow = "x";  // b runs y: nothing
  EXPECT_EQ(Listed(one), Positions{});
  one.workflow.clear();
  one.execution_id = "c";  // another namespace's execution: nothing
  EXPECT_EQ(Listed(one), Positions{});
  one.execution_id = "ghost";  // no execution record: no namespace
  EXPECT_EQ(Listed(one), Positions{});
}

TEST_P(EventLogConformance, AfterAndLimitPageWithoutGapsOrRepeats) {
  Commit(Interleaved());
  EXPECT_EQ(Listed(Query(kDefaultNamespace, 4)), (Positions{6, 7, 9}));
  EXPECT_EQ(Listed(Query(kDefaultNamespace, 5, 2)), (Positions{6, 7}));
  EXPECT_EQ(Listed(Query(kDefaultNamespace, 9)), Positions{});
  EventQuery one = Query(kDefaultNamespace, 2, 1);
  one.execution_id = "a";
  EXPECT_EQ(Listed(one), (Positions{4}));
  // Pages of two, each after the last position of the one before.
  Positions paged;
  for (int64_t after = 0;;) {
    Positions page = Listed(Query(kDefaultNamespace, after, 2));
    paged.insert(paged.end(), page.begin(), page.end());
    if (page.size() < 2) break;
    after = page.back();
  }
  EXPECT_EQ(paged, (Positions{1, 2, 4, 6, 7, 9}));
}

TEST_P(EventLogConformance, LastEventPositionIsTheHighestStored) {
  EXPECT_EQ(*store_->LastEventPosition(), 0);
  Commit(Interleaved());
  EXPECT_EQ(*store_->LastEventPosition(), 9);
  // Positions committed out of order are listed in order; the highest stays the last.
  WriteBatch late;
  late.events = {At("a", 5, 20), At("a", 4, 15)};
  Commit(late);
  EXPECT_EQ(*store_->LastEventPosition(), 20);
  EXPECT_EQ(Listed(Query(kDefaultNamespace, 9)), (Positions{15, 20}));
}

// Where a recovered or retried execution's log goes on: its own highest seq, whatever the
// other executions hold, the order seqs were committed in, or the log's length.
TEST_P(EventLogConformance, LastEventSeqIsTheExecutionsOwnHighest) {
  EXPECT_EQ(*store_->LastEventSeq("a"), 0);  // nothing stored under it
  Commit(Interleaved());
  EXPECT_EQ(*store_->LastEventSeq("a"), 3);
  EXPECT_EQ(*store_->LastEventSeq("c"), 2);
  EXPECT_EQ(*store_->LastEventSeq("ghost"), 1);  // no execution record: the events count
  EXPECT_EQ(*store_->LastEventSeq("d"), 0);
  WriteBatch late;
  late.events = {At("b", 7, 20), At("b", 5, 15)};
  Commit(late);
  EXPECT_EQ(*store_->LastEventSeq("b"), 7);
  EXPECT_EQ(*store_->LastEventSeq("a"), 3);
  // Longer than a page of GetEvents (10,000).
  WriteBatch log;
  for (int64_t seq = 1; seq <= 10'001; ++seq) log.events.push_back(At("long", seq, 100 + seq));
  Commit(log);
  EXPECT_EQ(*store_->LastEventSeq("long"), 10'001);
}

TEST_P(EventLogConformance, EventsWithoutAPositionAreNeverListed) {
  WriteBatch b;
  b.executions = {In(kDefaultNamespace, "a", "x")};
  b.events = {At("a", 1, 0), At("a", 2, 3)};
  Commit(b);
  EXPECT_EQ(Listed(Query(kDefaultNamespace)), (Positions{3}));
  EXPECT_EQ(Listed(Query(kDefaultNamespace, -1)), (Positions{3}));
  EXPECT_EQ(store_->GetEvents("a", 0, 0)->size(), 2u);
  EXPECT_EQ(*store_->LastEventPosition(), 3);
}

TEST_P(EventLogConformance, OwnedCommitsAreListedLikeCopiedOnes) {
  WriteBatch first;  // a new execution's whole log in one batch (what MemoryStore adopts)
  first.executions = {In(kDefaultNamespace, "a", "x")};
  first.events = {At("a", 1, 1), At("a", 2, 2), At("a", 3, 3)};
  ASSERT_TRUE(store_->CommitOwned(std::move(first)).ok());
  WriteBatch second;
  second.executions = {In(kDefaultNamespace, "b", "x")};
  second.events = {At("b", 1, 4), At("a", 4, 5)};
  ASSERT_TRUE(store_->CommitOwned(std::move(second)).ok());
  EXPECT_EQ(Listed(Query(kDefaultNamespace)), (Positions{1, 2, 3, 4, 5}));
  EXPECT_EQ(*store_->LastEventPosition(), 5);
}

// Longer than one scan window of the SQLite store (4,096 index entries), with a filter
// that matches rarely: the scan goes on across windows, and a limit can end it mid-way.
TEST_P(EventLogConformance, SelectiveFilterOverALongLog) {
  WriteBatch b;
  b.executions = {In(kDefaultNamespace, "busy", "noise"), In(kDefaultNamespace, "rare", "x")};
  int64_t busy_seq = 0, rare_seq = 0;
  Positions want;
  for (int64_t p = 1; p <= 10'000; ++p) {
    if (p % 1'500 == 0) {
      b.events.push_back(At("rare", ++rare_seq, p));
      want.push_back(p);
    } else {
      b.events.push_back(At("busy", ++busy_seq, p));
    }
  }
  Commit(b);
  EventQuery q = Query(kDefaultNamespace);
  q.workflow = "x";
  EXPECT_EQ(Listed(q), want);
  q.limit = 4;
  EXPECT_EQ(Listed(q), Positions(want.begin(), want.begin() + 4));
  q.after = 4'500;
  q.limit = 2;
  EXPECT_EQ(Listed(q), (Positions{6'000, 7'500}));
  q.workflow.clear();
  q.execution_id = "rare";
  q.limit = 0;
  EXPECT_EQ(Listed(q), (Positions{6'000, 7'500, 9'000}));
  EXPECT_EQ(Listed(Query(kDefaultNamespace, 9'997)), (Positions{9'998, 9'999, 10'000}));
  EXPECT_EQ(store_->ListEvents(Query(kDefaultNamespace))->size(), 10'000u);
  EXPECT_EQ(*store_->LastEventPosition(), 10'000);
}

INSTANTIATE_TEST_SUITE_P(AllStores, EventLogConformance, ::testing::ValuesIn(Factories()),
                         [](const ::testing::TestParamInfo<StoreFactory>& p) {
                           return p.param.name;
                         });

}  // namespace
}  // namespace baton
