// The Store conformance suite: every implementation must pass all of it. The fixture
// and the list of implementations are in conformance_test_util.h.
#include <baton/store.h>

#include "store/conformance_test_util.h"
#include "store/store_test_util.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace baton {
namespace {

using testing::Assignment;
using testing::Attempt;
using testing::DeadLetter;
using testing::Event;
using testing::Execution;
using testing::Factories;
using testing::Id;
using testing::RichJson;
using testing::Step;
using testing::StoreConformance;
using testing::StoreFactory;
using testing::TempDir;
using testing::ToJson;

TEST_P(StoreConformance, WorkflowsRoundTripAndLatestVersion) {
  WriteBatch b;
  for (int v : {2, 3, 1}) {  // not in version order: "latest" is the highest version
    b.workflows.push_back({"deploy", v, Json{{"v", v}, {"rich", RichJson()}}, 100 + v});
  }
  b.workflows.push_back({"other", 7, Json(), 5});
  Commit(b);

  auto v2 = store_->GetWorkflow("deploy", 2);
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(ToJson(*v2), ToJson(b.workflows[0]));
  auto latest = store_->GetWorkflow("deploy", 0);
  ASSERT_TRUE(latest.ok());
  EXPECT_EQ(latest->version, 3);
  EXPECT_EQ(ToJson(*latest), ToJson(b.workflows[1]));
  auto other = store_->GetWorkflow("other", 0);
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->definition.is_null());

  // Upsert replaces the definition of an existing version.
  WriteBatch again;
  again.workflows.push_back({"deploy", 2, Json{{"v", "two"}}, 999});
  Commit(again);
  EXPECT_EQ(ToJson(*store_->GetWorkflow("deploy", 2)), ToJson(again.workflows[0]));

  EXPECT_EQ(store_->GetWorkflow("deploy", 4).status().code(), errc::kNotFound);
  EXPECT_EQ(store_->GetWorkflow("missing", 0).status().code(), errc::kNotFound);
}

TEST_P(StoreConformance, ExecutionRoundTripsEveryFieldAndUpserts) {
  ExecutionRecord e;
  e.id = "exec-1";
  e.workflow = "deploy";
  e.version = 4;
  e.definition = std::make_shared<const std::string>(RichJson().dump());
  e.input = Json{{"model_id", "llama"}, {"n", 3}};
  e.status = ExecutionStatus::kRunning;
  e.priority = 7;
  e.output = Json();  // null until completed
  e.error = Json{{"code", "TIMEOUT"}, {"message", "step «b» timed out"}, {"step", "b"}};
  e.parent_id = "exec-0";
  e.parent_step = "deploy";
  e.parent_attempt = 2;
  e.created_at = 1'700'000'000'001;
  e.started_at = 1'700'000'000'002;
  e.completed_at = 0;
  e.deadline = 1'700'000'100'000;
  e.ns = "team-a";
  e.idempotency_key = "order-42";
  WriteBatch b;
  b.executions.push_back(e);
  Commit(b);
  auto got = store_->GetExecution("exec-1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(ToJson(*got), ToJson(e));
  EXPECT_TRUE(got->output.is_null());

  e.status = ExecutionStatus::kCompleted;
  e.output = Json{{"url", "https://example.com/ü"}};
  e.error = Json();
  e.completed_at = 1'700'000'000'050;
  e.priority = 1;
  e.vars = Json{{"region", "eu-west"}, {"replicas", 3}};
  b.executions = {e};
  Commit(b);
  got = store_->GetExecution("exec-1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(ToJson(*got), ToJson(e));
}

// The usual update changes an execution's status and results, not what it is filed
// under (SQLite's narrow upsert): listings by status follow each commit.
TEST_P(StoreConformance, ExecutionStatusUpdatesMoveItBetweenStatusListings) {
  ExecutionRecord e;
  e.id = "exec-1";
  e.workflow = "deploy";
  e.version = 1;
  e.ns = "team-a";
  e.created_at = 100;
  auto listed = [&](ExecutionStatus status) {
    ExecutionFilter f;
    f.status = status;
    auto list = store_->ListExecutions(f);
    return list.ok() ? list->size() : size_t{999};
  };
  for (ExecutionStatus status : {ExecutionStatus::kPending, ExecutionStatus::kRunning,
                                 ExecutionStatus::kPaused, ExecutionStatus::kCompleted}) {
    e.status = status;
    e.started_at = e.started_at + 1;
    e.output = Json{{"n", e.started_at}};
    WriteBatch b;
    b.executions = {e};
    Commit(b);
    for (ExecutionStatus other : {ExecutionStatus::kPending, ExecutionStatus::kRunning,
                                  ExecutionStatus::kPaused, ExecutionStatus::kCompleted}) {
      EXPECT_EQ(listed(other), other == status ? 1u : 0u) << ToString(status);
    }
    EXPECT_EQ(ToJson(*store_->GetExecution("exec-1")), ToJson(e));
  }
  ExecutionFilter in_ns;
  in_ns.ns = "team-a";
  in_ns.workflow = "deploy";
  EXPECT_EQ(store_->ListExecutions(in_ns)->size(), 1u);
}

// An upsert may change the fields the backends index (SQLite first tries a statement
// that leaves them alone): the record and every lookup must follow the new values.
TEST_P(StoreConformance, ExecutionUpsertThatMovesItsIndexedFieldsIsFoundUnderTheNewOnes) {
  ExecutionRecord e;
  e.id = "exec-1";
  e.workflow = "deploy";
  e.version = 1;
  e.status = ExecutionStatus::kRunning;
  e.ns = "team-a";
  e.parent_id = "exec-0";
  e.idempotency_key = "k1";
  e.created_at = 100;
  WriteBatch b;
  b.executions = {e};
  Commit(b);
  e.workflow = "train";
  e.ns = "team-b";
  e.parent_id = "exec-9";
  e.idempotency_key = "k2";
  e.created_at = 200;
  e.status = ExecutionStatus::kCompleted;
  b.executions = {e};
  Commit(b);
  auto got = store_->GetExecution("exec-1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(ToJson(*got), ToJson(e));
  auto count = [&](auto narrow) {
    ExecutionFilter f;
    narrow(f);
    auto list = store_->ListExecutions(f);
    return list.ok() ? list->size() : size_t{999};
  };
  EXPECT_EQ(count([](auto& f) { f.workflow = "train", f.ns = "team-b"; }), 1u);
  EXPECT_EQ(count([](auto& f) { f.workflow = "deploy"; }), 0u);
  EXPECT_EQ(count([](auto& f) { f.ns = "team-a"; }), 0u);
  EXPECT_EQ(count([](auto& f) { f.parent_id = "exec-9"; }), 1u);
  EXPECT_EQ(count([](auto& f) { f.parent_id = "exec-0"; }), 0u);
  EXPECT_EQ(count([](auto& f) { f.ns = "team-b", f.idempotency_key = "k2"; }), 1u);
  EXPECT_EQ(count([](auto& f) { f.ns = "team-a", f.idempotency_key = "k1"; }), 0u);
  EXPECT_EQ(count([](auto& f) { f.created_from = 150; }), 1u);
  EXPECT_EQ(count([](auto& f) { f.status = ExecutionStatus::kCompleted; }), 1u);
  EXPECT_EQ(count([](auto& f) { f.status = ExecutionStatus::kRunning; }), 0u);
}

TEST_P(StoreConformance, NullAndEmptyJsonStayDistinct) {
  ExecutionRecord e = Execution("e", ExecutionStatus::kPending, 1);
  e.definition = nullptr;
  e.input = Json();  // null, not the default {}
  e.output = Json::array();
  e.error = Json::object();
  StepRecord s;
  s.execution_id = "e";
  s.step_id = "a";
  s.output = "";  // an empty string is not null
  s.error = false;
  WriteBatch b;
  b.executions.push_back(e);
  b.steps.push_back(s);
  Commit(b);
  auto got = store_->GetExecution("e");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->definition, nullptr);
  EXPECT_TRUE(got->input.is_null());
  EXPECT_EQ(got->output, Json::array());
  EXPECT_EQ(got->error, Json::object());
  auto steps = store_->GetSteps("e");
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 1u);
  EXPECT_EQ(steps->at(0).output, Json(""));
  EXPECT_EQ(steps->at(0).error, Json(false));
}

TEST_P(StoreConformance, StepsRoundTripOrderedByIndex) {
  WriteBatch b;
  for (int i : {2, 0, 1}) {
    StepRecord s;
    s.execution_id = "e";
    s.step_id = Id("step-", i);
    s.index = i;
    s.status = i == 0 ? StepStatus::kWaitingRetry : StepStatus::kCompleted;
    s.attempts = i + 1;
    s.progress = 50 + i;
    s.output = Json{{"rich", RichJson()}, {"i", i}};
    s.error = i == 0 ? Json{{"code", "EXIT_NONZERO"}, {"message", "exit 3"}} : Json();
    s.exit_code = i == 0 ? 3 : -1;
    s.stderr_tail = "line 1\nerreur: ça a échoué\n";
    s.assignment_id = Id("asg-", i);
    s.started_at = 10 + i;
    s.completed_at = 20 + i;
    s.retry_at = 30 + i;
    s.deadline = 40 + i;
    s.attempt_base = i % 3;
    b.steps.push_back(s);
  }
  StepRecord elsewhere;
  elsewhere.execution_id = "other";
  elsewhere.step_id = "x";
  b.steps.push_back(elsewhere);
  Commit(b);

  auto steps = store_->GetSteps("e");
  ASSERT_TRUE(steps.ok()) << steps.status().ToString();
  EXPECT_EQ(ToJson(*steps), ToJson(std::vector<StepRecord>{b.steps[1], b.steps[2], b.steps[0]}));

  StepRecord updated = b.steps[1];
  updated.status = StepStatus::kRunning;
  updated.attempts = 2;
  updated.error = Json();
  updated.assignment_id = "";
  WriteBatch u;
  u.steps.push_back(updated);
  Commit(u);
  steps = store_->GetSteps("e");
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 3u);
  EXPECT_EQ(ToJson(steps->at(0)), ToJson(updated));

  auto none = store_->GetSteps("missing");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

// Five attempts of execution "e", out of order: b/2, a/1, b/1, a/10, a/2 (assignment ids
// "step/n"); each first attempt failed (with an error), the others run.
WriteBatch AttemptsOfE() {
  WriteBatch b;
  for (auto [step, n] : {std::pair{"b", 2}, {"a", 1}, {"b", 1}, {"a", 10}, {"a", 2}}) {
    AttemptRecord a;
    a.execution_id = "e";
    a.step_id = step;
    a.attempt = n;
    a.status = n == 1 ? StepStatus::kFailed : StepStatus::kRunning;
    a.assignment_id = Id(std::string(step) + "/", n);
    a.error = n == 1 ? Json{{"code", "WORKER_LOST"}, {"detail", RichJson()}} : Json();
    a.started_at = 100 * n;
    a.completed_at = n == 1 ? 100 * n + 5 : 0;
    b.attempts.push_back(a);
  }
  return b;
}

std::vector<std::string> AssignmentIds(const std::vector<AttemptRecord>& attempts) {
  std::vector<std::string> ids;
  for (const AttemptRecord& a : attempts) ids.push_back(a.assignment_id);
  return ids;
}

TEST_P(StoreConformance, AttemptsRoundTripOrderedByStepThenAttempt) {
  WriteBatch b = AttemptsOfE();
  Commit(b);
  auto got = store_->GetAttempts("e");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(AssignmentIds(*got), (std::vector<std::string>{"a/1", "a/2", "a/10", "b/1", "b/2"}));
  EXPECT_EQ(ToJson(got->at(0)), ToJson(b.attempts[1]));

  AttemptRecord done = b.attempts[0];  // b/2 completes: an upsert, not a new attempt
  done.status = StepStatus::kCompleted;
  done.completed_at = 777;
  WriteBatch u;
  u.attempts.push_back(done);
  Commit(u);
  got = store_->GetAttempts("e");
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 5u);
  EXPECT_EQ(ToJson(got->at(4)), ToJson(done));
}

// What recovery and retry read: the attempts that ended with an error, in GetAttempts'
// order, whole; an attempt whose error a later write clears is no longer one.
TEST_P(StoreConformance, FailedAttemptsAreTheOnesWithAnError) {
  WriteBatch b = AttemptsOfE();
  AttemptRecord other = b.attempts[1];  // a/1 of another execution
  other.execution_id = "f";
  b.attempts.push_back(other);
  Commit(b);
  auto failed = store_->GetFailedAttempts("e");
  ASSERT_TRUE(failed.ok()) << failed.status().ToString();
  EXPECT_EQ(AssignmentIds(*failed), (std::vector<std::string>{"a/1", "b/1"}));
  EXPECT_EQ(ToJson(failed->at(0)), ToJson(b.attempts[1]));

  AttemptRecord cleared = b.attempts[1];  // a/1, written again without its error
  cleared.error = Json();
  cleared.status = StepStatus::kCompleted;
  WriteBatch u;
  u.attempts.push_back(cleared);
  Commit(u);
  failed = store_->GetFailedAttempts("e");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(AssignmentIds(*failed), (std::vector<std::string>{"b/1"}));
  EXPECT_EQ(AssignmentIds(*store_->GetFailedAttempts("f")), (std::vector<std::string>{"a/1"}));
  EXPECT_TRUE(store_->GetFailedAttempts("missing")->empty());
}

TEST_P(StoreConformance, EventsAfterSeqWithLimit) {
  WriteBatch b;
  for (int64_t seq = 1; seq <= 10; ++seq) {
    b.events.push_back(Event("e", seq, "step.completed", seq % 2 ? "s" : ""));
  }
  b.events[3].data = RichJson();
  b.events[4].data = Json();
  b.events.push_back(Event("other", 1));
  Commit(b);

  auto all = store_->GetEvents("e", 0, 100);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 10u);
  EXPECT_EQ(ToJson(*all),
            ToJson(std::vector<EventRecord>(b.events.begin(), b.events.begin() + 10)));

  auto page = store_->GetEvents("e", 3, 4);
  ASSERT_TRUE(page.ok());
  std::vector<int64_t> seqs;
  for (const EventRecord& e : *page) seqs.push_back(e.seq);
  EXPECT_EQ(seqs, (std::vector<int64_t>{4, 5, 6, 7}));

  auto unlimited = store_->GetEvents("e", 8, 0);
  ASSERT_TRUE(unlimited.ok());
  EXPECT_EQ(unlimited->size(), 2u);
  auto past_end = store_->GetEvents("e", 10, 5);
  ASSERT_TRUE(past_end.ok());
  EXPECT_TRUE(past_end->empty());
  auto missing = store_->GetEvents("missing", 0, 5);
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
}

TEST_P(StoreConformance, OutOfOrderEventsAreStoredInSeqOrder) {
  WriteBatch b;
  b.events = {Event("e", 3), Event("e", 1)};
  Commit(b);
  WriteBatch c;
  c.events = {Event("e", 2)};
  Commit(c);
  auto got = store_->GetEvents("e", 0, 0);
  ASSERT_TRUE(got.ok());
  std::vector<int64_t> seqs;
  for (const EventRecord& e : *got) seqs.push_back(e.seq);
  EXPECT_EQ(seqs, (std::vector<int64_t>{1, 2, 3}));
}

TEST_P(StoreConformance, DeadLettersInWriteOrder) {
  WriteBatch b;
  b.dead_letters.push_back(
      DeadLetter("e1", "s", Json{{"x", 1}}, Json::array({RichJson(), "boom"}), 5));
  b.dead_letters.push_back(DeadLetter("e2", "t", Json(), Json::array(), 6));
  b.dead_letters.push_back(DeadLetter("e1", "u", Json::object(), Json(), 7));
  Commit(b);
  auto e1 = store_->ListDeadLetters("e1");
  ASSERT_TRUE(e1.ok()) << e1.status().ToString();
  EXPECT_EQ(ToJson(*e1),
            ToJson(std::vector<DeadLetterRecord>{b.dead_letters[0], b.dead_letters[2]}));
  auto all = store_->ListDeadLetters("");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(ToJson(*all), ToJson(b.dead_letters));
}

TEST_P(StoreConformance, ListUnfinishedOnlyNonTerminalOldestFirst) {
  WriteBatch b;
  b.executions = {
      Execution("done", ExecutionStatus::kCompleted, 1),
      Execution("late", ExecutionStatus::kRunning, 300),
      Execution("paused", ExecutionStatus::kPaused, 200),
      Execution("failed", ExecutionStatus::kFailed, 2),
      Execution("early", ExecutionStatus::kPending, 100),
      Execution("same-time-2", ExecutionStatus::kRunning, 250),
      Execution("timeout", ExecutionStatus::kTimeout, 3),
      Execution("cancelled", ExecutionStatus::kCancelled, 4),
  };
  Commit(b);
  WriteBatch c;  // same created_at as an earlier one: insertion order breaks the tie
  c.executions = {Execution("same-time-1", ExecutionStatus::kRunning, 250)};
  Commit(c);
  auto got = store_->ListUnfinishedExecutions();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::vector<std::string> ids;
  for (const ExecutionRecord& e : *got) ids.push_back(e.id);
  EXPECT_EQ(ids,
            (std::vector<std::string>{"early", "paused", "same-time-2", "same-time-1", "late"}));

  // Finishing an execution removes it.
  WriteBatch d;
  d.executions = {Execution("early", ExecutionStatus::kCompleted, 100)};
  Commit(d);
  got = store_->ListUnfinishedExecutions();
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->size(), 4u);
}

TEST_P(StoreConformance, ListExecutionsFiltersNewestFirstWithLimit) {
  WriteBatch b;
  for (int i = 0; i < 6; ++i) {
    b.executions.push_back(
        Execution(Id("e", i), i % 2 ? ExecutionStatus::kCompleted : ExecutionStatus::kRunning,
                  100 + i, i < 3 ? "alpha" : "beta"));
  }
  Commit(b);
  auto ids = [&](const ExecutionFilter& f) {
    std::vector<std::string> out;
    auto got = store_->ListExecutions(f);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (got.ok()) {
      for (const ExecutionRecord& e : *got) out.push_back(e.id);
    }
    return out;
  };
  using V = std::vector<std::string>;
  auto filter = [](std::optional<ExecutionStatus> status, std::string workflow,
                   size_t limit = 100) {
    ExecutionFilter f;
    f.status = status;
    f.workflow = std::move(workflow);
    f.limit = limit;
    return f;
  };
  EXPECT_EQ(ids({}), (V{"e5", "e4", "e3", "e2", "e1", "e0"}));
  EXPECT_EQ(ids(filter({}, "", 2)), (V{"e5", "e4"}));
  EXPECT_EQ(ids(filter({}, "", 0)), (V{"e5", "e4", "e3", "e2", "e1", "e0"}));
  EXPECT_EQ(ids(filter(ExecutionStatus::kCompleted, "")), (V{"e5", "e3", "e1"}));
  EXPECT_EQ(ids(filter({}, "alpha")), (V{"e2", "e1", "e0"}));
  EXPECT_EQ(ids(filter(ExecutionStatus::kRunning, "beta")), (V{"e4"}));
  EXPECT_EQ(ids(filter(ExecutionStatus::kRunning, "alpha", 1)), (V{"e2"}));
  EXPECT_EQ(ids(filter(ExecutionStatus::kPaused, "")), V{});
  EXPECT_EQ(ids(filter({}, "gamma")), V{});
}

TEST_P(StoreConformance, DuplicateEventSeqFailsTheWholeCommit) {
  WriteBatch first;
  first.events = {Event("e", 1)};
  Commit(first);

  WriteBatch a;  // valid on its own
  a.executions = {Execution("e", ExecutionStatus::kRunning, 1)};
  a.steps.push_back(Step("e", "s"));
  a.attempts.push_back(Attempt("e", "s"));
  a.events = {Event("e", 2)};
  a.dead_letters.push_back(DeadLetter("e", "s", Json(), Json(), 0));
  a.workflows.push_back({"wf", 1, Json(), 0});
  WriteBatch b;
  b.events = {Event("e", 3), Event("e", 1, "duplicate")};
  const WriteBatch* both[] = {&a, &b};
  Status s = store_->Commit(both);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), errc::kStore);
  EXPECT_FALSE(s.message().empty());

  // Nothing of either batch is visible.
  EXPECT_EQ(store_->GetExecution("e").status().code(), errc::kNotFound);
  EXPECT_TRUE(store_->GetSteps("e")->empty());
  EXPECT_TRUE(store_->GetAttempts("e")->empty());
  EXPECT_TRUE(store_->ListDeadLetters("")->empty());
  EXPECT_EQ(store_->GetWorkflow("wf", 0).status().code(), errc::kNotFound);
  auto events = store_->GetEvents("e", 0, 0);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->at(0).type, "test");

  // A duplicate within one commit fails too; the store stays usable afterwards.
  WriteBatch c;
  c.events = {Event("e", 5)};
  WriteBatch d;
  d.events = {Event("e", 5)};
  const WriteBatch* twice[] = {&c, &d};
  EXPECT_EQ(store_->Commit(twice).code(), errc::kStore);
  EXPECT_EQ(store_->GetEvents("e", 0, 0)->size(), 1u);
  const WriteBatch* retry[] = {&a};
  EXPECT_TRUE(store_->Commit(retry).ok());
  EXPECT_EQ(store_->GetEvents("e", 0, 0)->size(), 2u);
}

TEST_P(StoreConformance, OwnedCommitsStoreWhatCopiedOnesWould) {
  // Every kind of record; a fresh execution's first batch (whose events a store may
  // adopt whole), then one appending to its log, then one with out-of-order seqs.
  WriteBatch first;
  first.workflows.push_back({"wf", 1, RichJson(), 3});
  first.executions = {Execution("e", ExecutionStatus::kRunning, 1)};
  first.steps = {Step("e", "a"), Step("e", "b"), Step("e", "b", StepStatus::kReady, 1)};
  first.steps[1].index = 1;
  first.steps[2].output = RichJson();  // a repeated upsert in one batch: the last one counts
  first.attempts = {Attempt("e", "a"), Attempt("e", "b", 2),
                    Attempt("e", "b", 2, StepStatus::kFailed)};
  first.events = {Event("e", 1), Event("e", 2, "step.ready"), Event("e", 3)};
  first.events[1].step_id = "a";
  first.events[1].data = RichJson();
  first.dead_letters.push_back(DeadLetter("e", "b", RichJson(), Json::array({"boom"}), 4));
  WriteBatch second;
  second.steps = {Step("e", "a")};
  second.steps[0].status = StepStatus::kCompleted;
  second.attempts = {Attempt("e", "a", 2)};
  second.events = {Event("e", 4), Event("e", 5)};
  WriteBatch third;
  third.events = {Event("f", 2), Event("f", 1), Event("e", 6)};

  for (const WriteBatch* b : {&first, &second, &third}) {
    WriteBatch owned = *b;
    Status s = store_->CommitOwned(std::move(owned));
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  EXPECT_EQ(ToJson(*store_->GetWorkflow("wf", 1)), ToJson(first.workflows[0]));
  EXPECT_EQ(ToJson(*store_->GetExecution("e")), ToJson(first.executions[0]));
  EXPECT_EQ(ToJson(*store_->GetSteps("e")),
            ToJson(std::vector<StepRecord>{second.steps[0], first.steps[2]}));
  EXPECT_EQ(
      ToJson(*store_->GetAttempts("e")),
      ToJson(std::vector<AttemptRecord>{first.attempts[0], second.attempts[0], first.attempts[2]}));
  std::vector<EventRecord> log = first.events;
  log.insert(log.end(), second.events.begin(), second.events.end());
  log.push_back(third.events[2]);
  EXPECT_EQ(ToJson(*store_->GetEvents("e", 0, 0)), ToJson(log));
  EXPECT_EQ(ToJson(*store_->GetEvents("f", 0, 0)),
            ToJson(std::vector<EventRecord>{third.events[1], third.events[0]}));
  EXPECT_EQ(ToJson(*store_->ListDeadLetters("")), ToJson(first.dead_letters));

  // A duplicate seq fails an owned commit as a whole, too.
  WriteBatch dup;
  dup.steps = {Step("e", "c")};
  dup.events = {Event("e", 7), Event("e", 1, "duplicate")};
  EXPECT_EQ(store_->CommitOwned(std::move(dup)).code(), errc::kStore);
  EXPECT_EQ(store_->GetSteps("e")->size(), 2u);
  EXPECT_EQ(store_->GetEvents("e", 0, 0)->size(), log.size());
}

TEST_P(StoreConformance, BatchesOfOneCommitApplyInOrder) {
  WriteBatch a;
  a.executions = {Execution("e", ExecutionStatus::kPending, 1)};
  a.events = {Event("e", 1)};
  WriteBatch empty;
  WriteBatch b;
  b.executions = {Execution("e", ExecutionStatus::kRunning, 1)};
  b.steps.push_back(Step("e", "s", StepStatus::kRunning));
  b.events = {Event("e", 2)};
  WriteBatch c;
  c.steps.push_back(Step("e", "s", StepStatus::kCompleted));
  c.events = {Event("e", 3)};
  const WriteBatch* all[] = {&a, &empty, &b, &c};
  Status s = store_->Commit(all);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(store_->GetExecution("e")->status, ExecutionStatus::kRunning);
  ASSERT_EQ(store_->GetSteps("e")->size(), 1u);
  EXPECT_EQ(store_->GetSteps("e")->at(0).status, StepStatus::kCompleted);
  EXPECT_EQ(store_->GetEvents("e", 0, 0)->size(), 3u);

  const WriteBatch* nothing[] = {&empty};
  EXPECT_TRUE(store_->Commit(nothing).ok());
  EXPECT_TRUE(store_->Commit(std::span<const WriteBatch* const>()).ok());
}

// Group commit puts many upserts of one key into one transaction; the result must be
// the last value, with the key's first-insertion order (the listing tie-break) kept.
TEST_P(StoreConformance, RepeatedUpsertsInOneCommitKeepLastValueAndFirstOrder) {
  std::vector<WriteBatch> batches(4);
  batches[0].executions = {Execution("a", ExecutionStatus::kPending, 5)};
  batches[0].steps = {Step("a", "s", StepStatus::kReady)};
  batches[0].attempts = {Attempt("a", "s", 1, StepStatus::kRunning)};
  batches[0].workflows.push_back({"wf", 1, Json{{"rev", 1}}, 1});
  batches[1].executions = {Execution("b", ExecutionStatus::kPending, 5)};
  batches[2].executions = {Execution("a", ExecutionStatus::kRunning, 5)};
  batches[2].steps = {Step("a", "s", StepStatus::kRunning), Step("a", "t", StepStatus::kReady)};
  batches[3].executions = {Execution("a", ExecutionStatus::kPaused, 5)};
  batches[3].steps = {Step("a", "s", StepStatus::kCompleted)};
  batches[3].attempts = {Attempt("a", "s", 1, StepStatus::kCompleted)};
  batches[3].workflows.push_back({"wf", 1, Json{{"rev", 2}}, 2});
  std::vector<const WriteBatch*> ptrs;
  for (const WriteBatch& b : batches) ptrs.push_back(&b);
  Status s = store_->Commit(ptrs);
  ASSERT_TRUE(s.ok()) << s.ToString();

  EXPECT_EQ(store_->GetExecution("a")->status, ExecutionStatus::kPaused);
  auto listed = store_->ListExecutions({});
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 2u);
  EXPECT_EQ(listed->at(0).id, "b");  // same created_at: "a" was inserted first
  EXPECT_EQ(listed->at(1).id, "a");
  auto unfinished = store_->ListUnfinishedExecutions();
  ASSERT_TRUE(unfinished.ok());
  ASSERT_EQ(unfinished->size(), 2u);
  EXPECT_EQ(unfinished->at(0).id, "a");
  auto steps = store_->GetSteps("a");
  ASSERT_TRUE(steps.ok());
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ(steps->at(0).status, StepStatus::kCompleted);
  EXPECT_EQ(steps->at(1).status, StepStatus::kReady);
  auto attempts = store_->GetAttempts("a");
  ASSERT_TRUE(attempts.ok());
  ASSERT_EQ(attempts->size(), 1u);
  EXPECT_EQ(attempts->at(0).status, StepStatus::kCompleted);
  EXPECT_EQ(store_->GetWorkflow("wf", 0)->definition, (Json{{"rev", 2}}));
}

// The same for a command's assignment, which several turns update within one group.
TEST_P(StoreConformance, RepeatedAssignmentUpsertsInOneCommitKeepTheLastValue) {
  std::vector<WriteBatch> batches(3);
  batches[0].assignments = {Assignment("d1", 10, "w1", "dispatched")};
  batches[1].assignments = {Assignment("d2", 20, "w1", "dispatched"),
                            Assignment("d1", 10, "w1", "accepted")};
  batches[2].assignments = {Assignment("d1", 10, "w2", "completed")};
  std::vector<const WriteBatch*> ptrs;
  for (const WriteBatch& b : batches) ptrs.push_back(&b);
  Status s = store_->Commit(ptrs);
  ASSERT_TRUE(s.ok()) << s.ToString();
  auto all = store_->ListAssignments({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ(all->at(0).dispatch_id, "d1");
  EXPECT_EQ(all->at(0).status, "completed");
  EXPECT_EQ(all->at(0).worker_id, "w2");
  AssignmentFilter active;
  active.active_only = true;
  auto running = store_->ListAssignments(active);
  ASSERT_TRUE(running.ok());
  ASSERT_EQ(running->size(), 1u);
  EXPECT_EQ(running->at(0).dispatch_id, "d2");
}

TEST_P(StoreConformance, MissingRecordsAreNotFound) {
  Status s = store_->GetExecution("nope").status();
  EXPECT_EQ(s.code(), errc::kNotFound);
  EXPECT_NE(s.message().find("nope"), std::string::npos);
  EXPECT_EQ(store_->GetWorkflow("nope", 1).status().code(), errc::kNotFound);
  EXPECT_TRUE(store_->GetAttempts("nope")->empty());
  EXPECT_TRUE(store_->ListDeadLetters("nope")->empty());
  EXPECT_TRUE(store_->ListUnfinishedExecutions()->empty());
  EXPECT_TRUE(store_->ListExecutions({})->empty());
}

TEST_P(StoreConformance, ConcurrentCommitsAndReads) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string id = Id("e", t);
      for (int i = 1; i <= kPerThread; ++i) {
        WriteBatch b;
        b.executions = {Execution(id, ExecutionStatus::kRunning, t)};
        b.steps.push_back(Step(id, Id("s", i), StepStatus::kPending, i));
        b.events = {Event(id, i)};
        EXPECT_TRUE(store_->Commit(b).ok());
        EXPECT_TRUE(store_->GetEvents(id, 0, 0).ok());
        EXPECT_TRUE(store_->ListUnfinishedExecutions().ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) {
    const std::string id = Id("e", t);
    EXPECT_EQ(store_->GetSteps(id)->size(), size_t{kPerThread});
    EXPECT_EQ(store_->GetEvents(id, 0, 0)->size(), size_t{kPerThread});
  }
}

INSTANTIATE_TEST_SUITE_P(AllStores, StoreConformance, ::testing::ValuesIn(Factories()),
                         [](const ::testing::TestParamInfo<StoreFactory>& p) {
                           return p.param.name;
                         });

}  // namespace
}  // namespace baton
