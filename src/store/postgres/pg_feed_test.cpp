// The shared feed (SharedFeed) of instances on one database: one order for the events
// of every instance, positions that resume, and no event listed before every
// transaction that could still add one below it has ended.
#include <baton/postgres_store.h>

#include "store/postgres/pg_test_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace baton::pg {
namespace {

class PgFeed : public PgTest {
 protected:
  // An execution of namespace `ns` started by a store, with its first `events` events.
  static WriteBatch Started(const std::string& id, const std::string& ns, int events) {
    WriteBatch b;
    ExecutionRecord e;
    e.id = id;
    e.ns = ns;
    e.workflow = "w-" + ns;
    e.status = ExecutionStatus::kRunning;
    b.executions.push_back(e);
    for (int seq = 1; seq <= events; ++seq) b.events.push_back(Event(id, seq));
    return b;
  }
  static EventRecord Event(const std::string& id, int64_t seq) {
    EventRecord ev;
    ev.execution_id = id;
    ev.seq = seq;
    ev.type = "step.completed";
    ev.position = 1000 + seq;  // an engine's number: the feed replaces it
    return ev;
  }
  static WriteBatch More(const std::string& id, int64_t from, int64_t to) {
    WriteBatch b;
    for (int64_t seq = from; seq <= to; ++seq) b.events.push_back(Event(id, seq));
    return b;
  }
  // "id/seq" of each entry.
  static std::vector<std::string> Names(const std::vector<FeedEntry>& entries) {
    std::vector<std::string> out;
    for (const FeedEntry& e : entries) {
      out.push_back(e.event.execution_id + "/" + std::to_string(e.event.seq));
    }
    return out;
  }
  static std::vector<FeedEntry> All(Store& s, int64_t after = 0) {
    auto entries = s.feed()->FeedAfter(after, 1000);
    EXPECT_TRUE(entries.ok()) << entries.status().ToString();
    return entries.ok() ? std::move(entries).value() : std::vector<FeedEntry>{};
  }
  // All() once it lists `n` entries: a transaction open anywhere in the cluster (another
  // test's database runs beside this one) holds the listing back until it ends.
  static std::vector<FeedEntry> AllOf(Store& s, size_t n, int64_t after = 0) {
    std::vector<FeedEntry> entries;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while ((entries = All(s, after)).size() < n && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(entries.size(), n);
    return entries;
  }
};

TEST_F(PgFeed, EveryInstanceListsTheEventsOfAllInCommitOrderWithTheSamePositions) {
  const std::string url = NewDatabase();
  auto a = OpenInstance(url, "a");
  auto b = OpenInstance(url, "b");
  ASSERT_TRUE(a && b);
  ASSERT_NE(a->feed(), nullptr);
  ASSERT_TRUE(a->leases()->Renew().ok());
  ASSERT_TRUE(b->leases()->Renew().ok());
  ASSERT_TRUE(a->Commit(Started("x", "n1", 2)).ok());
  ASSERT_TRUE(b->Commit(Started("y", "n2", 1)).ok());
  ASSERT_TRUE(a->Commit(More("x", 3, 3)).ok());
  const std::vector<FeedEntry> from_a = AllOf(*a, 4);
  const std::vector<FeedEntry> from_b = AllOf(*b, 4);
  ASSERT_EQ(from_a.size(), 4u);
  EXPECT_EQ(Names(from_a), (std::vector<std::string>{"x/1", "x/2", "y/1", "x/3"}));
  ASSERT_EQ(from_a.size(), from_b.size());
  for (size_t i = 0; i < from_a.size(); ++i) {
    EXPECT_EQ(from_a[i].event.position, from_b[i].event.position);
    if (i > 0) {
      EXPECT_GT(from_a[i].event.position, from_a[i - 1].event.position);
    }
  }
  EXPECT_EQ(from_a[2].ns, "n2");
  EXPECT_EQ(from_a[2].workflow, "w-n2");
  // Resuming after any position lists exactly what follows it.
  EXPECT_EQ(Names(AllOf(*b, 2, from_a[1].event.position)),
            (std::vector<std::string>{"y/1", "x/3"}));
  auto end = b->feed()->FeedEnd();
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_GE(*end, from_a.back().event.position);
  EXPECT_TRUE(All(*a, from_a.back().event.position).empty());
  // Every read of events gives the same positions, and lists a namespace by them.
  auto stored = b->GetEvents("x", 0, 0);
  ASSERT_TRUE(stored.ok());
  ASSERT_EQ(stored->size(), 3u);
  EXPECT_EQ((*stored)[2].position, from_a[3].event.position);
  EventQuery q;
  q.ns = "n1";
  q.after = from_a[0].event.position;
  auto listed = a->ListEvents(q);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].seq, 2);
  EXPECT_EQ((*listed)[1].position, from_a[3].event.position);
}

// A transaction still open may yet commit events numbered below those committed after it
// began: nothing past it is listed until it ends, so a reader never skips them.
TEST_F(PgFeed, NothingIsListedPastATransactionStillOpen) {
  const std::string url = NewDatabase();
  auto a = OpenInstance(url, "a");
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->leases()->Renew().ok());
  ASSERT_TRUE(a->Commit(Started("x", "n", 1)).ok());
  const std::vector<FeedEntry> first = AllOf(*a, 1);
  ASSERT_EQ(first.size(), 1u);
  auto open = Connection::Open(url);
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  ASSERT_TRUE(open->Script("BEGIN", "begin").ok());
  ASSERT_TRUE(open->Exec("SELECT pg_current_xact_id()", {}, "taking a transaction id").ok());
  ASSERT_TRUE(a->Commit(More("x", 2, 3)).ok());
  EXPECT_EQ(Names(All(*a)), std::vector<std::string>{"x/1"});
  auto end = a->feed()->FeedEnd();
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(*end, first[0].event.position);
  EventQuery q;
  q.ns = "n";
  auto listed = a->ListEvents(q);
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->size(), 1u);
  // Events by execution are not held back: they are read by seq, not resumed by position.
  auto by_seq = a->GetEvents("x", 0, 0);
  ASSERT_TRUE(by_seq.ok());
  EXPECT_EQ(by_seq->size(), 3u);
  ASSERT_TRUE(open->Script("ROLLBACK", "rollback").ok());
  EXPECT_EQ(Names(AllOf(*a, 3)), (std::vector<std::string>{"x/1", "x/2", "x/3"}));
}

// Rows of a database written before the feed existed get positions in their old order.
TEST_F(PgFeed, EventsWrittenBeforeTheFeedMigrationKeepTheirOrder) {
  const std::string url = NewDatabase();
  auto c = Connection::Open(url);
  ASSERT_TRUE(c.ok());
  {
    auto one = OpenPostgresStore(url, {});
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    ASSERT_TRUE((*one)->Commit(Started("x", "n", 3)).ok());
  }
  // As the database was at migration 3: no feed columns, positions from an engine (and
  // none of the later migrations).
  ASSERT_TRUE(c->Script("ALTER TABLE events DROP COLUMN feed_xid, DROP COLUMN feed_ord; "
                        "DROP TABLE cache_deletions; "
                        "DROP TRIGGER cache_entries_changed ON cache_entries; "
                        "DROP TRIGGER cache_entries_deleted ON cache_entries; "
                        "DROP FUNCTION baton_cache_entry_changed, baton_cache_entry_deleted; "
                        "ALTER TABLE cache_entries DROP COLUMN changed_xid; "
                        "DROP TABLE pool_holds; "
                        "DROP FUNCTION baton_pool_hold; "
                        "DELETE FROM schema_migrations WHERE version >= 4",
                        "going back to migration 3")
                  .ok());
  auto a = OpenInstance(url, "a");
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->leases()->Renew().ok());
  ASSERT_TRUE(a->Commit(More("x", 4, 4)).ok());
  const std::vector<FeedEntry> all = AllOf(*a, 4);
  EXPECT_EQ(Names(all), (std::vector<std::string>{"x/1", "x/2", "x/3", "x/4"}));
  for (size_t i = 1; i < all.size(); ++i) {
    EXPECT_GT(all[i].event.position, all[i - 1].event.position);
  }
}

TEST_F(PgFeed, OneServerWithoutAnInstanceNameHasNoSharedFeed) {
  auto one = OpenPostgresStore(NewDatabase(), {});
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ((*one)->feed(), nullptr);
}

}  // namespace
}  // namespace baton::pg
