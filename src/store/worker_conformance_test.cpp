// Conformance of the worker records: remote workers, assignments and reassignments.
// Every Store implementation must pass these (the fixture is in conformance_test_util.h).
#include <baton/store.h>

#include "store/conformance_test_util.h"
#include "store/store_test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace baton {
namespace {

using testing::Assignment;
using testing::Event;
using testing::Factories;
using testing::Id;
using testing::Keys;
using testing::Reassignment;
using testing::RichJson;
using testing::StoreConformance;
using testing::StoreFactory;
using testing::ToJson;
using testing::Worker;

using Strings = std::vector<std::string>;

class WorkerConformance : public StoreConformance {};

Strings Dispatches(const Result<std::vector<AssignmentRecord>>& rows) {
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? Keys(*rows, [](const AssignmentRecord& a) { return a.dispatch_id; })
                   : Strings{};
}

Strings Ids(const Result<std::vector<ReassignmentRecord>>& rows) {
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? Keys(*rows, [](const ReassignmentRecord& r) { return r.id; }) : Strings{};
}

TEST_P(WorkerConformance, WorkersUpsertEveryFieldAndListByNamespaceById) {
  WriteBatch b;
  b.workers = {Worker("team-a", "w-b"), Worker("team-b", "w-c"), Worker("team-a", "w-a")};
  b.workers[2].commands = {};
  Commit(b);
  auto id = [](const WorkerRecord& w) { return w.id; };
  EXPECT_EQ(Keys(*store_->ListWorkers("team-a"), id), (Strings{"w-a", "w-b"}));
  EXPECT_EQ(Keys(*store_->ListWorkers(""), id), (Strings{"w-a", "w-b", "w-c"}));
  EXPECT_TRUE(store_->ListWorkers("team-z")->empty());
  EXPECT_EQ(ToJson(*store_->ListWorkers("team-a")),
            ToJson(std::vector<WorkerRecord>{b.workers[2], b.workers[0]}));

  // An upsert replaces every field, the namespace included.
  WorkerRecord moved;
  moved.id = "w-b";
  moved.ns = "team-b";
  moved.node = "node-9";
  moved.host = "gpu-9.internal";
  moved.version = "0.4.0";
  moved.capacity = 1;
  moved.commands = {"serve"};
  moved.tags = {};
  moved.status = "DRAINING";
  moved.registered_at = 200;
  moved.last_heartbeat = 260;
  moved.updated_at = 270;
  WriteBatch update;
  update.workers = {moved};
  Commit(update);
  EXPECT_EQ(Keys(*store_->ListWorkers("team-a"), id), (Strings{"w-a"}));
  EXPECT_EQ(ToJson(*store_->ListWorkers("team-b")),
            ToJson(std::vector<WorkerRecord>{moved, b.workers[1]}));
}

TEST_P(WorkerConformance, AssignmentsUpsertByDispatchIdAndAreFoundByEitherId) {
  WriteBatch b;
  b.assignments = {Assignment("ex1/train/1", 10, "w1", "dispatched")};
  Commit(b);
  auto first = store_->GetAssignment("ex1/train/1");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(ToJson(*first), ToJson(b.assignments[0]));

  // The first reassignment: every field but the dispatch id, and the execution it is
  // filed under (records.h), changes.
  AssignmentRecord moved;
  moved.dispatch_id = "ex1/train/1";
  moved.id = "ex1/train/1.r1";
  moved.ns = "team-b";
  moved.execution_id = "ex1";
  moved.step_id = "evaluate";
  moved.attempt = 2;
  moved.command = "evaluate";
  moved.worker_id = "w2";
  moved.status = "accepted";
  moved.progress = 40;
  moved.checkpoint = Json{{"epoch", 3}};
  moved.reassignments = 1;
  moved.created_at = 11;
  moved.updated_at = 90;
  WriteBatch update;
  update.assignments = {moved};
  Commit(update);
  for (const char* key : {"ex1/train/1", "ex1/train/1.r1"}) {
    auto got = store_->GetAssignment(key);
    ASSERT_TRUE(got.ok()) << key << ": " << got.status().ToString();
    EXPECT_EQ(ToJson(*got), ToJson(moved)) << key;
  }
  EXPECT_EQ(Dispatches(store_->ListAssignments({})), (Strings{"ex1/train/1"}));
  // Lookups follow the moved indexed fields (SQLite first tries an upsert that leaves
  // them alone, and must fall back to the full one here).
  auto listed = [&](std::string ns, std::string worker, std::string execution) {
    AssignmentFilter f;
    f.ns = std::move(ns);
    f.worker_id = std::move(worker);
    f.execution_id = std::move(execution);
    return Dispatches(store_->ListAssignments(f));
  };
  EXPECT_EQ(listed("", "", "ex1"), (Strings{"ex1/train/1"}));
  EXPECT_EQ(listed("team-b", "w2", "ex1"), (Strings{"ex1/train/1"}));
  EXPECT_EQ(listed("team-a", "", "ex1"), (Strings{}));
  EXPECT_EQ(listed("", "", "ex2"), (Strings{}));
  EXPECT_EQ(listed("team-b", "", ""), (Strings{"ex1/train/1"}));
  EXPECT_EQ(listed("team-a", "", ""), (Strings{}));
  EXPECT_EQ(listed("", "w2", ""), (Strings{"ex1/train/1"}));
  EXPECT_EQ(listed("", "w1", ""), (Strings{}));

  // The second one: the previous worker-facing id is no longer an assignment's.
  moved.id = "ex1/train/1.r2";
  moved.reassignments = 2;
  WriteBatch again;
  again.assignments = {moved};
  Commit(again);
  EXPECT_EQ(store_->GetAssignment("ex1/train/1.r2")->worker_id, "w2");
  EXPECT_EQ(store_->GetAssignment("ex1/train/1")->id, "ex1/train/1.r2");
  EXPECT_EQ(store_->GetAssignment("ex1/train/1.r1").status().code(), errc::kNotFound);
  EXPECT_EQ(store_->GetAssignment("dsp_2").status().code(), errc::kNotFound);
  EXPECT_EQ(store_->GetAssignment("").status().code(), errc::kNotFound);
}

TEST_P(WorkerConformance, RepeatedAssignmentUpsertsInOneCommitKeepTheLast) {
  AssignmentRecord a = Assignment("dsp_1", 10, "w1", "dispatched");
  AssignmentRecord b = a;
  b.id = "dsp_1.r1";
  b.worker_id = "w2";
  AssignmentRecord c = b;
  c.status = "running";
  c.progress = 5;
  WriteBatch first;
  first.assignments = {a, b};
  WriteBatch second;
  second.assignments = {c};
  const WriteBatch* both[] = {&first, &second};
  Status s = store_->Commit(both);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ToJson(*store_->ListAssignments({})), ToJson(std::vector<AssignmentRecord>{c}));
  EXPECT_EQ(ToJson(*store_->GetAssignment("dsp_1.r1")), ToJson(c));
}

TEST_P(WorkerConformance, ListAssignmentsFiltersAndOrdersByCreationThenDispatchId) {
  WriteBatch b;
  b.assignments = {
      Assignment("ex1/d5", 30, "w1", "completed"),  Assignment("ex1/d2", 20, "w1", "waiting"),
      Assignment("ex1/d1", 20, "w2", "dispatched"), Assignment("ex1/d4", 10, "w2", "accepted"),
      Assignment("ex1/d3", 40, "w1", "failed"),     Assignment("ex1/d6", 50, "w3", "cancelled"),
      Assignment("ex1/d7", 60, "w3", "lost"),       Assignment("ex2/d8", 70, "", "waiting", "ex2"),
      Assignment("ex1/d9", 80, "w3", "running"),
  };
  b.assignments[6].ns = "team-b";
  b.assignments[7].ns = "team-b";
  Commit(b);
  AssignmentFilter all;
  EXPECT_EQ(Dispatches(store_->ListAssignments(all)),
            (Strings{"ex1/d4", "ex1/d1", "ex1/d2", "ex1/d5", "ex1/d3", "ex1/d6", "ex1/d7", "ex2/d8",
                     "ex1/d9"}));
  AssignmentFilter ns;
  ns.ns = "team-b";
  EXPECT_EQ(Dispatches(store_->ListAssignments(ns)), (Strings{"ex1/d7", "ex2/d8"}));
  AssignmentFilter worker;
  worker.worker_id = "w1";
  EXPECT_EQ(Dispatches(store_->ListAssignments(worker)), (Strings{"ex1/d2", "ex1/d5", "ex1/d3"}));
  AssignmentFilter execution;
  execution.execution_id = "ex2";
  EXPECT_EQ(Dispatches(store_->ListAssignments(execution)), (Strings{"ex2/d8"}));
  AssignmentFilter active;  // waiting, dispatched, accepted, running
  active.active_only = true;
  EXPECT_EQ(Dispatches(store_->ListAssignments(active)),
            (Strings{"ex1/d4", "ex1/d1", "ex1/d2", "ex2/d8", "ex1/d9"}));
  active.worker_id = "w1";
  EXPECT_EQ(Dispatches(store_->ListAssignments(active)), (Strings{"ex1/d2"}));
  AssignmentFilter several;
  several.ns = "team-a";
  several.worker_id = "w2";
  several.execution_id = "ex1";
  EXPECT_EQ(Dispatches(store_->ListAssignments(several)), (Strings{"ex1/d4", "ex1/d1"}));
  several.execution_id = "ex2";
  EXPECT_EQ(Dispatches(store_->ListAssignments(several)), Strings{});
  AssignmentFilter limited;
  limited.limit = 3;
  EXPECT_EQ(Dispatches(store_->ListAssignments(limited)), (Strings{"ex1/d4", "ex1/d1", "ex1/d2"}));
  limited.active_only = true;
  limited.limit = 1;
  EXPECT_EQ(Dispatches(store_->ListAssignments(limited)), (Strings{"ex1/d4"}));

  // The default limit is 100; 0 lists them all.
  WriteBatch many;
  for (int i = 0; i < 100; ++i) many.assignments.push_back(Assignment(Id("m", 100 + i), 100 + i));
  Commit(many);
  EXPECT_EQ(store_->ListAssignments(all)->size(), 100u);
  AssignmentFilter unlimited;
  unlimited.limit = 0;
  EXPECT_EQ(store_->ListAssignments(unlimited)->size(), 109u);
}

// A listing by execution is of the assignments filed under it, "<execution>/...": the
// separator counts ("ex10/..." is not ex1's), and so does the dispatch id.
TEST_P(WorkerConformance, AnExecutionsAssignmentsAreTheOnesFiledUnderIt) {
  WriteBatch b;
  b.assignments = {
      Assignment("ex1/a/2", 20, "w1", "running", "ex1"),
      Assignment("ex1/a/1", 10, "w1", "completed", "ex1"),
      Assignment("ex10/a/1", 15, "w1", "running", "ex10"),
      Assignment("ex1x", 5, "w1", "running", "ex1"),  // not under "ex1/"
      Assignment("ex1/b/1", 30, "w2", "running", "ex1"),
  };
  b.assignments[4].ns = "team-b";
  Commit(b);
  auto of = [&](std::string execution, std::string ns = "", std::string worker = "") {
    AssignmentFilter f;
    f.execution_id = std::move(execution);
    f.ns = std::move(ns);
    f.worker_id = std::move(worker);
    return Dispatches(store_->ListAssignments(f));
  };
  EXPECT_EQ(of("ex1"), (Strings{"ex1/a/1", "ex1/a/2", "ex1/b/1"}));
  EXPECT_EQ(of("ex10"), (Strings{"ex10/a/1"}));
  EXPECT_EQ(of("ex1", "team-a"), (Strings{"ex1/a/1", "ex1/a/2"}));
  EXPECT_EQ(of("ex1", "", "w2"), (Strings{"ex1/b/1"}));
  EXPECT_EQ(of("ex"), Strings{});
  EXPECT_EQ(of("ex1x"), Strings{});
}

// The usual update keeps an assignment's worker and execution and changes its status
// (SQLite's narrow upsert): the active list and every lookup follow, commit by commit
// and within one group.
TEST_P(WorkerConformance, StatusUpdatesMoveAnAssignmentInAndOutOfTheActiveList) {
  AssignmentFilter active;
  active.active_only = true;
  AssignmentFilter on_w1;
  on_w1.worker_id = "w1";
  AssignmentRecord a = Assignment("d1", 10, "w1", "dispatched");
  WriteBatch b;
  b.assignments = {a, Assignment("d2", 20, "w1", "completed")};
  Commit(b);
  EXPECT_EQ(Dispatches(store_->ListAssignments(active)), (Strings{"d1"}));
  for (const char* status : {"accepted", "running", "completed", "running"}) {
    a.status = status;
    a.progress += 10;
    a.updated_at += 5;
    b.assignments = {a};
    Commit(b);
    const bool is_active = std::string(status) != "completed";
    EXPECT_EQ(Dispatches(store_->ListAssignments(active)), is_active ? Strings{"d1"} : Strings{})
        << status;
    EXPECT_EQ(ToJson(*store_->GetAssignment("d1")), ToJson(a)) << status;
    EXPECT_EQ(Dispatches(store_->ListAssignments(on_w1)), (Strings{"d1", "d2"})) << status;
  }
  AssignmentRecord done = a;
  done.status = "failed";
  WriteBatch first;
  first.assignments = {a};
  WriteBatch second;
  second.assignments = {done};
  const WriteBatch* both[] = {&first, &second};
  ASSERT_TRUE(store_->Commit(both).ok());
  EXPECT_EQ(Dispatches(store_->ListAssignments(active)), Strings{});
  EXPECT_EQ(store_->GetAssignment("d1")->status, "failed");
}

TEST_P(WorkerConformance, ReassignmentsAppendAndListNewestFirst) {
  WriteBatch b;
  b.reassignments = {
      Reassignment("rsg_1", "d1", 100, "w1", "w2"), Reassignment("rsg_2", "d1", 200, "w2", "w3"),
      Reassignment("rsg_4", "d2", 200, "w3", "w1"), Reassignment("rsg_3", "d3", 300, "w2", ""),
      Reassignment("rsg_5", "d4", 50, "w9", "w8"),
  };
  b.reassignments[2].checkpoint = RichJson();
  b.reassignments[3].reason = "max_reassignments";
  b.reassignments[4].ns = "team-b";
  Commit(b);
  ReassignmentFilter all;
  EXPECT_EQ(Ids(store_->ListReassignments(all)),
            (Strings{"rsg_3", "rsg_4", "rsg_2", "rsg_1", "rsg_5"}));
  EXPECT_EQ(ToJson(*store_->ListReassignments(all)),
            ToJson(std::vector<ReassignmentRecord>{b.reassignments[3], b.reassignments[2],
                                                   b.reassignments[1], b.reassignments[0],
                                                   b.reassignments[4]}));
  ReassignmentFilter dispatch;
  dispatch.dispatch_id = "d1";
  EXPECT_EQ(Ids(store_->ListReassignments(dispatch)), (Strings{"rsg_2", "rsg_1"}));
  ReassignmentFilter worker;  // from or to it
  worker.worker_id = "w1";
  EXPECT_EQ(Ids(store_->ListReassignments(worker)), (Strings{"rsg_4", "rsg_1"}));
  worker.worker_id = "w3";
  EXPECT_EQ(Ids(store_->ListReassignments(worker)), (Strings{"rsg_4", "rsg_2"}));
  worker.dispatch_id = "d2";
  EXPECT_EQ(Ids(store_->ListReassignments(worker)), (Strings{"rsg_4"}));
  ReassignmentFilter ns;
  ns.ns = "team-b";
  EXPECT_EQ(Ids(store_->ListReassignments(ns)), (Strings{"rsg_5"}));
  ns.ns = "team-a";
  ns.limit = 2;
  EXPECT_EQ(Ids(store_->ListReassignments(ns)), (Strings{"rsg_3", "rsg_4"}));
  ns.limit = 0;
  EXPECT_EQ(Ids(store_->ListReassignments(ns)).size(), 4u);

  // A later commit appends.
  WriteBatch later;
  later.reassignments = {Reassignment("rsg_6", "d1", 400, "w3", "w4")};
  Commit(later);
  EXPECT_EQ(Ids(store_->ListReassignments(dispatch)), (Strings{"rsg_6", "rsg_2", "rsg_1"}));
}

TEST_P(WorkerConformance, DuplicateReassignmentIdFailsTheWholeCommit) {
  WriteBatch first;
  first.reassignments = {Reassignment("rsg_1", "d1", 100, "w1", "w2")};
  Commit(first);

  WriteBatch stored;  // the id is taken already
  stored.workers = {Worker("team-a", "w1")};
  stored.reassignments = {Reassignment("rsg_2", "d2", 200, "w1", "w2"),
                          Reassignment("rsg_1", "d2", 300, "w2", "w3")};
  EXPECT_EQ(store_->Commit(stored).code(), errc::kStore);
  WriteBatch a;
  a.assignments = {Assignment("d3", 10)};
  a.reassignments = {Reassignment("rsg_3", "d3", 200, "w1", "w2")};
  WriteBatch b;
  b.reassignments = {Reassignment("rsg_3", "d3", 300, "w2", "w3")};
  const WriteBatch* twice[] = {&a, &b};  // twice in one commit
  EXPECT_EQ(store_->Commit(twice).code(), errc::kStore);

  EXPECT_EQ(Ids(store_->ListReassignments({})), (Strings{"rsg_1"}));
  EXPECT_TRUE(store_->ListWorkers("")->empty());
  EXPECT_TRUE(store_->ListAssignments({})->empty());
  Commit(a);  // the store stays usable
  EXPECT_EQ(Ids(store_->ListReassignments({})), (Strings{"rsg_3", "rsg_1"}));
}

TEST_P(WorkerConformance, FailingCommitWritesNoWorkerRecords) {
  WriteBatch first;
  first.events = {Event("e", 1)};
  Commit(first);

  WriteBatch records;  // valid on its own
  records.workers = {Worker("team-a", "w1")};
  records.assignments = {Assignment("d1", 10)};
  records.reassignments = {Reassignment("rsg_1", "d1", 100, "w0", "w1")};
  WriteBatch dup;
  dup.events = {Event("e", 2), Event("e", 1, "duplicate")};
  const WriteBatch* both[] = {&records, &dup};
  EXPECT_EQ(store_->Commit(both).code(), errc::kStore);
  WriteBatch owned = records;
  owned.events = {Event("e", 1, "duplicate")};
  EXPECT_EQ(store_->CommitOwned(std::move(owned)).code(), errc::kStore);

  EXPECT_TRUE(store_->ListWorkers("")->empty());
  EXPECT_TRUE(store_->ListAssignments({})->empty());
  EXPECT_EQ(store_->GetAssignment("d1").status().code(), errc::kNotFound);
  EXPECT_TRUE(store_->ListReassignments({})->empty());

  // The same records commit once the batch is valid, owned or not.
  WriteBatch valid = records;
  Status s = store_->CommitOwned(std::move(valid));
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(ToJson(*store_->ListWorkers("")), ToJson(records.workers));
  EXPECT_EQ(ToJson(*store_->ListAssignments({})), ToJson(records.assignments));
  EXPECT_EQ(ToJson(*store_->ListReassignments({})), ToJson(records.reassignments));
}

TEST_P(WorkerConformance, CheckpointsRoundTripNullEmptyAndRich) {
  WriteBatch b;
  b.assignments = {Assignment("d1", 1), Assignment("d2", 2), Assignment("d3", 3)};
  b.assignments[1].checkpoint = Json::object();
  b.assignments[2].checkpoint = RichJson();
  b.reassignments = {Reassignment("rsg_1", "d1", 3, "w1", "w2"),
                     Reassignment("rsg_2", "d2", 2, "w1", "w2"),
                     Reassignment("rsg_3", "d3", 1, "w1", "w2")};
  b.reassignments[1].checkpoint = Json::object();
  b.reassignments[2].checkpoint = RichJson();
  Commit(b);
  auto assignments = store_->ListAssignments({});
  ASSERT_TRUE(assignments.ok()) << assignments.status().ToString();
  ASSERT_EQ(assignments->size(), 3u);
  EXPECT_TRUE(assignments->at(0).checkpoint.is_null());
  EXPECT_EQ(assignments->at(1).checkpoint, Json::object());
  EXPECT_EQ(assignments->at(2).checkpoint, RichJson());
  auto reassignments = store_->ListReassignments({});
  ASSERT_TRUE(reassignments.ok()) << reassignments.status().ToString();
  ASSERT_EQ(reassignments->size(), 3u);
  EXPECT_TRUE(reassignments->at(0).checkpoint.is_null());  // newest first: rsg_1
  EXPECT_EQ(reassignments->at(1).checkpoint, Json::object());
  EXPECT_EQ(reassignments->at(2).checkpoint, RichJson());

  // Back to null once the checkpoint is gone.
  AssignmentRecord cleared = b.assignments[2];
  cleared.checkpoint = Json();
  WriteBatch update;
  update.assignments = {cleared};
  Commit(update);
  EXPECT_TRUE(store_->GetAssignment("d3")->checkpoint.is_null());
}

INSTANTIATE_TEST_SUITE_P(AllStores, WorkerConformance, ::testing::ValuesIn(Factories()),
                         [](const ::testing::TestParamInfo<StoreFactory>& p) {
                           return p.param.name;
                         });

}  // namespace
}  // namespace baton
