// Leases of executions between instances sharing one database (ExecutionLeases): what a
// commit of each instance may write, claiming an expired lease, fencing the instance
// that lost it, child workflows held with their root, and the leader role. Two stores
// with different instance names stand for two servers.
#include <baton/postgres_store.h>

#include "store/postgres/pg_test_util.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace baton::pg {
namespace {

class PgLeases : public PgTest {
 protected:
  static std::unique_ptr<Store> Open(const std::string& url, const std::string& instance,
                                     Duration lease = Duration(60'000)) {
    return OpenInstance(url, instance, lease);
  }

  // Two instances, "a" and "b", on a new database; each renewed (trusted) once when
  // `renewed`.
  struct Two {
    std::string url;
    std::unique_ptr<Store> a, b;
  };
  Two OpenTwo(bool renewed) {
    Two t;
    t.url = NewDatabase();
    t.a = Open(t.url, "a");
    t.b = Open(t.url, "b");
    EXPECT_TRUE(t.a && t.b);
    if (renewed && t.a && t.b) {
      EXPECT_TRUE(t.a->leases()->Renew().ok());
      EXPECT_TRUE(t.b->leases()->Renew().ok());
    }
    return t;
  }

  static WriteBatch Execution(const std::string& id, ExecutionStatus status,
                              const std::string& parent = "") {
    WriteBatch b;
    ExecutionRecord e;
    e.id = id;
    e.workflow = "w";
    e.status = status;
    e.parent_id = parent;
    if (!parent.empty()) e.parent_step = "call";
    b.executions.push_back(e);
    return b;
  }
  static WriteBatch Event(const std::string& id, int64_t seq) {
    WriteBatch b;
    EventRecord ev;
    ev.execution_id = id;
    ev.seq = seq;
    ev.type = "step.completed";
    b.events.push_back(ev);
    return b;
  }
  static size_t Events(Store& s, const std::string& id) {
    auto events = s.GetEvents(id, 0, 0);
    EXPECT_TRUE(events.ok()) << events.status().ToString();
    return events.ok() ? events->size() : 0;
  }
  static void Expire(const std::string& url, const std::string& id) {
    auto c = Connection::Open(url);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto r = c->Exec("UPDATE execution_leases SET lease_until = 0 WHERE execution_id = $1", {id},
                     "expiring");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
};

TEST_F(PgLeases, AStartedExecutionIsHeldAndAnotherInstanceCannotWriteIt) {
  auto [url, a, b] = OpenTwo(/*renewed=*/true);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->Commit(Execution("x", ExecutionStatus::kRunning)).ok());
  EXPECT_TRUE(a->leases()->Holds("x"));
  EXPECT_FALSE(b->leases()->Holds("x"));
  Status s = b->Commit(Event("x", 1));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("execution x is held by instance a"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(Events(*a, "x"), 0u);  // nothing of the refused batch
  EXPECT_TRUE(a->Commit(Event("x", 1)).ok());
  EXPECT_EQ(Events(*a, "x"), 1u);
}

TEST_F(PgLeases, AnExpiredLeaseIsClaimedAndTheInstanceThatLostItIsFenced) {
  auto [url, a, b] = OpenTwo(/*renewed=*/true);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->Commit(Execution("x", ExecutionStatus::kRunning)).ok());
  // Nothing expired yet: nothing to claim.
  auto none = b->leases()->Claim(10, false);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_TRUE(none->empty());
  Expire(url, "x");  // as if `a` had stopped renewing
  auto claimed = b->leases()->Claim(10, false);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  EXPECT_EQ(*claimed, std::vector<std::string>{"x"});
  EXPECT_TRUE(b->leases()->Holds("x"));
  // `a` still believes it holds x (its renewal has not run): the database refuses it.
  ASSERT_TRUE(a->leases()->Holds("x"));
  Status s = a->Commit(Event("x", 1));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("lost its lease of execution x"), std::string::npos) << s.ToString();
  EXPECT_EQ(Events(*a, "x"), 0u);
  // Known lost at once (not read back and written again before the next renewal).
  EXPECT_FALSE(a->leases()->Holds("x"));
  // Its renewal says so, and until Forget() its writes of x are refused without a trip.
  auto lost = a->leases()->Renew();
  ASSERT_TRUE(lost.ok()) << lost.status().ToString();
  EXPECT_EQ(*lost, std::vector<std::string>{"x"});
  EXPECT_FALSE(a->leases()->Holds("x"));
  s = a->Commit(Event("x", 1));
  EXPECT_NE(s.message().find("lost its lease of execution x"), std::string::npos) << s.ToString();
  a->leases()->Forget({"x"});
  s = a->Commit(Event("x", 1));
  EXPECT_NE(s.message().find("execution x is held by instance b"), std::string::npos)
      << s.ToString();
  // The new holder writes.
  EXPECT_TRUE(b->Commit(Event("x", 1)).ok());
  EXPECT_EQ(Events(*b, "x"), 1u);
}

TEST_F(PgLeases, LeasesNotRenewedInTimeRefuseCommitsUntilARenewal) {
  const std::string url = NewDatabase();
  auto a = Open(url, "a", Duration(400));
  ASSERT_TRUE(a);
  ASSERT_TRUE(a->Commit(Execution("x", ExecutionStatus::kRunning)).ok());  // new: nothing held
  Status s = a->Commit(Event("x", 1));  // never renewed: not trusted
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not renewed in time"), std::string::npos) << s.ToString();
  ASSERT_TRUE(a->leases()->Renew().ok());
  EXPECT_TRUE(a->leases()->Trusted());
  EXPECT_TRUE(a->Commit(Event("x", 1)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(350));  // past 3/4 of the lease
  EXPECT_FALSE(a->leases()->Trusted());
  s = a->Commit(Event("x", 2));
  EXPECT_NE(s.message().find("not renewed in time"), std::string::npos) << s.ToString();
  // Renewed before anyone took it: held again, with the same fence.
  auto lost = a->leases()->Renew();
  ASSERT_TRUE(lost.ok());
  EXPECT_TRUE(lost->empty());
  EXPECT_TRUE(a->Commit(Event("x", 2)).ok());
}

TEST_F(PgLeases, FinishingReleasesAndRunningAgainTakesIt) {
  auto [url, a, b] = OpenTwo(/*renewed=*/true);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->Commit(Execution("x", ExecutionStatus::kRunning)).ok());
  ASSERT_TRUE(a->Commit(Execution("x", ExecutionStatus::kFailed)).ok());
  EXPECT_FALSE(a->leases()->Holds("x"));
  auto claimed = b->leases()->Claim(10, false);  // finished: nothing to claim
  ASSERT_TRUE(claimed.ok());
  EXPECT_TRUE(claimed->empty());
  // Retried on b: b takes it.
  ASSERT_TRUE(b->Commit(Execution("x", ExecutionStatus::kRunning)).ok());
  EXPECT_TRUE(b->leases()->Holds("x"));
  Status s = a->Commit(Event("x", 1));
  EXPECT_NE(s.message().find("held by instance b"), std::string::npos) << s.ToString();
}

TEST_F(PgLeases, AChildWorkflowIsHeldWithItsRoot) {
  auto [url, a, b] = OpenTwo(/*renewed=*/true);
  ASSERT_TRUE(a && b);
  WriteBatch family = Execution("root", ExecutionStatus::kRunning);
  family.executions.push_back(Execution("child", ExecutionStatus::kRunning, "root").executions[0]);
  ASSERT_TRUE(a->Commit(family).ok());
  EXPECT_TRUE(a->leases()->Holds("root"));
  EXPECT_FALSE(a->leases()->Holds("child"));  // no lease of its own
  ASSERT_TRUE(a->Commit(Execution("grandchild", ExecutionStatus::kRunning, "child")).ok());
  Status s = b->Commit(Event("grandchild", 1));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("execution grandchild (a child workflow) is held by instance a"),
            std::string::npos)
      << s.ToString();
  EXPECT_TRUE(a->Commit(Event("grandchild", 1)).ok());
  // Claiming the root brings the family: nothing else to claim.
  Expire(url, "root");
  auto claimed = b->leases()->Claim(10, false);
  ASSERT_TRUE(claimed.ok());
  EXPECT_EQ(*claimed, std::vector<std::string>{"root"});
  ASSERT_TRUE(b->leases()->Renew().ok());
  EXPECT_TRUE(b->Commit(Event("grandchild", 2)).ok());
}

TEST_F(PgLeases, ExecutionsWrittenBeforeLeasesAreClaimedByTheFirstInstance) {
  const std::string url = NewDatabase();
  {
    auto single = OpenPostgresStore(url);
    ASSERT_TRUE(single.ok()) << single.status().ToString();
    ASSERT_TRUE((*single)->Commit(Execution("old", ExecutionStatus::kRunning)).ok());
    ASSERT_TRUE((*single)->Commit(Execution("done", ExecutionStatus::kCompleted)).ok());
    ASSERT_TRUE((*single)->Commit(Execution("kid", ExecutionStatus::kRunning, "old")).ok());
  }
  auto a = Open(url, "a");
  ASSERT_TRUE(a);
  auto claimed = a->leases()->Claim(10, true);
  ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
  EXPECT_EQ(*claimed, std::vector<std::string>{"old"});
}

// Seed 001's scenario: two instances racing to claim the same expired leases never both
// take one, so never both advance one execution.
TEST_F(PgLeases, InstancesRacingToClaimTakeEachExecutionOnce) {
  const std::string url = NewDatabase();
  auto dead = Open(url, "dead");
  ASSERT_TRUE(dead);
  WriteBatch many;
  for (int i = 0; i < 500; ++i) {
    many.executions.push_back(
        Execution("x" + std::to_string(i), ExecutionStatus::kRunning).executions[0]);
  }
  ASSERT_TRUE(dead->Commit(many).ok());
  ASSERT_TRUE(dead->leases()->Renew().ok());  // it trusts its leases: only the fence stops it
  auto c = Connection::Open(url);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->Exec("UPDATE execution_leases SET lease_until = 0", {}, "expiring").ok());
  auto a = Open(url, "a");
  auto b = Open(url, "b");
  ASSERT_TRUE(a && b);
  std::vector<std::string> by_a, by_b;
  auto claim_all = [](Store* s, std::vector<std::string>* out) {
    for (;;) {
      auto claimed = s->leases()->Claim(25, false);
      ASSERT_TRUE(claimed.ok()) << claimed.status().ToString();
      if (claimed->empty()) return;
      out->insert(out->end(), claimed->begin(), claimed->end());
    }
  };
  std::thread ta(claim_all, a.get(), &by_a);
  std::thread tb(claim_all, b.get(), &by_b);
  ta.join();
  tb.join();
  std::set<std::string> all(by_a.begin(), by_a.end());
  for (const std::string& id : by_b) EXPECT_TRUE(all.insert(id).second) << id << " taken twice";
  EXPECT_EQ(all.size(), 500u);
  EXPECT_EQ(by_a.size() + by_b.size(), 500u);
  // Each writes what it took and is refused what the other took.
  ASSERT_TRUE(a->leases()->Renew().ok());
  ASSERT_TRUE(b->leases()->Renew().ok());
  if (!by_a.empty() && !by_b.empty()) {
    EXPECT_TRUE(a->Commit(Event(by_a.front(), 1)).ok());
    EXPECT_FALSE(a->Commit(Event(by_b.front(), 1)).ok());
    Status stale = dead->Commit(Event(by_a.front(), 2));
    EXPECT_NE(stale.message().find("lost its lease of execution " + by_a.front()),
              std::string::npos)
        << stale.ToString();
  }
}

TEST_F(PgLeases, ARoleIsHeldByOneInstanceAtATime) {
  auto [url, a, b] = OpenTwo(/*renewed=*/false);
  ASSERT_TRUE(a && b);
  EXPECT_TRUE(*a->leases()->Lead("cron"));
  EXPECT_FALSE(*b->leases()->Lead("cron"));
  EXPECT_TRUE(*a->leases()->Lead("cron"));
  // As if `a` had stopped renewing it: its lease runs out (by the database's clock).
  auto c = Connection::Open(url);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->Exec("UPDATE leaders SET lease_until = 0", {}, "expiring the role").ok());
  EXPECT_TRUE(*b->leases()->Lead("cron"));
  EXPECT_FALSE(*a->leases()->Lead("cron"));
}

}  // namespace
}  // namespace baton::pg
