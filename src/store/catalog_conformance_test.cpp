// Conformance of what the server keeps besides executions: namespaced workflows and
// their versions, tokens, and the execution filters and cursor of the list API.
// Every Store implementation must pass these (the fixture is in conformance_test_util.h).
#include <baton/store.h>

#include "store/conformance_test_util.h"
#include "store/store_test_util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace baton {
namespace {

using testing::Execution;
using testing::Factories;
using testing::Id;
using testing::StoreConformance;
using testing::StoreFactory;
using testing::ToJson;

using Strings = std::vector<std::string>;

class CatalogConformance : public StoreConformance {};

WorkflowRecord Workflow(const std::string& ns, const std::string& name, int version) {
  WorkflowRecord w;
  w.ns = ns;
  w.name = name;
  w.version = version;
  w.definition = Json{{"name", name}, {"v", version}};
  w.created_at = 1000 + version;
  return w;
}

Strings Names(const std::vector<WorkflowRecord>& v) {
  Strings out;
  for (const auto& w : v) out.push_back(w.name + "@" + std::to_string(w.version));
  return out;
}

TEST_P(CatalogConformance, WorkflowsAreSeparatedByNamespace) {
  WriteBatch b;
  b.workflows = {Workflow("a", "deploy", 1), Workflow("a", "deploy", 2), Workflow("b", "deploy", 1),
                 Workflow("a", "backup", 5)};
  Commit(b);
  EXPECT_EQ(store_->GetWorkflow("a", "deploy", 0)->version, 2);
  EXPECT_EQ(store_->GetWorkflow("b", "deploy", 0)->version, 1);
  EXPECT_EQ(store_->GetWorkflow("b", "deploy", 2).status().code(), errc::kNotFound);
  EXPECT_EQ(store_->GetWorkflow("c", "deploy", 0).status().code(), errc::kNotFound);
  EXPECT_EQ(ToJson(*store_->GetWorkflow("a", "backup", 5)), ToJson(b.workflows[3]));
  // The default-namespace overload sees none of them.
  EXPECT_EQ(store_->GetWorkflow("deploy", 0).status().code(), errc::kNotFound);
}

TEST_P(CatalogConformance, ListWorkflowsGivesLatestPerNameOrEveryVersion) {
  WriteBatch b;
  b.workflows = {Workflow("a", "deploy", 1), Workflow("a", "deploy", 3), Workflow("a", "deploy", 2),
                 Workflow("a", "backup", 1), Workflow("b", "zeta", 1)};
  Commit(b);
  auto latest = store_->ListWorkflows("a", "");
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(Names(*latest), (Strings{"backup@1", "deploy@3"}));
  EXPECT_EQ(ToJson(latest->at(1)), ToJson(b.workflows[1]));  // the whole latest row
  EXPECT_EQ(Names(*store_->ListWorkflows("a", "deploy")),
            (Strings{"deploy@3", "deploy@2", "deploy@1"}));
  EXPECT_TRUE(store_->ListWorkflows("a", "zeta")->empty());
  EXPECT_TRUE(store_->ListWorkflows("nobody", "")->empty());
}

TEST_P(CatalogConformance, DeleteWorkflowRemovesEveryVersionOfOneNamespace) {
  WriteBatch b;
  b.workflows = {Workflow("a", "deploy", 1), Workflow("a", "deploy", 2),
                 Workflow("b", "deploy", 1)};
  Commit(b);
  ASSERT_TRUE(store_->DeleteWorkflow("a", "deploy").ok());
  EXPECT_EQ(store_->GetWorkflow("a", "deploy", 0).status().code(), errc::kNotFound);
  EXPECT_TRUE(store_->ListWorkflows("a", "deploy")->empty());
  EXPECT_EQ(store_->GetWorkflow("b", "deploy", 0)->version, 1);
  EXPECT_EQ(store_->DeleteWorkflow("a", "deploy").code(), errc::kNotFound);
  // A new definition after a delete starts a fresh history.
  b.workflows = {Workflow("a", "deploy", 1)};
  Commit(b);
  EXPECT_EQ(store_->GetWorkflow("a", "deploy", 0)->version, 1);
}

TokenRecord Token(const std::string& id, const std::string& ns, const std::string& hash) {
  TokenRecord t;
  t.id = id;
  t.ns = ns;
  t.name = "ci for " + id;
  t.scopes = {"read", "write"};
  t.secret_hash = hash;
  t.created_at = 77;
  return t;
}

TEST_P(CatalogConformance, TokensRoundTripAndAreFoundByHash) {
  WriteBatch b;
  b.tokens = {Token("t1", "a", "h1"), Token("t2", "b", "h2"), Token("t3", "a", "h3")};
  Commit(b);
  auto found = store_->FindToken("h2");
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_EQ(ToJson(*found), ToJson(b.tokens[1]));
  EXPECT_EQ(store_->FindToken("nope").status().code(), errc::kNotFound);

  auto ids = [&](const std::string& ns) {
    Strings out;
    for (const auto& t : *store_->ListTokens(ns)) out.push_back(t.id);
    return out;
  };
  EXPECT_EQ(ids("a"), (Strings{"t1", "t3"}));
  EXPECT_EQ(ids(""), (Strings{"t1", "t2", "t3"}));

  // Revocation is an upsert of the same id; the token stays listed.
  TokenRecord revoked = b.tokens[0];
  revoked.revoked_at = 99;
  WriteBatch r;
  r.tokens = {revoked};
  Commit(r);
  EXPECT_EQ(store_->FindToken("h1")->revoked_at, 99);
  EXPECT_EQ(ids("a"), (Strings{"t1", "t3"}));
}

TEST_P(CatalogConformance, ExecutionFiltersNarrowAndCursorPages) {
  WriteBatch b;
  for (int i = 0; i < 10; ++i) {
    ExecutionRecord e = Execution(Id("e", i), ExecutionStatus::kCompleted, 100 + i / 2);
    e.ns = i < 8 ? "a" : "b";
    e.parent_id = i % 3 == 0 ? "p" : "";
    e.idempotency_key = i == 5 ? "key-5" : "";
    b.executions.push_back(e);
  }
  Commit(b);
  auto ids = [&](const ExecutionFilter& f) {
    Strings out;
    auto got = store_->ListExecutions(f);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    if (got.ok()) {
      for (const auto& e : *got) out.push_back(e.id);
    }
    return out;
  };
  ExecutionFilter f;
  f.ns = "a";
  // Equal created_at (two per time) are ordered by id, descending.
  EXPECT_EQ(ids(f), (Strings{"e7", "e6", "e5", "e4", "e3", "e2", "e1", "e0"}));
  f.parent_id = "p";
  EXPECT_EQ(ids(f), (Strings{"e6", "e3", "e0"}));
  f.parent_id.clear();
  f.created_from = 101;
  f.created_until = 103;
  EXPECT_EQ(ids(f), (Strings{"e5", "e4", "e3", "e2"}));
  f.created_from = f.created_until = 0;
  f.idempotency_key = "key-5";
  EXPECT_EQ(ids(f), (Strings{"e5"}));
  f.idempotency_key.clear();

  // Pages of three, each continuing after the last row of the previous one, see every
  // execution exactly once, even across equal created_at.
  f.limit = 3;
  Strings all;
  for (int page = 0; page < 5; ++page) {
    auto got = *store_->ListExecutions(f);
    for (const auto& e : got) all.push_back(e.id);
    if (got.size() < 3) break;
    f.after = ExecutionCursor{got.back().created_at, got.back().id};
  }
  EXPECT_EQ(all, (Strings{"e7", "e6", "e5", "e4", "e3", "e2", "e1", "e0"}));
}

TEST_P(CatalogConformance, SchedulesRoundTripUpsertAndDelete) {
  ScheduleRecord a;
  a.id = "sch_a";
  a.ns = "team-a";
  a.name = "nightly";
  a.workflow = "backup";
  a.version = 3;
  a.cron = "0 2 * * *";
  a.timezone = "Europe/Berlin";
  a.input = Json{{"full", true}};
  a.overlap = "cancel_old";
  a.catchup = "once";
  a.next_fire_at = 1'700'000'000'000;
  a.last_fire_at = 1'699'000'000'000;
  a.last_execution_id = "e1";
  a.created_at = 5;
  ScheduleRecord b = a;
  b.id = "sch_b";
  b.ns = "team-b";
  WriteBatch w;
  w.schedules = {a, b};
  Commit(w);
  auto got = store_->ListSchedules("team-a");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_EQ(got->size(), 1u);
  const ScheduleRecord& r = got->front();
  EXPECT_EQ(r.id, a.id);
  EXPECT_EQ(r.name, a.name);
  EXPECT_EQ(r.workflow, a.workflow);
  EXPECT_EQ(r.version, 3);
  EXPECT_EQ(r.cron, a.cron);
  EXPECT_EQ(r.timezone, a.timezone);
  EXPECT_EQ(r.input, a.input);
  EXPECT_EQ(r.overlap, a.overlap);
  EXPECT_EQ(r.catchup, a.catchup);
  EXPECT_EQ(r.next_fire_at, a.next_fire_at);
  EXPECT_EQ(r.last_fire_at, a.last_fire_at);
  EXPECT_EQ(r.last_execution_id, "e1");
  EXPECT_EQ(r.created_at, 5);
  EXPECT_EQ(store_->ListSchedules("")->size(), 2u);

  a.next_fire_at += 60'000;  // an upsert of the same id
  w.schedules = {a};
  Commit(w);
  EXPECT_EQ(store_->ListSchedules("team-a")->front().next_fire_at, a.next_fire_at);
  EXPECT_EQ(store_->DeleteSchedule("team-b", "sch_a").code(), errc::kNotFound);  // not its own
  ASSERT_TRUE(store_->DeleteSchedule("team-a", "sch_a").ok());
  EXPECT_TRUE(store_->ListSchedules("team-a")->empty());
  EXPECT_EQ(store_->ListSchedules("")->size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(AllStores, CatalogConformance, ::testing::ValuesIn(Factories()),
                         [](const ::testing::TestParamInfo<StoreFactory>& p) {
                           return p.param.name;
                         });

}  // namespace
}  // namespace baton
