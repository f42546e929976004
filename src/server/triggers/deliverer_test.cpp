// The outbox in virtual time: what a finished execution writes (FollowUps), retries with
// backoff, giving up, restarts, redelivery (Deliverer).
#include "server/triggers/deliverer.h"
#include "server/triggers/follow_ups.h"

#include <baton/event_loop.h>
#include <baton/memory_store.h>

#include <gtest/gtest.h>

#include <deque>

namespace baton::server {
namespace {

constexpr TimeMs kStart = 1'767'607'200'000;

ExecutionRecord Finished(ExecutionStatus status) {
  ExecutionRecord e;
  e.id = "ex1";
  e.ns = "team-a";
  e.workflow = "train";
  e.version = 2;
  e.status = status;
  e.input = {{"model", "m1"}};
  e.output = {{"accuracy", 0.9}};
  e.created_at = kStart - 5000;
  e.started_at = kStart - 4000;
  e.completed_at = kStart;
  return e;
}

WorkflowDef WithNotify(Json notify) {
  WorkflowDef w;
  w.name = "train";
  w.notify = std::move(notify);
  return w;
}

TriggerRecord Trigger(const std::string& id, const std::string& source, const std::string& target,
                      std::vector<std::string> on = {"completed"}) {
  TriggerRecord t;
  t.id = id;
  t.ns = "team-a";
  t.source = source;
  t.workflow = target;
  t.on = std::move(on);
  return t;
}

TEST(FollowUps, WritesMatchingNotificationsAndTriggersIntoTheBatch) {
  std::vector<DeliveryRecord> delivered;
  FollowUps follow([&](std::vector<DeliveryRecord> r) { delivered = std::move(r); });
  TriggerRecord t = Trigger("trg_1", "train", "evaluate");
  t.input = {{"model", "{{ source.input.model }}"}, {"score", "{{ source.output.accuracy }}"}};
  follow.SetTriggers(
      {t, Trigger("trg_2", "train", "cleanup", {"failed"}), Trigger("trg_3", "other", "x")});
  WorkflowDef wf = WithNotify(Json::parse(R"([
      {"url": "http://a/all"},
      {"url": "http://a/failures", "events": ["execution.failed"]},
      {"url": "http://a/done", "events": ["execution.completed", "execution.failed"]}])"));
  WriteBatch batch;
  auto after = follow.OnFinish(Finished(ExecutionStatus::kCompleted), wf, batch);
  ASSERT_EQ(batch.deliveries.size(), 3u);
  EXPECT_EQ(batch.deliveries[0].target, "http://a/all");
  EXPECT_EQ(batch.deliveries[1].target, "http://a/done");
  const DeliveryRecord& n = batch.deliveries[0];
  EXPECT_EQ(n.kind, "notification");
  EXPECT_EQ(n.event, "execution.completed");
  EXPECT_EQ(n.ns, "team-a");
  EXPECT_EQ(n.status, DeliveryStatus::kPending);
  EXPECT_EQ(n.payload["delivery_id"], n.id);
  EXPECT_EQ(n.payload["execution"]["status"], "completed");
  EXPECT_EQ(n.payload["execution"]["output"]["accuracy"], 0.9);
  const DeliveryRecord& tr = batch.deliveries[2];
  EXPECT_EQ(tr.kind, "trigger");
  EXPECT_EQ(tr.target, "trg_1");
  EXPECT_EQ(tr.payload["workflow"], "evaluate");
  EXPECT_EQ(tr.payload["input"], (Json{{"model", "m1"}, {"score", 0.9}}));
  ASSERT_TRUE(after);
  EXPECT_TRUE(delivered.empty());  // only once the batch is durable
  after();
  EXPECT_EQ(delivered.size(), 3u);
}

TEST(FollowUps, AnUnresolvedTemplateFailsTheDeliveryAtOnce) {
  std::vector<DeliveryRecord> delivered;
  FollowUps follow([&](std::vector<DeliveryRecord> r) { delivered = std::move(r); });
  TriggerRecord t = Trigger("trg_1", "train", "evaluate", {"failed"});
  t.input = {{"x", "{{ source.output.missing }}"}};
  follow.SetTriggers({t});
  WriteBatch batch;
  auto after = follow.OnFinish(Finished(ExecutionStatus::kFailed), WorkflowDef{}, batch);
  ASSERT_EQ(batch.deliveries.size(), 1u);
  EXPECT_EQ(batch.deliveries[0].status, DeliveryStatus::kFailed);
  EXPECT_NE(batch.deliveries[0].last_error["message"].get<std::string>().find("missing"),
            std::string::npos);
  EXPECT_FALSE(after);  // nothing left to deliver
}

TEST(FollowUps, NothingToDoWritesNothing) {
  FollowUps follow([](std::vector<DeliveryRecord>) {});
  follow.SetTriggers({Trigger("trg_1", "train", "evaluate", {"failed"})});
  WriteBatch batch;
  EXPECT_FALSE(follow.OnFinish(Finished(ExecutionStatus::kCompleted), WorkflowDef{}, batch));
  EXPECT_TRUE(batch.deliveries.empty());
}

TEST(FollowUps, TriggersCanBeReplacedAndRemoved) {
  FollowUps follow([](std::vector<DeliveryRecord>) {});
  follow.PutTrigger(Trigger("trg_1", "train", "evaluate"));
  TriggerRecord moved = Trigger("trg_1", "other", "evaluate");  // same id, another source
  follow.PutTrigger(moved);
  WriteBatch batch;
  follow.OnFinish(Finished(ExecutionStatus::kCompleted), WorkflowDef{}, batch);
  EXPECT_TRUE(batch.deliveries.empty());  // train is no longer watched
  follow.PutTrigger(Trigger("trg_2", "train", "evaluate"));
  follow.OnFinish(Finished(ExecutionStatus::kCompleted), WorkflowDef{}, batch);
  ASSERT_EQ(batch.deliveries.size(), 1u);
  EXPECT_EQ(batch.deliveries[0].target, "trg_2");
  follow.RemoveTrigger("trg_2");
  follow.RemoveTrigger("trg_unknown");
  WriteBatch after;
  follow.OnFinish(Finished(ExecutionStatus::kCompleted), WorkflowDef{}, after);
  EXPECT_TRUE(after.deliveries.empty());
}

TEST(FollowUps, TriggerCyclesAndBadStatusesAreRefused) {
  std::vector<TriggerRecord> existing = {Trigger("t1", "a", "b"), Trigger("t2", "b", "c")};
  EXPECT_TRUE(ValidateTrigger(Trigger("t3", "c", "d"), existing).ok());
  Status cycle = ValidateTrigger(Trigger("t3", "c", "a"), existing);
  EXPECT_EQ(cycle.message(), "field 'workflow': the trigger would form a cycle: c -> a -> b -> c");
  EXPECT_FALSE(ValidateTrigger(Trigger("t3", "a", "a"), {}).ok());
  TriggerRecord other_ns = Trigger("t3", "c", "a");
  other_ns.ns = "team-b";
  EXPECT_TRUE(ValidateTrigger(other_ns, existing).ok());
  EXPECT_FALSE(ValidateTrigger(Trigger("t3", "x", "y", {"running"}), {}).ok());
  EXPECT_FALSE(ValidateTrigger(Trigger("t3", "x", "y", {}), {}).ok());
}

// A receiver whose answers the test scripts; requests are answered when the test says.
struct Fixture {
  SimClock clock{kStart};
  SimEventLoop loop{&clock};
  std::unique_ptr<Store> store = NewMemoryStore();
  std::unique_ptr<Committer> committer = NewSyncCommitter(store.get());
  std::deque<Deliverer::Outcome> answers;  // popped per attempt; empty = success
  std::vector<std::pair<TimeMs, std::string>> sent;
  std::unique_ptr<Deliverer> deliverer;

  explicit Fixture(Deliverer::Options options = {}) { Reset(options); }
  void Reset(Deliverer::Options options = {}) {
    Deliverer::Hooks hooks;
    hooks.notify = [this](const DeliveryRecord& r, std::function<void(Deliverer::Outcome)> done) {
      sent.emplace_back(clock.Now(), r.id);
      Deliverer::Outcome out;
      if (!answers.empty()) {
        out = answers.front();
        answers.pop_front();
      }
      done(out);
    };
    hooks.trigger = [this](const DeliveryRecord& r, std::function<void(Deliverer::Outcome)> done) {
      sent.emplace_back(clock.Now(), r.id);
      Deliverer::Outcome out;
      out.result = "started-by-" + r.id;
      done(out);
    };
    deliverer = std::make_unique<Deliverer>(&loop, committer.get(), hooks, options);
  }
  DeliveryRecord Pending(const std::string& id, const std::string& kind = "notification") {
    DeliveryRecord d;
    d.id = id;
    d.kind = kind;
    d.execution_id = "ex1";
    d.target = "http://receiver/x";
    d.created_at = d.updated_at = d.next_attempt_at = clock.Now();
    WriteBatch b;
    b.deliveries.push_back(d);
    EXPECT_TRUE(store->Commit(b).ok());
    return d;
  }
  static Deliverer::Outcome Http(int status) {
    Deliverer::Outcome o;
    o.status = Status(errc::kHttpStatus, "POST returned " + std::to_string(status));
    o.http_status = status;
    o.retryable = RetryableHttpStatus(status);
    return o;
  }
  DeliveryRecord Stored(const std::string& id) { return store->GetDelivery(id).value(); }
};

TEST(Deliverer, RetriesWithExponentialBackoffUntilDelivered) {
  Fixture f;
  f.answers = {Fixture::Http(503), Fixture::Http(500), Fixture::Http(429)};
  f.deliverer->Add({f.Pending("dlv_1")});
  f.loop.RunUntilIdle();
  ASSERT_EQ(f.sent.size(), 4u);
  // Attempt 1 at once, then 1 s, 2 s and 4 s after each failure.
  EXPECT_EQ(f.sent[0].first, kStart);
  EXPECT_EQ(f.sent[1].first, kStart + 1000);
  EXPECT_EQ(f.sent[2].first, kStart + 3000);
  EXPECT_EQ(f.sent[3].first, kStart + 7000);
  DeliveryRecord r = f.Stored("dlv_1");
  EXPECT_EQ(r.status, DeliveryStatus::kDelivered);
  EXPECT_EQ(r.attempts, 4);
  EXPECT_TRUE(r.last_error.is_null());
  EXPECT_EQ(r.updated_at, kStart + 7000);
  EXPECT_EQ(f.deliverer->stats().delivered, 1u);
  EXPECT_EQ(f.deliverer->stats().retried, 3u);
}

TEST(Deliverer, GivesUpAfterMaxAttemptsWithTheLastError) {
  Deliverer::Options options;
  options.max_attempts = 3;
  options.base_delay = Duration(100);
  Fixture f(options);
  for (int i = 0; i < 5; ++i) f.answers.push_back(Fixture::Http(502));
  f.deliverer->Add({f.Pending("dlv_1")});
  f.loop.RunUntilIdle();
  EXPECT_EQ(f.sent.size(), 3u);
  DeliveryRecord r = f.Stored("dlv_1");
  EXPECT_EQ(r.status, DeliveryStatus::kFailed);
  EXPECT_EQ(r.attempts, 3);
  EXPECT_EQ(r.last_error["http_status"], 502);
  EXPECT_EQ(r.last_error["code"], "HTTP_STATUS");
  EXPECT_EQ(f.deliverer->stats().failed, 1u);
  EXPECT_EQ(f.deliverer->stats().pending, 0u);
}

TEST(Deliverer, AClientErrorIsNotRetried) {
  Fixture f;
  f.answers = {Fixture::Http(404)};
  f.deliverer->Add({f.Pending("dlv_1")});
  f.loop.RunUntilIdle();
  EXPECT_EQ(f.sent.size(), 1u);
  EXPECT_EQ(f.Stored("dlv_1").status, DeliveryStatus::kFailed);
}

TEST(Deliverer, BackoffIsCapped) {
  Deliverer::Options options;
  options.max_attempts = 6;
  options.base_delay = Duration(1000);
  options.max_delay = Duration(3000);
  Fixture f(options);
  for (int i = 0; i < 5; ++i) f.answers.push_back(Fixture::Http(500));
  f.deliverer->Add({f.Pending("dlv_1")});
  f.loop.RunUntilIdle();
  ASSERT_EQ(f.sent.size(), 6u);
  std::vector<TimeMs> gaps;
  for (size_t i = 1; i < f.sent.size(); ++i) gaps.push_back(f.sent[i].first - f.sent[i - 1].first);
  EXPECT_EQ(gaps, (std::vector<TimeMs>{1000, 2000, 3000, 3000, 3000}));
}

TEST(Deliverer, PendingDeliveriesContinueAfterARestartAtTheirStoredTime) {
  Fixture f;
  f.answers = {Fixture::Http(503)};
  f.deliverer->Add({f.Pending("dlv_1")});
  f.loop.RunReady();  // attempt 1 fails; attempt 2 is due in 1 s
  ASSERT_EQ(f.sent.size(), 1u);
  EXPECT_EQ(f.Stored("dlv_1").next_attempt_at, kStart + 1000);
  f.Reset();  // the process restarts: only the store is left
  DeliveryFilter pending;
  pending.status = DeliveryStatus::kPending;
  f.deliverer->Add(f.store->ListDeliveries(pending).value());
  f.loop.RunUntilIdle();
  ASSERT_EQ(f.sent.size(), 2u);
  EXPECT_EQ(f.sent[1].first, kStart + 1000);
  EXPECT_EQ(f.Stored("dlv_1").status, DeliveryStatus::kDelivered);
  EXPECT_EQ(f.Stored("dlv_1").attempts, 2);
}

TEST(Deliverer, TriggersRecordTheExecutionTheyStarted) {
  Fixture f;
  f.deliverer->Add({f.Pending("dlv_7", "trigger")});
  f.loop.RunUntilIdle();
  EXPECT_EQ(f.Stored("dlv_7").result, "started-by-dlv_7");
}

TEST(Deliverer, OnlyAFailedDeliveryCanBeRedelivered) {
  Fixture f;
  f.answers = {Fixture::Http(400)};
  f.deliverer->Add({f.Pending("dlv_1")});
  f.loop.RunUntilIdle();
  ASSERT_EQ(f.Stored("dlv_1").status, DeliveryStatus::kFailed);
  EXPECT_EQ(f.deliverer->Redeliver(f.Pending("dlv_2")).status().code(), errc::kConflict);
  auto again = f.deliverer->Redeliver(f.Stored("dlv_1"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->status, DeliveryStatus::kPending);
  f.loop.RunUntilIdle();
  EXPECT_EQ(f.Stored("dlv_1").status, DeliveryStatus::kDelivered);
  EXPECT_EQ(f.Stored("dlv_1").attempts, 1);
}

}  // namespace
}  // namespace baton::server
