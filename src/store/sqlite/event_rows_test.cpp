// The SQLite store's event rows (event_rows.h): runs of one execution's events in one row,
// read back event by event; duplicates refused whichever row holds the seq.
#include <baton/sqlite_store.h>
#include <baton/store.h>

#include "store/conformance_test_util.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/sqlite_test_util.h"
#include "store/store_test_util.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

namespace baton {
namespace {

using testing::Event;
using testing::Execution;
using testing::MakeOldDatabase;
using testing::RawQuery;
using testing::TempDir;
using testing::ToJson;

// Event `seq` of `execution` at `position` in the store's log.
EventRecord At(const std::string& execution, int64_t seq, int64_t position) {
  EventRecord e = Event(execution, seq, "step.ready", "s" + std::to_string(seq));
  e.position = position;
  return e;
}

std::vector<EventRecord> Slice(const std::vector<EventRecord>& all, size_t from, size_t n) {
  return {all.begin() + static_cast<ptrdiff_t>(from),
          all.begin() + static_cast<ptrdiff_t>(std::min(all.size(), from + n))};
}

class EventRows : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = OpenSqliteStore(path_);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened.value());
    WriteBatch b;
    b.executions = {Execution("e", ExecutionStatus::kRunning, 1),
                    Execution("f", ExecutionStatus::kRunning, 2)};
    ASSERT_TRUE(store_->Commit(b).ok());
  }
  std::string Rows(const std::string& execution) {
    return RawQuery(
        path_, ("SELECT COUNT(*) FROM events WHERE execution_id = '" + execution + "'").c_str());
  }
  std::vector<EventRecord> Listed(int64_t after, size_t limit, const std::string& execution = "") {
    EventQuery q;
    q.ns = "default";
    q.after = after;
    q.limit = limit;
    q.execution_id = execution;
    auto events = store_->ListEvents(q);
    EXPECT_TRUE(events.ok()) << events.status().ToString();
    return events.ok() ? *events : std::vector<EventRecord>{};
  }

  TempDir dir_;
  std::string path_ = dir_.File("baton.db");
  std::unique_ptr<Store> store_;
};

TEST_F(EventRows, ARunOfOneExecutionIsOneRowAndReadsBackEventByEvent) {
  // e 1..5 at positions 1..5, f 1..2 at 6..7, e 6 at 8: three runs.
  WriteBatch b;
  for (int64_t seq = 1; seq <= 5; ++seq) b.events.push_back(At("e", seq, seq));
  b.events.push_back(At("f", 1, 6));
  b.events.push_back(At("f", 2, 7));
  b.events.push_back(At("e", 6, 8));
  b.events[2].data = Json{{"error", {{"code", "X"}, {"message", "\"quoted\" \u00e9"}}}};
  b.events[3].data = Json();  // null
  b.events[3].attempt = 7;
  ASSERT_TRUE(store_->Commit(b).ok());
  EXPECT_EQ(Rows("e"), "2");
  EXPECT_EQ(Rows("f"), "1");

  std::vector<EventRecord> e(b.events.begin(), b.events.begin() + 5);
  e.push_back(b.events[7]);
  EXPECT_EQ(ToJson(*store_->GetEvents("e", 0, 0)), ToJson(e));
  // A range that starts inside a row, and a limit that ends inside one.
  EXPECT_EQ(ToJson(*store_->GetEvents("e", 2, 2)), ToJson(Slice(e, 2, 2)));
  EXPECT_EQ(ToJson(*store_->GetEvents("e", 4, 0)), ToJson(Slice(e, 4, 2)));
  EXPECT_EQ(*store_->LastEventSeq("e"), 6);
  EXPECT_EQ(*store_->LastEventSeq("f"), 2);
  EXPECT_EQ(*store_->LastEventPosition(), 8);

  // In position order across executions, from inside a row.
  EXPECT_EQ(ToJson(Listed(0, 0)), ToJson(b.events));
  EXPECT_EQ(ToJson(Listed(3, 3)), ToJson(Slice(b.events, 3, 3)));
  EXPECT_EQ(ToJson(Listed(6, 0)), ToJson(Slice(b.events, 6, 2)));
  EXPECT_EQ(ToJson(Listed(2, 2, "e")), ToJson(Slice(e, 2, 2)));
}

TEST_F(EventRows, EventsWithoutPositionsAndRunsThatBreakStayApart) {
  WriteBatch b;
  b.events = {At("e", 1, 0),  At("e", 2, 0),  At("e", 3, 0),  // one row: no positions
              At("f", 1, 10), At("f", 2, 12),                 // a gap in positions: two
              At("f", 4, 13)};                                // a gap in seqs: a third
  ASSERT_TRUE(store_->Commit(b).ok());
  EXPECT_EQ(Rows("e"), "1");
  EXPECT_EQ(Rows("f"), "3");
  EXPECT_EQ(ToJson(*store_->GetEvents("e", 0, 0)), ToJson(Slice(b.events, 0, 3)));
  EXPECT_EQ(ToJson(*store_->GetEvents("f", 0, 0)), ToJson(Slice(b.events, 3, 3)));
  // Events without a position are never listed by position.
  EXPECT_EQ(ToJson(Listed(0, 0)), ToJson(Slice(b.events, 3, 3)));
}

TEST_F(EventRows, LargeDataSplitsARunIntoRowsThatFitTheirPage) {
  WriteBatch b;
  for (int64_t seq = 1; seq <= 40; ++seq) {
    b.events.push_back(At("e", seq, seq));
    b.events.back().data = Json{{"blob", std::string(static_cast<size_t>(seq * 10), 'x')}};
  }
  ASSERT_TRUE(store_->Commit(b).ok());
  const int rows = std::stoi(Rows("e"));
  EXPECT_GT(rows, 40 / 16);
  EXPECT_LT(rows, 40);
  EXPECT_EQ(RawQuery(path_, "SELECT MAX(LENGTH(earlier)) <= 768 FROM events"), "1");
  EXPECT_EQ(ToJson(*store_->GetEvents("e", 0, 0)), ToJson(b.events));
  EXPECT_EQ(ToJson(Listed(17, 5)), ToJson(Slice(b.events, 17, 5)));
}

// Values the engine does not write but the Store API takes come back as the other stores
// return them: negative attempts, seq 0, negative positions, invalid UTF-8, huge seqs.
// (Found by review: each of these read back changed, or made the log unreadable.)
TEST_F(EventRows, UnusualValuesComeBackUnchanged) {
  WriteBatch b;
  b.events = {At("e", 0, 0), At("e", 1, 0), At("e", 2, 0)};
  b.events[0].attempt = -1;         // in `earlier`
  b.events[1].step_id = "bad\xff";  // invalid UTF-8: ends its run, kept in the row
  b.events[1].type = "t\xfe";
  b.events.push_back(At("f", 1, -2));  // negative positions never join a run
  b.events.push_back(At("f", 2, -1));
  b.events.push_back(At("f", 3, 0));
  const int64_t max = std::numeric_limits<int64_t>::max();
  for (int64_t seq : {max - 1, max}) {  // not through Event(): its time is 1000 + seq
    EventRecord e;
    e.execution_id = "g";
    e.seq = seq;
    e.type = "step.ready";
    e.time = seq;
    b.events.push_back(e);
  }
  ASSERT_TRUE(store_->Commit(b).ok());
  EXPECT_EQ(Rows("e"), "2");
  EXPECT_EQ(Rows("f"), "3");
  EXPECT_EQ(Rows("g"), "1");
  auto e = store_->GetEvents("e", -1, 0);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(ToJson(*e), ToJson(Slice(b.events, 0, 3)));
  EXPECT_EQ(e->at(1).step_id, "bad\xff");
  EXPECT_EQ(ToJson(*store_->GetEvents("f", 0, 0)), ToJson(Slice(b.events, 3, 3)));
  EXPECT_EQ(ToJson(*store_->GetEvents("g", 0, 0)), ToJson(Slice(b.events, 6, 2)));
}

// The primary key holds only each row's last seq: a seq stored inside a row must still
// fail the commit, whether the new row holds one event or a run, and change nothing.
TEST_F(EventRows, ASeqStoredInsideARowFailsTheCommit) {
  WriteBatch first;
  for (int64_t seq = 1; seq <= 5; ++seq) first.events.push_back(At("e", seq, seq));
  ASSERT_TRUE(store_->Commit(first).ok());
  ASSERT_EQ(Rows("e"), "1");

  WriteBatch inside;  // seq 3 alone
  inside.events = {At("e", 3, 6)};
  WriteBatch overlapping;  // 5..7 as one row
  overlapping.events = {At("e", 5, 6), At("e", 6, 7), At("e", 7, 8)};
  WriteBatch before;  // seq 1, the first of the stored row
  before.events = {At("e", 1, 6)};
  for (const WriteBatch* bad : {&inside, &overlapping, &before}) {
    Status s = store_->Commit(*bad);
    EXPECT_EQ(s.code(), errc::kStore) << s.ToString();
    EXPECT_NE(s.message().find("stored already"), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(ToJson(*store_->GetEvents("e", 0, 0)), ToJson(first.events));

  WriteBatch next;
  next.events = {At("e", 6, 6), At("e", 7, 7)};
  ASSERT_TRUE(store_->Commit(next).ok());
  EXPECT_EQ(Rows("e"), "2");
  EXPECT_EQ(store_->GetEvents("e", 0, 0)->size(), 7u);
}

// A database written before migration 17 has one row per event: read as before, appended
// to in runs, and its seqs still refused twice.
TEST(EventRowsMigration, RowsWrittenBeforeReadAsOneEventEach) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  ASSERT_EQ(MakeOldDatabase(path, sqlite::kPackedEventsVersion - 1, R"sql(
INSERT INTO executions (id, workflow, version, status, priority, parent_id, created_at,
                        started_at, completed_at, deadline)
  VALUES ('e', 'wf', 1, 'running', 0, '', 1, 1, 0, 0);
INSERT INTO events (execution_id, seq, type, step_id, data, time, position) VALUES
  ('e', 1, 'execution.started', '', NULL, 10, 1),
  ('e', 2, 'step.ready', 'a', '{"n":1}', 11, 2);
)sql"),
            "");
  auto store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto old = (*store)->GetEvents("e", 0, 0);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  ASSERT_EQ(old->size(), 2u);
  EXPECT_EQ(old->at(1).type, "step.ready");
  EXPECT_EQ(old->at(1).data, (Json{{"n", 1}}));

  WriteBatch again;
  again.events = {At("e", 2, 3)};
  EXPECT_EQ((*store)->Commit(again).code(), errc::kStore);
  WriteBatch next;
  next.events = {At("e", 3, 3), At("e", 4, 4)};
  ASSERT_TRUE((*store)->Commit(next).ok());
  EXPECT_EQ(RawQuery(path, "SELECT COUNT(*) FROM events"), "3");
  EXPECT_EQ((*store)->GetEvents("e", 1, 0)->size(), 3u);
  EXPECT_EQ(*(*store)->LastEventSeq("e"), 4);
}

}  // namespace
}  // namespace baton
