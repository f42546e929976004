// SharedPools on PostgreSQL: the slots of a pool counted across instances, kept by a
// holder that holds already, forced for a step that held them before, given back, and
// lapsing when the instance that holds them stops renewing them.
#include <baton/postgres_store.h>

#include "store/postgres/pg_test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton::pg {
namespace {

class PgPools : public PgTest {};

PoolHold Hold(const std::string& holder, int64_t slots = 1) {
  return PoolHold{"default", "gpu", holder, slots};
}
bool Held(const Result<bool>& r) {
  return r.ok() && *r;
}
bool Refused(const Result<bool>& r) {
  return r.ok() && !*r;
}
int64_t Count(const Result<int64_t>& r) {
  return r.ok() ? *r : -1;
}

TEST_F(PgPools, SlotsAreCountedAcrossInstances) {
  const std::string url = NewDatabase();
  auto a = OpenInstance(url, "a");
  auto b = OpenInstance(url, "b");
  ASSERT_TRUE(a && b);
  SharedPools* pa = a->shared_pools();
  SharedPools* pb = b->shared_pools();
  ASSERT_TRUE(pa && pb);
  auto single = OpenPostgresStore(NewDatabase());
  ASSERT_TRUE(single.ok());
  EXPECT_EQ((*single)->shared_pools(), nullptr) << "one server per database counts alone";

  EXPECT_TRUE(Held(pa->HoldSlots(Hold("x/s"), 2, false)));
  EXPECT_TRUE(Refused(pb->HoldSlots(Hold("y/s", 2), 2, false))) << "1 + 2 > 2";
  EXPECT_TRUE(Held(pb->HoldSlots(Hold("y/s"), 2, false)));
  EXPECT_TRUE(Refused(pb->HoldSlots(Hold("z/s"), 2, false))) << "the pool is full";
  EXPECT_TRUE(Held(pa->HoldSlots(Hold("x/s"), 2, false))) << "x holds already";
  EXPECT_EQ(Count(pb->SlotsHeld("default", "gpu")), 2);
  // Another pool, or namespace, counts apart.
  EXPECT_TRUE(Held(pb->HoldSlots({"default", "cpu", "z/s", 1}, 1, false)));
  EXPECT_TRUE(Held(pb->HoldSlots({"other", "gpu", "z/s", 1}, 1, false)));

  // A step that held its slots before a failover keeps them on its new instance.
  EXPECT_TRUE(Held(pb->HoldSlots(Hold("w/s"), 2, true)));
  EXPECT_EQ(Count(pa->SlotsHeld("default", "gpu")), 3);

  // Given back: only by the instance that holds them.
  ASSERT_TRUE(pb->ReleaseSlots(Hold("x/s")).ok());
  EXPECT_EQ(Count(pa->SlotsHeld("default", "gpu")), 3);
  ASSERT_TRUE(pa->ReleaseSlots(Hold("x/s")).ok());
  EXPECT_EQ(Count(pa->SlotsHeld("default", "gpu")), 2);
  ASSERT_TRUE(pb->ReleaseAllSlots().ok());
  EXPECT_EQ(Count(pa->SlotsHeld("default", "gpu")), 0);
  EXPECT_EQ(Count(pa->SlotsHeld("other", "gpu")), 0);
  EXPECT_TRUE(Held(pa->HoldSlots(Hold("z/s", 2), 2, false)));
}

// An instance that stops renewing (it died) stops counting once its lease is over; one
// that renews keeps its slots. The leases run out by moving their ends into the past
// (the database's clock decides), not by waiting.
TEST_F(PgPools, SlotsNotRenewedLapse) {
  const std::string url = NewDatabase();
  auto renewing = OpenInstance(url, "a");
  auto silent = OpenInstance(url, "b");
  auto other = OpenInstance(url, "c");
  ASSERT_TRUE(renewing && silent && other);
  ASSERT_TRUE(Held(renewing->shared_pools()->HoldSlots(Hold("x/s"), 2, false)));
  ASSERT_TRUE(Held(silent->shared_pools()->HoldSlots(Hold("y/s"), 2, false)));
  SharedPools* pools = other->shared_pools();
  EXPECT_TRUE(Refused(pools->HoldSlots(Hold("z/s"), 2, false)));
  auto c = Connection::Open(url);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_TRUE(c->Script("UPDATE pool_holds SET lease_until = baton_now_ms() - 1",
                        "letting every hold's lease run out")
                  .ok());
  ASSERT_TRUE(renewing->leases()->Renew().ok());  // a renews; b, dead, does not
  EXPECT_EQ(Count(pools->SlotsHeld("default", "gpu")), 1) << "b's hold lapsed";
  EXPECT_TRUE(Held(pools->HoldSlots(Hold("z/s"), 2, false)));
  EXPECT_TRUE(Refused(pools->HoldSlots(Hold("v/s"), 2, false))) << "a's still counts";
}

// The holders of a pool on every instance, the longest held first (what a workflow's
// `concurrency: cancel_oldest` replaces); a hold taken again keeps its age, and one that
// lapsed is not listed.
TEST_F(PgPools, HoldersAreListedLongestHeldFirst) {
  const std::string url = NewDatabase();
  auto a = OpenInstance(url, "a");
  auto b = OpenInstance(url, "b");
  ASSERT_TRUE(a && b);
  auto c = Connection::Open(url);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // Holders named against their order, so that the order is the age's.
  for (const char* holder : {"z", "m", "a"}) {
    SharedPools* pools = holder[0] == 'm' ? b->shared_pools() : a->shared_pools();
    ASSERT_TRUE(Held(pools->HoldSlots(Hold(holder), 3, false)));
    // Ages a millisecond apart at least: the database's clock is what orders them.
    ASSERT_TRUE(c->Script("UPDATE pool_holds SET held_since = held_since - 10",
                          "ageing the holds taken so far")
                    .ok());
  }
  auto holders = b->shared_pools()->Holders("default", "gpu");
  ASSERT_TRUE(holders.ok()) << holders.status().ToString();
  EXPECT_EQ(*holders, (std::vector<std::string>{"z", "m", "a"}));
  // Taken again on another instance (a failover): still the oldest.
  ASSERT_TRUE(Held(b->shared_pools()->HoldSlots(Hold("z"), 3, true)));
  holders = a->shared_pools()->Holders("default", "gpu");
  ASSERT_TRUE(holders.ok());
  EXPECT_EQ(*holders, (std::vector<std::string>{"z", "m", "a"}));
  // A hold whose lease ran out is not a holder.
  ASSERT_TRUE(c->Script("UPDATE pool_holds SET lease_until = baton_now_ms() - 1 WHERE holder = 'm'",
                        "letting m's lease run out")
                  .ok());
  holders = a->shared_pools()->Holders("default", "gpu");
  ASSERT_TRUE(holders.ok());
  EXPECT_EQ(*holders, (std::vector<std::string>{"z", "a"}));
  EXPECT_TRUE(a->shared_pools()->Holders("default", "cpu")->empty());
}

}  // namespace
}  // namespace baton::pg
