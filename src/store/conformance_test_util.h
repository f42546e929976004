// The Store conformance fixture: parameterised over store factories, so a new
// implementation (PostgreSQL) is one more entry in Factories(). The tests are in
// conformance_test.cpp.
#pragma once

#include <baton/memory_store.h>
#include <baton/postgres_store.h>
#include <baton/sqlite_store.h>
#include <baton/store.h>

#include "store/store_test_util.h"
#include "support/pg_cluster.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace baton::testing {

struct StoreFactory {
  std::string name;
  // Opens the store kept in `dir`; a second call with the same dir reopens it.
  std::function<Result<std::unique_ptr<Store>>(const std::string& dir)> open;
};

// A PostgreSQL store per `dir`: a schema of its own in the test cluster (shared with the
// other test processes under ctest, started here otherwise), the same one when reopened.
inline Result<std::unique_ptr<Store>> OpenTestPostgresStore(const std::string& dir) {
  static PgCluster cluster;
  static const std::string error = cluster.Start();
  static std::map<std::string, std::string> urls;  // by dir
  static int schemas = 0;
  if (!error.empty()) return Status(errc::kStore, "the test cluster did not start: " + error);
  std::string& url = urls[dir];
  if (url.empty()) {
    url = cluster.NewSchema("s" + std::to_string(getpid()) + "_" + std::to_string(++schemas));
    if (url.empty()) return Status(errc::kStore, "creating a test schema failed");
  }
  return OpenPostgresStore(url);
}

inline std::vector<StoreFactory> Factories() {
  return {
      {"Memory",
       [](const std::string&) -> Result<std::unique_ptr<Store>> { return NewMemoryStore(); }},
      {"Sqlite", [](const std::string& dir) { return OpenSqliteStore(dir + "/baton.db"); }},
      {"Postgres", OpenTestPostgresStore},
  };
}

// Records as Json, so a mismatch prints every field.
inline Json ToJson(const WorkflowRecord& w) {
  return {{"name", w.name},
          {"version", w.version},
          {"definition", w.definition},
          {"created_at", w.created_at},
          {"ns", w.ns}};
}
inline Json ToJson(const ExecutionRecord& e) {
  return {{"id", e.id},
          {"workflow", e.workflow},
          {"version", e.version},
          {"definition", e.definition ? Json::parse(*e.definition) : Json()},
          {"input", e.input},
          {"status", ToString(e.status)},
          {"priority", e.priority},
          {"output", e.output},
          {"error", e.error},
          {"parent_id", e.parent_id},
          {"parent_step", e.parent_step},
          {"parent_attempt", e.parent_attempt},
          {"created_at", e.created_at},
          {"started_at", e.started_at},
          {"completed_at", e.completed_at},
          {"deadline", e.deadline},
          {"ns", e.ns},
          {"idempotency_key", e.idempotency_key},
          {"vars", e.vars}};
}
inline Json ToJson(const TokenRecord& t) {
  return {{"id", t.id},
          {"ns", t.ns},
          {"name", t.name},
          {"scopes", t.scopes},
          {"hash", t.secret_hash},
          {"created_at", t.created_at},
          {"revoked_at", t.revoked_at}};
}
inline Json ToJson(const StepRecord& s) {
  return {{"execution_id", s.execution_id},
          {"step_id", s.step_id},
          {"index", s.index},
          {"status", ToString(s.status)},
          {"attempts", s.attempts},
          {"progress", s.progress},
          {"output", s.output},
          {"error", s.error},
          {"exit_code", s.exit_code},
          {"stderr_tail", s.stderr_tail},
          {"assignment_id", s.assignment_id},
          {"started_at", s.started_at},
          {"completed_at", s.completed_at},
          {"retry_at", s.retry_at},
          {"deadline", s.deadline},
          {"attempt_base", s.attempt_base}};
}
inline Json ToJson(const AttemptRecord& a) {
  return {{"execution_id", a.execution_id},
          {"step_id", a.step_id},
          {"attempt", a.attempt},
          {"status", ToString(a.status)},
          {"assignment_id", a.assignment_id},
          {"error", a.error},
          {"started_at", a.started_at},
          {"completed_at", a.completed_at}};
}
inline Json ToJson(const EventRecord& e) {
  return {{"execution_id", e.execution_id}, {"seq", e.seq},          {"type", e.type},
          {"step_id", e.step_id},           {"data", e.data},        {"time", e.time},
          {"attempt", e.attempt},           {"position", e.position}};
}
// Every field but the id, which the store assigns.
inline Json ToJson(const DeadLetterRecord& d) {
  return {{"execution_id", d.execution_id},
          {"step_id", d.step_id},
          {"input", d.input},
          {"errors", d.errors},
          {"created_at", d.created_at},
          {"ns", d.ns},
          {"workflow", d.workflow},
          {"version", d.version},
          {"code", d.code},
          {"fingerprint", d.fingerprint},
          {"first_failed_at", d.first_failed_at},
          {"last_failed_at", d.last_failed_at},
          {"first_attempt", d.first_attempt},
          {"last_attempt", d.last_attempt},
          {"status", d.status},
          {"resolved_at", d.resolved_at},
          {"replay_attempt", d.replay_attempt}};
}
inline Json ToJson(const WorkerRecord& w) {
  return {{"id", w.id},
          {"ns", w.ns},
          {"node", w.node},
          {"host", w.host},
          {"version", w.version},
          {"capacity", w.capacity},
          {"commands", w.commands},
          {"tags", w.tags},
          {"status", w.status},
          {"session", w.session},
          {"registered_at", w.registered_at},
          {"last_heartbeat", w.last_heartbeat},
          {"updated_at", w.updated_at}};
}
inline Json ToJson(const AssignmentRecord& a) {
  return {{"dispatch_id", a.dispatch_id},
          {"id", a.id},
          {"ns", a.ns},
          {"execution_id", a.execution_id},
          {"step_id", a.step_id},
          {"attempt", a.attempt},
          {"command", a.command},
          {"worker_id", a.worker_id},
          {"status", a.status},
          {"progress", a.progress},
          {"checkpoint", a.checkpoint},
          {"reassignments", a.reassignments},
          {"created_at", a.created_at},
          {"updated_at", a.updated_at}};
}
inline Json ToJson(const ReassignmentRecord& r) {
  return {{"id", r.id},
          {"ns", r.ns},
          {"dispatch_id", r.dispatch_id},
          {"assignment_id", r.assignment_id},
          {"execution_id", r.execution_id},
          {"step_id", r.step_id},
          {"from_worker", r.from_worker},
          {"to_worker", r.to_worker},
          {"reason", r.reason},
          {"checkpoint", r.checkpoint},
          {"at", r.at}};
}
template <class T>
inline Json ToJson(const std::vector<T>& v) {
  Json out = Json::array();
  for (const T& x : v) out.push_back(ToJson(x));
  return out;
}

// The key of every row, in order: what a listing's order and filter tests compare.
template <class T, class F>
std::vector<std::string> Keys(const std::vector<T>& rows, F key) {
  std::vector<std::string> out;
  for (const T& r : rows) out.push_back(key(r));
  return out;
}

// Nested objects and arrays, unicode, numbers of every kind, and a nested null.
inline Json RichJson() {
  return Json::parse(R"({
    "name": "déploiement \ud83d\ude80 модель 模型",
    "nested": {"list": [1, -2, 3.25, true, false, null, "x"], "empty": {}, "none": []},
    "big": 9007199254740993, "neg": -42, "tiny": 1e-300, "quote": "a\"b\\c\n\t"
  })");
}

class StoreConformance : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override {
    auto opened = GetParam().open(dir_.path());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
  }

  void Commit(const WriteBatch& b) {
    Status s = store_->Commit(b);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
};

}  // namespace baton::testing
