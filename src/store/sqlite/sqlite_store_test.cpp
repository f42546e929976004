// SQLite-specific behaviour; the shared contract is in conformance_test.cpp.
#include <baton/sqlite_store.h>
#include <baton/store.h>

#include "store/conformance_test_util.h"
#include "store/sqlite/migrations.h"
#include "store/sqlite/rows.h"
#include "store/sqlite/sqlite_store.h"
#include "store/sqlite/sqlite_test_util.h"
#include "store/sqlite/wal_write_buffer.h"
#include "store/store_test_util.h"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace baton {
namespace {

using testing::Assignment;
using testing::Attempt;
using testing::Event;
using testing::Execution;
using testing::Id;
using testing::MakeOldDatabase;
using testing::RawQuery;
using testing::Reassignment;
using testing::Step;
using testing::TempDir;
using testing::ToJson;
using testing::Worker;

TEST(SqliteStore, ReopeningKeepsData) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    WriteBatch b;
    b.executions = {Execution("e", ExecutionStatus::kRunning, 5)};
    b.executions[0].output = Json{{"ok", true}};
    b.steps.push_back(Step("e", "s", StepStatus::kCompleted));
    b.events = {Event("e", 1), Event("e", 2)};
    ASSERT_TRUE((*store)->Commit(b).ok());
  }
  auto store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto e = (*store)->GetExecution("e");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->output, (Json{{"ok", true}}));
  EXPECT_EQ((*store)->GetSteps("e")->size(), 1u);
  EXPECT_EQ((*store)->GetEvents("e", 0, 0)->size(), 2u);
  EXPECT_EQ((*store)->ListUnfinishedExecutions()->size(), 1u);
  // Sequence numbers stay taken across the reopen.
  WriteBatch dup;
  dup.events = {Event("e", 2)};
  EXPECT_EQ((*store)->Commit(dup).code(), errc::kStore);
}

// The definition is stored as the text it is, read back as text; an empty one is no
// definition (NULL), not '' that a resume would then fail to parse.
TEST(SqliteStore, ADefinitionIsKeptAsTextAndAnEmptyOneAsNone) {
  TempDir dir;
  auto store = OpenSqliteStore(dir.File("baton.db"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  WriteBatch b;
  b.executions = {Execution("e", ExecutionStatus::kRunning, 5),
                  Execution("f", ExecutionStatus::kRunning, 6)};
  const std::string text = "{\n  \"name\": \"wf\",  \"steps\": []\n}";
  b.executions[0].definition = std::make_shared<const std::string>(text);
  b.executions[1].definition = std::make_shared<const std::string>("");
  ASSERT_TRUE((*store)->Commit(b).ok());
  auto e = (*store)->GetExecution("e");
  ASSERT_TRUE(e.ok());
  ASSERT_NE(e->definition, nullptr);
  EXPECT_EQ(*e->definition, text);  // as written, spaces and all
  auto f = (*store)->GetExecution("f");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->definition, nullptr);
}

TEST(SqliteStore, RecordsSchemaVersionAndUsesWal) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  ASSERT_TRUE(OpenSqliteStore(path).ok());
  EXPECT_GE(sqlite::LatestSchemaVersion(), 1);
  EXPECT_EQ(RawQuery(path, "SELECT MAX(version) FROM schema_migrations"),
            std::to_string(sqlite::LatestSchemaVersion()));
  EXPECT_EQ(RawQuery(path, "SELECT COUNT(*) FROM schema_migrations"),
            std::to_string(sqlite::LatestSchemaVersion()));
  EXPECT_EQ(RawQuery(path, "PRAGMA journal_mode"), "wal");
  // Reopening applies nothing twice.
  ASSERT_TRUE(OpenSqliteStore(path).ok());
  EXPECT_EQ(RawQuery(path, "SELECT COUNT(*) FROM schema_migrations"),
            std::to_string(sqlite::LatestSchemaVersion()));
}

// Reads go through their own connection: a read is answered while a commit waits (here,
// for another connection's write lock; in a server, for its fsync). With one connection
// behind one mutex, every API read queued behind the commit in progress.
TEST(SqliteStore, AReadDoesNotWaitForACommitInProgress) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  SqliteOptions options;
  options.busy_timeout_ms = 60'000;
  auto store = OpenSqliteStore(path, options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  WriteBatch first;
  first.executions = {Execution("e", ExecutionStatus::kRunning, 5)};
  ASSERT_TRUE((*store)->Commit(first).ok());

  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  std::atomic<bool> committed{false};
  std::thread writer([&] {
    WriteBatch next;
    next.executions = {Execution("f", ExecutionStatus::kRunning, 6)};
    EXPECT_TRUE((*store)->Commit(next).ok());
    committed = true;
  });
  // Give the writer time to be inside Commit, waiting for the lock (no timing is
  // asserted: if it is not there yet, the read passes either way).
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto read = (*store)->GetExecution("e");
  EXPECT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_FALSE(committed.load()) << "the read waited for the commit";
  EXPECT_EQ((*store)->GetExecution("f").status().code(), errc::kNotFound);
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  writer.join();
  EXPECT_TRUE(committed.load());
  EXPECT_TRUE((*store)->GetExecution("f").ok());  // a read after a commit sees it
}

// Column `column` of every row of `explain` + `sql` ("EXPLAIN " gives the program's
// opcodes in column 1, "EXPLAIN QUERY PLAN " the plan's steps in column 3); empty when
// the statement does not prepare.
std::vector<std::string> Explain(const std::string& path, const std::string& explain,
                                 const std::string& sql, int column) {
  std::vector<std::string> rows;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* q = nullptr;
    const std::string text = explain + sql;
    if (sqlite3_prepare_v2(db, text.c_str(), -1, &q, nullptr) == SQLITE_OK) {
      while (sqlite3_step(q) == SQLITE_ROW) {
        const auto* value = reinterpret_cast<const char*>(sqlite3_column_text(q, column));
        rows.emplace_back(value == nullptr ? "" : value);
      }
    }
    sqlite3_finalize(q);
  }
  sqlite3_close(db);
  return rows;
}

// How many temporary b-trees (OpenEphemeral) SQLite's program for `sql` opens; -1 when
// it does not prepare.
int EphemeralTables(const std::string& path, const std::string& sql) {
  const std::vector<std::string> opcodes = Explain(path, "EXPLAIN ", sql, 1);
  if (opcodes.empty()) return -1;
  return static_cast<int>(std::count(opcodes.begin(), opcodes.end(), "OpenEphemeral"));
}

// Regression: the assignments_active index's condition was `status IN (...)`, and SQLite
// built a temporary b-tree for that list on every assignment write; freeing it returned
// the writer thread's heap to the kernel over and over (a third of the server's CPU on
// the worker path). No write of a commit may open a temporary table.
TEST(SqliteStore, NoWriteStatementBuildsATemporaryTable) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  ASSERT_TRUE(OpenSqliteStore(path).ok());
  const std::vector<std::pair<const char*, std::string>> writes = {
      {"workflow", sqlite::kUpsertWorkflow},
      {"execution", sqlite::kUpsertExecution},
      {"execution state", sqlite::kUpsertExecutionState},
      {"step", sqlite::kUpsertStep},
      {"attempt", sqlite::kUpsertAttempt},
      {"event", sqlite::kInsertEventRow},
      {"dead letter", sqlite::kUpsertDeadLetter},
      {"token", sqlite::kUpsertToken},
      {"schedule", sqlite::kUpsertSchedule},
      {"hook", sqlite::kUpsertHook},
      {"trigger", sqlite::kUpsertTrigger},
      {"delivery", sqlite::kUpsertDelivery},
      {"worker", sqlite::kUpsertWorker},
      {"assignment", sqlite::kUpsertAssignment},
      {"assignment state", sqlite::kUpsertAssignmentState},
      {"reassignment", sqlite::kInsertReassignment},
      {"signal", sqlite::kUpsertSignal},
      {"breaker", sqlite::kUpsertBreaker},
      {"pool", sqlite::kUpsertPool},
      {"cache entry", sqlite::kUpsertCacheEntry},
      {"cache touch", sqlite::kTouchCacheEntry},
      {"cache delete", sqlite::kDeleteCacheEntry},
  };
  for (const auto& [what, sql] : writes) {
    EXPECT_EQ(EphemeralTables(path, sql), 0) << what << ": " << sql;
  }
}

// The steps of SQLite's plan for `sql` ("SEARCH assignments USING INDEX ...").
std::vector<std::string> QueryPlan(const std::string& path, const std::string& sql) {
  return Explain(path, "EXPLAIN QUERY PLAN ", sql, 3);
}

// An assignment's worker-facing id is indexed only once it differs from the dispatch id
// (migration 16): a lookup by either id still searches indexes and never scans the table,
// on a new database and on one migrated from schema 15, where moved assignments stay
// found by their worker-facing id.
TEST(SqliteStore, AssignmentsAreFoundByEitherIdWithoutAScan) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  ASSERT_EQ(MakeOldDatabase(path, sqlite::kMovedAssignmentIdVersion - 1, R"sql(
INSERT INTO assignments (dispatch_id, id, ns, execution_id, step_id, attempt, command,
                         worker_id, status, progress, checkpoint, reassignments, created_at,
                         updated_at)
  VALUES ('d3', 'd3.r2', 'default', 'ex1', 's', 1, 'x', 'w1', 'running', 0, NULL, 2, 30, 30);
)sql"),
            "");
  auto store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::vector<std::string> plan = QueryPlan(path, sqlite::kSelectAssignmentById);
  ASSERT_FALSE(plan.empty());
  for (const std::string& step : plan) {
    EXPECT_EQ(step.find("SCAN assignments"), std::string::npos) << step;
  }
  WriteBatch b;
  b.assignments = {Assignment("d1", 10, "w1", "running"), Assignment("d2", 20, "w1", "running")};
  b.assignments[1].id = "d2.r1";
  ASSERT_TRUE((*store)->Commit(b).ok());
  EXPECT_EQ((*store)->GetAssignment("d1")->dispatch_id, "d1");
  EXPECT_EQ((*store)->GetAssignment("d2")->id, "d2.r1");
  EXPECT_EQ((*store)->GetAssignment("d2.r1")->dispatch_id, "d2");
  EXPECT_EQ((*store)->GetAssignment("d3.r2")->dispatch_id, "d3");
  EXPECT_EQ((*store)->GetAssignment("d1.r1").status().code(), errc::kNotFound);
}

// Migration 18 drops executions_created and assignments_execution: an execution's
// assignments are a range of the primary key (their dispatch ids are under
// "<execution>/"), whatever else the listing names, and never a scan; on a migrated
// database they are still all listed.
TEST(SqliteStore, AnExecutionsAssignmentsAreARangeOfThePrimaryKey) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  ASSERT_EQ(MakeOldDatabase(path, sqlite::kLeanIndexesVersion - 1, R"sql(
INSERT INTO assignments (dispatch_id, id, ns, execution_id, step_id, attempt, command,
                         worker_id, status, progress, checkpoint, reassignments, created_at,
                         updated_at)
  VALUES ('ex1/s/1', 'ex1/s/1', 'team-a', 'ex1', 's', 1, 'x', 'w1', 'completed', 0, NULL, 0,
          30, 30);
)sql"),
            "");
  auto store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::vector<std::string> gone = Explain(path, "",
                                                "SELECT name FROM sqlite_schema WHERE name IN "
                                                "('executions_created', 'assignments_execution')",
                                                0);
  EXPECT_TRUE(gone.empty()) << gone.front();
  for (const char* ns : {"", "team-a"}) {
    for (const char* worker : {"", "w1"}) {
      AssignmentFilter f;
      f.ns = ns;
      f.worker_id = worker;
      f.execution_id = "ex1";
      const std::vector<std::string> plan = QueryPlan(path, sqlite::SelectAssignments(f));
      ASSERT_FALSE(plan.empty()) << sqlite::SelectAssignments(f);
      // The key of a WITHOUT ROWID table is its own index, sqlite_autoindex_assignments_1.
      EXPECT_NE(plan.front().find("SEARCH assignments USING INDEX sqlite_autoindex_assignments_1 "
                                  "(dispatch_id>? AND dispatch_id<?)"),
                std::string::npos)
          << ns << "/" << worker << ": " << plan.front();
      for (const std::string& step : plan) {
        EXPECT_EQ(step.find("SCAN assignments"), std::string::npos) << step;
      }
    }
  }
  WriteBatch b;
  b.assignments = {Assignment("ex1/s/2", 40, "w1", "running", "ex1"),
                   Assignment("ex10/s/1", 35, "w1", "running", "ex10")};
  ASSERT_TRUE((*store)->Commit(b).ok());
  AssignmentFilter of_ex1;
  of_ex1.execution_id = "ex1";
  auto listed = (*store)->ListAssignments(of_ex1);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ((*listed)[0].dispatch_id, "ex1/s/1");
  EXPECT_EQ((*listed)[1].dispatch_id, "ex1/s/2");
}

// A database of schema 14 gets the index rewritten, and its active assignments stay
// listed as active.
TEST(SqliteStore, MigrationRewritesTheActiveAssignmentsIndex) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  ASSERT_EQ(MakeOldDatabase(path, sqlite::kActiveAssignmentsOrVersion - 1, ""), "");
  EXPECT_GT(EphemeralTables(path, sqlite::kUpsertAssignment), 0);
  auto store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_EQ(EphemeralTables(path, sqlite::kUpsertAssignment), 0);
  WriteBatch b;
  b.assignments = {Assignment("d1", 10, "w1", "running"), Assignment("d2", 20, "w1", "completed")};
  ASSERT_TRUE((*store)->Commit(b).ok());
  AssignmentFilter active;
  active.active_only = true;
  auto listed = (*store)->ListAssignments(active);
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].dispatch_id, "d1");
}

// A database as the build before event positions left it: the migration numbers its
// events in (time, execution, seq) order, and numbering goes on from there.
TEST(SqliteStore, MigrationNumbersExistingEvents) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  const char* kEventsHavePosition =
      "SELECT COUNT(*) FROM pragma_table_info('events') WHERE name = 'position'";
  const char* rows = R"sql(
INSERT INTO executions (id, workflow, version, status, priority, parent_id, created_at,
                        started_at, completed_at, deadline)
  VALUES ('b', 'wf', 1, 'completed', 1, '', 1, 1, 1, 0),
         ('a', 'wf', 1, 'completed', 1, '', 1, 1, 1, 0);
INSERT INTO events (execution_id, seq, type, step_id, data, time) VALUES
  ('b', 1, 'execution.started', '', NULL, 100),
  ('a', 1, 'execution.started', '', NULL, 100),
  ('a', 2, 'step.started', 's', NULL, 100),
  ('b', 2, 'step.started', 's', NULL, 105),
  ('a', 3, 'execution.completed', '', NULL, 110);
)sql";
  ASSERT_EQ(MakeOldDatabase(path, sqlite::kEventPositionsVersion - 1, rows), "");
  EXPECT_EQ(RawQuery(path, kEventsHavePosition), "0");
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ(RawQuery(path, kEventsHavePosition), "1");
    EventQuery all;
    all.ns = kDefaultNamespace;
    auto events = (*store)->ListEvents(all);
    ASSERT_TRUE(events.ok()) << events.status().ToString();
    std::vector<std::string> order;
    for (const EventRecord& e : *events) {
      order.push_back(Id(e.execution_id, e.seq) + "@" + std::to_string(e.position));
    }
    EXPECT_EQ(order, (std::vector<std::string>{"a1@1", "a2@2", "b1@3", "b2@4", "a3@5"}));
    EXPECT_EQ(*(*store)->LastEventPosition(), 5);
    WriteBatch next;
    next.events = {Event("a", 4)};
    next.events[0].position = 6;
    ASSERT_TRUE((*store)->Commit(next).ok());
  }
  auto reopened = OpenSqliteStore(path);
  ASSERT_TRUE(reopened.ok());
  EXPECT_EQ(*(*reopened)->LastEventPosition(), 6);
}

// Workers, assignments and reassignments written by one process, as the coordinator of
// the next finds them.
WriteBatch WorkerRecords() {
  WriteBatch b;
  b.workers = {Worker("team-a", "w1")};
  b.assignments = {Assignment("dsp_1", 5, "w1", "running")};
  b.assignments[0].id = "dsp_1.r1";
  b.assignments[0].checkpoint = Json{{"epoch", 2}};
  b.reassignments = {Reassignment("rsg_1", "dsp_1", 10, "w0", "w1")};
  b.reassignments[0].checkpoint = Json{{"epoch", 2}};
  return b;
}

// Every field of every record, and the indexed reads.
void ExpectWorkerRecords(Store& store) {
  const WriteBatch want = WorkerRecords();
  EXPECT_EQ(ToJson(*store.ListWorkers("")), ToJson(want.workers));
  EXPECT_EQ(ToJson(*store.ListReassignments({})), ToJson(want.reassignments));
  auto a = store.GetAssignment("dsp_1.r1");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(ToJson(*a), ToJson(want.assignments[0]));
  AssignmentFilter active;
  active.active_only = true;
  active.worker_id = "w1";
  EXPECT_EQ(store.ListAssignments(active)->size(), 1u);
  ReassignmentFilter moves;
  moves.worker_id = "w0";
  EXPECT_EQ(store.ListReassignments(moves)->size(), 1u);
}

TEST(SqliteStore, ReopeningKeepsWorkerRecords) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    ASSERT_TRUE((*store)->Commit(WorkerRecords()).ok());
  }
  auto store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ExpectWorkerRecords(**store);
  // Reassignment ids stay taken across the reopen.
  WriteBatch dup;
  dup.reassignments = WorkerRecords().reassignments;
  EXPECT_EQ((*store)->Commit(dup).code(), errc::kStore);
}

// A database as the build before remote workers left it: the migration adds their
// tables and keeps what was there.
TEST(SqliteStore, MigrationAddsWorkerTables) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  const char* rows = R"sql(
INSERT INTO executions (id, workflow, version, status, priority, parent_id, created_at,
                        started_at, completed_at, deadline)
  VALUES ('e', 'wf', 1, 'running', 1, '', 1, 1, 0, 0);
INSERT INTO events (execution_id, seq, type, step_id, data, time, position)
  VALUES ('e', 1, 'execution.started', '', NULL, 100, 1);
)sql";
  ASSERT_EQ(MakeOldDatabase(path, sqlite::kWorkersVersion - 1, rows), "");
  const char* kTables =
      "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name IN "
      "('workers', 'assignments', 'reassignments')";
  EXPECT_EQ(RawQuery(path, kTables), "0");
  EXPECT_EQ(RawQuery(path, "SELECT MAX(version) FROM schema_migrations"),
            std::to_string(sqlite::kWorkersVersion - 1));
  {
    auto store = OpenSqliteStore(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ(RawQuery(path, kTables), "3");
    EXPECT_EQ(RawQuery(path, "SELECT MAX(version) FROM schema_migrations"),
              std::to_string(sqlite::LatestSchemaVersion()));
    EXPECT_EQ((*store)->GetExecution("e")->status, ExecutionStatus::kRunning);
    EXPECT_EQ(*(*store)->LastEventPosition(), 1);
    EXPECT_TRUE((*store)->ListWorkers("")->empty());
    EXPECT_TRUE((*store)->ListAssignments({})->empty());
    ASSERT_TRUE((*store)->Commit(WorkerRecords()).ok());
  }
  auto reopened = OpenSqliteStore(path);
  ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
  ExpectWorkerRecords(**reopened);
}

// Dead letters written before the queue's fields: the migration takes their namespace
// and workflow from their execution and their code and attempts from their errors.
TEST(SqliteStore, MigrationFillsDeadLetterFieldsFromTheExecutionAndErrors) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  const char* rows = R"sql(
INSERT INTO executions (id, workflow, version, status, priority, parent_id, created_at,
                        started_at, completed_at, deadline, ns)
  VALUES ('e', 'deploy', 4, 'failed', 1, '', 1, 1, 9, 0, 'team-a');
INSERT INTO dead_letters (execution_id, step_id, input, errors, created_at)
  VALUES ('e', 'push', '{"run":"x"}',
          '[{"code":"EXIT_NONZERO","attempt":1},{"code":"TIMEOUT","attempt":2}]', 500);
INSERT INTO dead_letters (execution_id, step_id, input, errors, created_at)
  VALUES ('gone', 'push', NULL, NULL, 600);
)sql";
  ASSERT_EQ(MakeOldDatabase(path, sqlite::kDeadLetterQueueVersion - 1, rows), "");
  auto store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto all = (*store)->ListDeadLetters("");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 2u);
  const DeadLetterRecord& d = (*all)[0];
  EXPECT_EQ(d.ns, "team-a");
  EXPECT_EQ(d.workflow, "deploy");
  EXPECT_EQ(d.version, 4);
  EXPECT_EQ(d.code, "TIMEOUT");
  EXPECT_EQ(d.fingerprint, "TIMEOUT");
  EXPECT_EQ(d.first_attempt, 1);
  EXPECT_EQ(d.last_attempt, 2);
  EXPECT_EQ(d.first_failed_at, 500);
  EXPECT_EQ(d.status, kDeadLetterOpen);
  const DeadLetterRecord& orphan = (*all)[1];  // its execution is gone
  EXPECT_EQ(orphan.ns, kDefaultNamespace);
  EXPECT_EQ(orphan.code, "");
  EXPECT_EQ(orphan.last_failed_at, 600);
}

TEST(SqliteStore, RejectsNewerSchema) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  ASSERT_TRUE(OpenSqliteStore(path).ok());
  RawQuery(path, "INSERT INTO schema_migrations (version, applied_at) VALUES (9999, 0)");
  auto store = OpenSqliteStore(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), errc::kStore);
  EXPECT_NE(store.status().message().find("9999"), std::string::npos) << store.status().ToString();
  EXPECT_NE(store.status().message().find("newer"), std::string::npos);
}

TEST(SqliteStore, NotADatabaseIsAClearError) {
  TempDir dir;
  const std::string path = dir.File("notes.txt");
  std::ofstream(path) << "this is a text file, long enough to fill a database header......"
                      << std::string(200, 'x') << "\n";
  auto store = OpenSqliteStore(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), errc::kStore);
  EXPECT_NE(store.status().message().find(path), std::string::npos) << store.status().ToString();
  EXPECT_NE(store.status().message().find("not a database"), std::string::npos)
      << store.status().ToString();
}

TEST(SqliteStore, UnopenablePathIsAnError) {
  TempDir dir;
  auto store = OpenSqliteStore(dir.File("no/such/dir/baton.db"));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), errc::kStore);
  EXPECT_NE(store.status().message().find("no/such/dir"), std::string::npos);
}

TEST(SqliteStore, NormalSynchronousWorks) {
  TempDir dir;
  SqliteOptions options;
  options.synchronous_full = false;
  auto store = OpenSqliteStore(dir.File("baton.db"), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  WriteBatch b;
  b.events = {Event("e", 1)};
  EXPECT_TRUE((*store)->Commit(b).ok());
}

// Opening the first store turns SQLite's allocation counting off: counting takes a global
// mutex on every malloc and free of the commit thread. ctest runs each test in its own
// process, so nothing has initialised SQLite before this test opens the store.
TEST(SqliteStore, TheFirstStoreTurnsOffAllocationCounting) {
  if (sqlite3_memory_highwater(/*resetFlag=*/0) != 0) {
    GTEST_SKIP() << "an earlier test in this process used SQLite with counting on; run alone";
  }
  TempDir dir;
  auto store = OpenSqliteStore(dir.File("baton.db"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  WriteBatch b;
  b.events = {Event("e", 1), Event("e", 2)};
  ASSERT_TRUE((*store)->Commit(b).ok());
  auto events = (*store)->GetEvents("e", 0, 10);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(events->size(), 2u);
  EXPECT_EQ(sqlite3_memory_used(), 0);
}

TEST(SqliteStore, InvalidUtf8InJsonIsReplacedNotThrown) {
  TempDir dir;
  auto store = OpenSqliteStore(dir.File("baton.db"));
  ASSERT_TRUE(store.ok());
  WriteBatch b;
  b.steps.push_back(Step("e", "s"));
  b.steps[0].output = Json{{"bytes", std::string("ok\xff\xfe")}};
  b.steps[0].stderr_tail = std::string("raw\xff");  // plain text column: kept as is
  ASSERT_TRUE((*store)->Commit(b).ok());
  auto steps = (*store)->GetSteps("e");
  ASSERT_TRUE(steps.ok()) << steps.status().ToString();
  EXPECT_EQ(steps->at(0).output["bytes"], "ok\xef\xbf\xbd\xef\xbf\xbd");
  EXPECT_EQ(steps->at(0).stderr_tail, std::string("raw\xff"));
}

// Commits one batch of `count` events of `execution`, numbered from *seq + 1 (advanced),
// each carrying `payload_bytes` bytes: WAL pages for the checkpoint and WAL-write tests.
Status CommitEvents(Store& store, const std::string& execution, int count, size_t payload_bytes,
                    int64_t* seq) {
  WriteBatch b;
  for (int k = 0; k < count; ++k) {
    EventRecord e = Event(execution, ++*seq);
    e.data = Json{{"payload", std::string(payload_bytes, 'x')}};
    b.events.push_back(std::move(e));
  }
  const WriteBatch* one = &b;
  return store.Commit({&one, 1});
}

// SQLite writes a WAL frame as two writes (header, page); the writer's VFS hands a
// commit's frames to the file in one, and before the commit is published: another
// connection reads it at once. NORMAL (no sync per commit) keeps SQLite's own VFS.
TEST(SqliteStore, ACommitWritesItsWalFramesAtOnce) {
  TempDir dir;
  const std::string path = dir.File("baton.db");
  auto store = OpenSqliteStore(path);
  ASSERT_TRUE(store.ok());
  const auto Commit = [](Store& s, const std::string& execution) {
    int64_t seq = 0;
    return CommitEvents(s, execution, 20, 1000, &seq);
  };
  const sqlite::WalWriteBufferStats before = sqlite::GetWalWriteBufferStats();
  ASSERT_TRUE(Commit(**store, "gathered").ok());
  const sqlite::WalWriteBufferStats after = sqlite::GetWalWriteBufferStats();
  EXPECT_GE(after.writes_asked - before.writes_asked, 10);  // 5+ pages, 2 writes each
  EXPECT_LE(after.writes_issued - before.writes_issued, 2);
  EXPECT_EQ(RawQuery(path, "SELECT SUM(span) FROM events WHERE execution_id = 'gathered'"), "20");

  TempDir other;
  auto normal = OpenSqliteStore(other.File("baton.db"), SqliteOptions{.synchronous_full = false});
  ASSERT_TRUE(normal.ok());
  const sqlite::WalWriteBufferStats unbuffered = sqlite::GetWalWriteBufferStats();
  ASSERT_TRUE(Commit(**normal, "direct").ok());
  EXPECT_EQ(sqlite::GetWalWriteBufferStats().writes_asked, unbuffered.writes_asked);
  EXPECT_EQ(RawQuery(other.File("baton.db"),
                     "SELECT SUM(span) FROM events WHERE execution_id = 'direct'"),
            "20");
}

// A store on a fresh file and its running checkpointer: the checkpoint tests' setup.
struct CheckpointedStore {
  TempDir dir;
  std::string path = dir.File("baton.db");
  std::unique_ptr<Store> store;
  const sqlite::WalCheckpointer* checkpointer = nullptr;
  void Open() {
    auto opened = OpenSqliteStore(path);
    ASSERT_TRUE(opened.ok());
    store = std::move(opened).value();
    auto* sqlite = dynamic_cast<sqlite::SqliteStore*>(store.get());
    ASSERT_NE(sqlite, nullptr);
    checkpointer = sqlite->checkpointer();
    ASSERT_NE(checkpointer, nullptr);
    ASSERT_TRUE(checkpointer->ok());
  }
};

// The WAL goes back into the database file on the checkpointer's thread, not inside the
// commit that grows it past 1,000 pages (that commit used to write and fsync the whole
// WAL into the file: one commit in ~70 of the engine's took several times as long).
TEST(SqliteStore, CheckpointsTheWalOffTheCommitPath) {
  CheckpointedStore f;
  ASSERT_NO_FATAL_FAILURE(f.Open());
  const std::string& path = f.path;
  Store& store = *f.store;
  const sqlite::WalCheckpointer* checkpointer = f.checkpointer;
  // ~1,500 pages of WAL: 300 commits of 20 events of 1 KB.
  int64_t seq = 0;
  for (int i = 0; i < 300; ++i) ASSERT_TRUE(CommitEvents(store, "wal", 20, 1000, &seq).ok());
  EXPECT_GE(std::filesystem::file_size(path + "-wal"),
            uintmax_t{sqlite::WalCheckpointer::kWakePages} * 4096);
  // The commits only woke the thread; wait (bounded) for its checkpoint.
  EXPECT_TRUE(checkpointer->WaitForBackgroundCheckpoints(1, std::chrono::seconds(10)));
  EXPECT_EQ(checkpointer->inline_checkpoints(), 0);
  // The pages reached the database file, and every event reads back.
  EXPECT_GE(std::filesystem::file_size(path), uintmax_t{1000} * 4096);
  EXPECT_EQ(store.GetEvents("wal", 0, 10'000)->size(), size_t(seq));
}

// Once a checkpoint has copied every frame, the next commit starts the WAL over from its
// beginning: written 6 times over, the file stays about one checkpoint's size.
TEST(SqliteStore, TheWalIsReusedAfterEachBackgroundCheckpoint) {
  CheckpointedStore f;
  ASSERT_NO_FATAL_FAILURE(f.Open());
  const std::string& path = f.path;
  Store& store = *f.store;
  const sqlite::WalCheckpointer* checkpointer = f.checkpointer;
  int64_t seq = 0;
  for (int round = 0; round < 6; ++round) {
    const int64_t before = checkpointer->background_checkpoints();
    // ~1,200 pages: 120 commits of 10 events of ~3 KB (about a page each).
    for (int i = 0; i < 120; ++i) ASSERT_TRUE(CommitEvents(store, "wal", 10, 3000, &seq).ok());
    ASSERT_TRUE(checkpointer->WaitForBackgroundCheckpoints(before + 1, std::chrono::seconds(10)))
        << "round " << round;
  }
  EXPECT_LT(std::filesystem::file_size(path + "-wal"), uintmax_t{3000} * 4096);
  EXPECT_EQ(checkpointer->inline_checkpoints(), 0);
}

// A rough durable-throughput figure (printed, not asserted): 10,000 steps of ~6 rows each
// (execution, step, attempt, three events), committed in groups of 200 batches with
// synchronous=FULL.
TEST(SqliteStore, ThroughputGroupsOf200) {
  TempDir dir;
  auto store = OpenSqliteStore(dir.File("baton.db"));
  ASSERT_TRUE(store.ok());
  constexpr int kSteps = 10'000;
  constexpr int kGroup = 200;
  std::vector<WriteBatch> batches(kSteps);
  size_t rows = 0;
  for (int i = 0; i < kSteps; ++i) {
    WriteBatch& b = batches[i];
    b.executions = {Execution("bench", ExecutionStatus::kRunning, 1)};
    const std::string step = Id("step-", i);
    StepRecord st = Step("bench", step, StepStatus::kCompleted, i);
    st.attempts = 1;
    st.progress = 100;
    st.output = Json{{"i", i}};
    b.steps.push_back(std::move(st));
    b.attempts.push_back(Attempt("bench", step, 1, StepStatus::kCompleted));
    for (int k = 0; k < 3; ++k) b.events.push_back(Event("bench", 3 * i + k + 1, "step", step));
    rows += 6;
  }
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  for (int i = 0; i < kSteps; i += kGroup) {
    std::vector<const WriteBatch*> group;
    for (int j = i; j < i + kGroup; ++j) group.push_back(&batches[j]);
    Status s = (*store)->Commit(group);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double cpu_secs = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  std::printf(
      "[ measure  ] sqlite FULL, %d steps (%zu rows) in groups of %d: %.0f ms wall "
      "(%.0f ms CPU), %.0f steps/s, %.0f rows/s\n",
      kSteps, rows, kGroup, secs * 1000, cpu_secs * 1000, kSteps / secs,
      static_cast<double>(rows) / secs);
  EXPECT_EQ((*store)->GetSteps("bench")->size(), size_t{kSteps});
}

}  // namespace
}  // namespace baton
