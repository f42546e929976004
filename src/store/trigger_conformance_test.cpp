// Conformance of the trigger records: webhooks, event triggers and the delivery outbox.
// Every Store implementation must pass these (the fixture is in conformance_test_util.h).
#include <baton/store.h>

#include "store/conformance_test_util.h"
#include "store/store_test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton {
namespace {

using testing::Factories;
using testing::Keys;
using testing::StoreConformance;
using testing::StoreFactory;

using Strings = std::vector<std::string>;

class TriggerConformance : public StoreConformance {};

HookRecord Hook(const std::string& ns, const std::string& name) {
  HookRecord h;
  h.ns = ns;
  h.name = name;
  h.workflow = "deploy";
  h.version = 3;
  h.secret = "s3cret-" + name;
  h.created_at = 1234;
  return h;
}

DeliveryRecord Delivery(const std::string& id, const std::string& execution, TimeMs created) {
  DeliveryRecord d;
  d.id = id;
  d.ns = "team-a";
  d.execution_id = execution;
  d.event = "execution.failed";
  d.kind = "notification";
  d.target = "http://hooks.example/x";
  d.payload = Json{{"event", "execution.failed"}, {"n", 1}};
  d.next_attempt_at = created + 10;
  d.created_at = created;
  d.updated_at = created;
  return d;
}

TEST_P(TriggerConformance, HooksRoundTripByNameAndNamespace) {
  WriteBatch b;
  b.hooks = {Hook("team-a", "gh"), Hook("team-b", "ci"), Hook("team-a", "alerts")};
  ASSERT_TRUE(store_->Commit(b).ok());
  auto name = [](const HookRecord& h) { return h.name; };
  EXPECT_EQ(Keys(*store_->ListHooks("team-a"), name), (Strings{"alerts", "gh"}));
  EXPECT_EQ(Keys(*store_->ListHooks(""), name), (Strings{"alerts", "ci", "gh"}));
  auto gh = store_->GetHook("gh");
  ASSERT_TRUE(gh.ok());
  EXPECT_EQ(gh->ns, "team-a");
  EXPECT_EQ(gh->workflow, "deploy");
  EXPECT_EQ(gh->version, 3);
  EXPECT_EQ(gh->secret, "s3cret-gh");
  EXPECT_EQ(gh->created_at, 1234);
  EXPECT_EQ(store_->GetHook("nope").status().code(), errc::kNotFound);

  WriteBatch update;
  update.hooks = {Hook("team-a", "gh")};
  update.hooks[0].secret = "rotated";
  ASSERT_TRUE(store_->Commit(update).ok());
  EXPECT_EQ(store_->GetHook("gh")->secret, "rotated");
  EXPECT_EQ(store_->ListHooks("")->size(), 3u);

  EXPECT_EQ(store_->DeleteHook("team-b", "gh").code(), errc::kNotFound);  // not its own
  ASSERT_TRUE(store_->DeleteHook("team-a", "gh").ok());
  EXPECT_EQ(store_->GetHook("gh").status().code(), errc::kNotFound);
}

TEST_P(TriggerConformance, TriggersRoundTripInCreationOrder) {
  TriggerRecord t;
  t.id = "trg_b";
  t.ns = "team-a";
  t.name = "after-train";
  t.source = "train";
  t.on = {"completed", "failed"};
  t.workflow = "evaluate";
  t.version = 2;
  t.input = Json{{"model", "{{ source.output.model }}"}};
  t.created_at = 77;
  TriggerRecord u = t;
  u.id = "trg_a";
  u.ns = "team-b";
  u.on = {"cancelled"};
  WriteBatch b;
  b.triggers = {t, u};
  ASSERT_TRUE(store_->Commit(b).ok());
  auto id = [](const TriggerRecord& r) { return r.id; };
  EXPECT_EQ(Keys(*store_->ListTriggers(""), id), (Strings{"trg_b", "trg_a"}));
  auto mine = store_->ListTriggers("team-a");
  ASSERT_EQ(mine->size(), 1u);
  const TriggerRecord& r = mine->front();
  EXPECT_EQ(r.name, "after-train");
  EXPECT_EQ(r.source, "train");
  EXPECT_EQ(r.on, (Strings{"completed", "failed"}));
  EXPECT_EQ(r.workflow, "evaluate");
  EXPECT_EQ(r.version, 2);
  EXPECT_EQ(r.input, t.input);
  EXPECT_EQ(r.created_at, 77);

  EXPECT_EQ(store_->DeleteTrigger("team-a", "trg_a").code(), errc::kNotFound);
  ASSERT_TRUE(store_->DeleteTrigger("team-b", "trg_a").ok());
  EXPECT_EQ(Keys(*store_->ListTriggers(""), id), (Strings{"trg_b"}));
}

TEST_P(TriggerConformance, DeliveriesUpsertAndFilter) {
  WriteBatch b;
  b.deliveries = {Delivery("dlv_2", "ex1", 20), Delivery("dlv_1", "ex1", 20),
                  Delivery("dlv_3", "ex2", 10)};
  b.deliveries[2].ns = "team-b";
  ASSERT_TRUE(store_->Commit(b).ok());
  auto id = [](const DeliveryRecord& d) { return d.id; };
  DeliveryFilter all;
  EXPECT_EQ(Keys(*store_->ListDeliveries(all), id), (Strings{"dlv_3", "dlv_1", "dlv_2"}));
  DeliveryFilter ns;
  ns.ns = "team-a";
  EXPECT_EQ(Keys(*store_->ListDeliveries(ns), id), (Strings{"dlv_1", "dlv_2"}));
  DeliveryFilter one;
  one.execution_id = "ex2";
  EXPECT_EQ(Keys(*store_->ListDeliveries(one), id), (Strings{"dlv_3"}));
  DeliveryFilter limited;
  limited.limit = 1;
  EXPECT_EQ(Keys(*store_->ListDeliveries(limited), id), (Strings{"dlv_3"}));

  // A delivery attempt rewrites the row; the status filter follows.
  DeliveryRecord done = Delivery("dlv_1", "ex1", 20);
  done.status = DeliveryStatus::kDelivered;
  done.attempts = 2;
  done.last_error = Json{{"code", "HTTP_STATUS"}, {"message", "503"}, {"http_status", 503}};
  done.result = "ex9";
  done.updated_at = 99;
  WriteBatch update;
  update.deliveries = {done};
  ASSERT_TRUE(store_->Commit(update).ok());
  DeliveryFilter pending;
  pending.status = DeliveryStatus::kPending;
  EXPECT_EQ(Keys(*store_->ListDeliveries(pending), id), (Strings{"dlv_3", "dlv_2"}));
  auto got = store_->GetDelivery("dlv_1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->status, DeliveryStatus::kDelivered);
  EXPECT_EQ(got->attempts, 2);
  EXPECT_EQ(got->last_error, done.last_error);
  EXPECT_EQ(got->result, "ex9");
  EXPECT_EQ(got->payload, done.payload);
  EXPECT_EQ(got->event, "execution.failed");
  EXPECT_EQ(got->kind, "notification");
  EXPECT_EQ(got->target, "http://hooks.example/x");
  EXPECT_EQ(got->next_attempt_at, 30);
  EXPECT_EQ(got->updated_at, 99);
  EXPECT_EQ(store_->GetDelivery("dlv_x").status().code(), errc::kNotFound);
}

INSTANTIATE_TEST_SUITE_P(AllStores, TriggerConformance, ::testing::ValuesIn(Factories()),
                         [](const ::testing::TestParamInfo<StoreFactory>& p) {
                           return p.param.name;
                         });

}  // namespace
}  // namespace baton
