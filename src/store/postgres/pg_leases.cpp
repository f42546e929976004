// PgStore's leases of executions (ExecutionLeases in <baton/store.h>): the check every
// commit of an instance starts with, renewal, claiming, and the leader roles.
//
// Every statement runs on the writing connection under write_mu_, so a renewal or a
// claim never interleaves with a commit of this instance: the held set a commit checks
// is the one the database has, and no two of this instance's transactions wait on each
// other's row locks.
#include "store/postgres/pg_store.h"

#include "store/postgres/pg_arrays.h"
#include "store/postgres/pg_text.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace baton::pg {

namespace {

const std::string kCheckLeases =
    "SELECT baton_check_leases($1, $2, $3::text[], $4::bigint[], $5::text[], $6::text[], "
    "$7::bigint[], $8::text[])";

// Renews the leases the instance holds, each at the fence it set; answers those renewed.
const std::string kRenew =
    "UPDATE execution_leases l SET lease_until = baton_now_ms() + $2 "
    "FROM unnest($3::text[], $4::bigint[]) AS h(id, fence) "
    "WHERE l.execution_id = h.id AND l.fence = h.fence AND l.owner = $1 AND NOT l.released "
    "RETURNING l.execution_id";

// Takes up to $2 leases that expired (or, with $3, that the name holds from before a
// restart), skipping rows another transaction holds; each gets the fence $4 + its number.
// $6: executions this instance must not take back yet (lost, not forgotten).
const std::string kClaim =
    "WITH c AS (SELECT execution_id, row_number() OVER () AS n FROM ("
    "  SELECT execution_id FROM execution_leases"
    "  WHERE NOT released AND (lease_until < baton_now_ms() OR (owner = $1 AND $3::boolean))"
    "    AND NOT (execution_id = ANY($6::text[]))"
    "  ORDER BY lease_until LIMIT $2 FOR UPDATE SKIP LOCKED) s) "
    "UPDATE execution_leases l SET owner = $1, fence = $4::bigint + c.n, "
    "  lease_until = baton_now_ms() + $5 "
    "FROM c WHERE l.execution_id = c.execution_id RETURNING l.execution_id, l.fence";

// Unfinished top-level executions with no lease row: written before instances leased
// them (by a single server). Taken like expired ones; their children come with them.
const std::string kClaimUnleased =
    "INSERT INTO execution_leases (execution_id, owner, fence, lease_until) "
    "SELECT id, $1, $3::bigint + row_number() OVER (), baton_now_ms() + $4 FROM ("
    "  SELECT e.id FROM executions e"
    "  WHERE e.status IN ('pending', 'running', 'paused', 'queued') AND e.parent_id = ''"
    "    AND NOT EXISTS (SELECT 1 FROM execution_leases l WHERE l.execution_id = e.id)"
    "  ORDER BY e.created_at LIMIT $2) s "
    "ON CONFLICT (execution_id) DO NOTHING RETURNING execution_id, fence";

// The holder of an execution's root (itself, when it has no parent).
const std::string kHolderOf =
    "WITH RECURSIVE up(id, parent, depth) AS ("
    "  SELECT id, parent_id, 0 FROM executions WHERE id = $1"
    "  UNION ALL"
    "  SELECT p.id, p.parent_id, up.depth + 1 FROM up JOIN executions p ON p.id = up.parent"
    "  WHERE up.parent <> '' AND up.depth < 64) "
    "SELECT l.owner FROM up JOIN execution_leases l ON l.execution_id = up.id "
    "WHERE up.parent = '' AND NOT l.released";

const std::string kRelease =
    "UPDATE execution_leases SET lease_until = 0 "
    "WHERE execution_id = $1 AND owner = $2 AND fence = $3";

const std::string kLead =
    "INSERT INTO leaders (role, owner, lease_until) VALUES ($1, $2, baton_now_ms() + $3) "
    "ON CONFLICT (role) DO UPDATE SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until "
    "WHERE leaders.owner = EXCLUDED.owner OR leaders.lease_until < baton_now_ms() "
    "RETURNING owner";

}  // namespace

Status PgStore::SendLeaseCheck(std::span<const WriteBatch* const> batches, LeaseChanges* changes) {
  // Every execution the batches write, with the status its last record gives it (none
  // when they write only its steps, events, ...). Assignments and reassignments are the
  // coordinator's and not fenced: it may settle one of an execution it no longer holds.
  // A child workflow is held with its root: it never takes a lease of its own.
  struct Touch {
    std::optional<ExecutionStatus> status;
    bool child = false;
  };
  std::map<std::string, Touch> touched;
  for (const WriteBatch* b : batches) {
    for (const ExecutionRecord& e : b->executions) touched[e.id] = {e.status, !e.parent_id.empty()};
    for (const StepRecord& r : b->steps) touched.try_emplace(r.execution_id);
    for (const AttemptRecord& r : b->attempts) touched.try_emplace(r.execution_id);
    for (const EventRecord& r : b->events) touched.try_emplace(r.execution_id);
    for (const SignalRecord& r : b->signals) touched.try_emplace(r.execution_id);
    for (const DeadLetterRecord& r : b->dead_letters) touched.try_emplace(r.execution_id);
  }
  if (touched.empty()) return Status::Ok();
  std::vector<std::string> held, others, fresh, done;
  std::vector<int64_t> fences, fresh_fences;
  {
    std::lock_guard lock(lease_mu_);
    for (const auto& [id, touch] : touched) {
      const std::optional<ExecutionStatus>& status = touch.status;
      if (lost_.count(id) > 0) {
        return Status(errc::kStore, "this instance lost its lease of execution " + id +
                                        " (another instance took it); not writing it");
      }
      const bool ends = status && IsTerminal(*status);
      if (auto it = held_.find(id); it != held_.end()) {
        held.push_back(id);
        fences.push_back(it->second);
        if (ends) done.push_back(id);
        continue;
      }
      others.push_back(id);
      if (status && !ends && !touch.child) {
        fresh.push_back(id);
        fresh_fences.push_back(++next_fence_);
      }
    }
    if (!held.empty() && std::chrono::steady_clock::now() >= trusted_until_) {
      return Status(errc::kStore,
                    "this instance's leases were not renewed in time (the database was "
                    "unreachable, or the process was stopped); not writing execution " +
                        held.front() + " until a renewal succeeds");
    }
  }
  std::vector<std::string> texts = {instance_,
                                    std::to_string(lease_.count()),
                                    TextArray(held),
                                    IntArray(fences),
                                    TextArray(others),
                                    TextArray(fresh),
                                    IntArray(fresh_fences),
                                    TextArray(done)};
  values_.clear();
  formatted_ = std::move(texts);
  for (const std::string& t : formatted_) values_.push_back(t.c_str());
  for (size_t i = 0; i < fresh.size(); ++i) changes->fresh.emplace_back(fresh[i], fresh_fences[i]);
  changes->done = std::move(done);
  return Send("check_leases", kCheckLeases, nullptr, nullptr);
}

void PgStore::NoteLostLease(const Status& refused) {
  // baton_check_leases names it: "this instance lost its lease of execution ID (...".
  static constexpr std::string_view kLost = "lost its lease of execution ";
  const std::string& m = refused.message();
  const size_t at = m.find(kLost);
  if (at == std::string::npos) return;
  const size_t from = at + kLost.size();
  const std::string id = m.substr(from, m.find(' ', from) - from);
  std::lock_guard lock(lease_mu_);
  if (held_.erase(id) == 0) return;
  lost_.insert(id);
  lost_in_commit_.push_back(id);
}

Result<std::vector<std::string>> PgStore::Renew() {
  std::lock_guard lock(write_mu_);
  if (Status s = WriterReady(); !s.ok()) return Context(s, "renewing leases");
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::string> ids;
  std::vector<int64_t> fences;
  {
    std::lock_guard held(lease_mu_);
    for (const auto& [id, fence] : held_) {
      ids.push_back(id);
      fences.push_back(fence);
    }
  }
  auto renewed = writer_.Exec(
      kRenew, {instance_, std::to_string(lease_.count()), TextArray(ids), IntArray(fences)},
      "renewing this instance's leases");
  if (!renewed.ok()) return renewed.status();
  // The pool slots this instance holds live as long as its leases do.
  auto holds = writer_.Exec(
      "UPDATE pool_holds SET lease_until = baton_now_ms() + $2 WHERE owner = $1",
      {instance_, std::to_string(lease_.count())}, "renewing this instance's pool slots");
  if (!holds.ok()) return holds.status();
  std::unordered_set<std::string> kept;
  for (size_t i = 0; i < renewed->size(); ++i) kept.insert(renewed->at(i, 0).value_or(""));
  std::lock_guard held(lease_mu_);
  std::vector<std::string> lost = std::exchange(lost_in_commit_, {});
  for (const std::string& id : ids) {
    if (kept.count(id) > 0) continue;
    held_.erase(id);
    lost_.insert(id);
    lost.push_back(id);
  }
  // A lease renewed when the statement began lasts lease_ from a moment after `started`:
  // trusting it for three quarters of that leaves a margin for the clocks' rates and the
  // time a commit takes once checked.
  trusted_until_ = started + lease_ * 3 / 4;
  return lost;
}

Result<std::vector<std::string>> PgStore::Claim(size_t limit, bool mine) {
  std::lock_guard lock(write_mu_);
  if (Status s = WriterReady(); !s.ok()) return Context(s, "claiming executions");
  std::vector<std::string> lost;
  int64_t base = 0;
  {
    std::lock_guard held(lease_mu_);
    lost.assign(lost_.begin(), lost_.end());
    base = next_fence_;
    next_fence_ += static_cast<int64_t>(limit) + 1;
  }
  const std::string lease = std::to_string(lease_.count());
  auto claimed = writer_.Exec(kClaim,
                              {instance_, std::to_string(limit), mine ? "true" : "false",
                               std::to_string(base), lease, TextArray(lost)},
                              "claiming executions whose lease expired");
  if (!claimed.ok()) return claimed.status();
  std::vector<Rows> answers;
  answers.push_back(std::move(claimed).value());
  if (mine && answers[0].size() < limit) {
    {
      std::lock_guard held(lease_mu_);
      base = next_fence_;
      next_fence_ += static_cast<int64_t>(limit) + 1;
    }
    auto unleased = writer_.Exec(
        kClaimUnleased,
        {instance_, std::to_string(limit - answers[0].size()), std::to_string(base), lease},
        "claiming executions written before leases");
    if (!unleased.ok()) return unleased.status();
    answers.push_back(std::move(unleased).value());
  }
  std::vector<std::string> out;
  std::lock_guard held(lease_mu_);
  for (const Rows& rows : answers) {
    for (size_t i = 0; i < rows.size(); ++i) {
      std::string id = rows.at(i, 0).value_or("");
      held_[id] = std::stoll(rows.at(i, 1).value_or("0"));
      out.push_back(std::move(id));
    }
  }
  return out;
}

Status PgStore::Release(const std::string& execution_id) {
  std::lock_guard lock(write_mu_);
  int64_t fence = 0;
  {
    std::lock_guard held(lease_mu_);
    auto it = held_.find(execution_id);
    if (it == held_.end()) return Status::Ok();
    fence = it->second;
    held_.erase(it);
    lost_.insert(execution_id);  // its queued batches are refused until Forget()
  }
  if (Status s = WriterReady(); !s.ok()) return Context(s, "releasing a lease");
  auto released = writer_.Exec(kRelease, {execution_id, instance_, std::to_string(fence)},
                               "releasing the lease of execution " + execution_id);
  return released.ok() ? Status::Ok() : released.status();
}

void PgStore::Forget(const std::vector<std::string>& execution_ids) {
  std::lock_guard held(lease_mu_);
  for (const std::string& id : execution_ids) lost_.erase(id);
}

bool PgStore::Holds(const std::string& execution_id) const {
  std::lock_guard held(lease_mu_);
  return held_.count(execution_id) > 0;
}

std::vector<std::string> PgStore::Held() const {
  std::lock_guard held(lease_mu_);
  std::vector<std::string> out;
  out.reserve(held_.size());
  for (const auto& [id, fence] : held_) out.push_back(id);
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::string> PgStore::HolderOf(const std::string& execution_id) {
  auto rows = Read(kHolderOf, {execution_id}, "reading which instance holds an execution");
  if (!rows.ok()) return rows.status();
  if (rows->size() == 0) return std::string();
  return rows->at(0, 0).value_or("");
}

bool PgStore::Trusted() const {
  std::lock_guard held(lease_mu_);
  return std::chrono::steady_clock::now() < trusted_until_;
}

Result<bool> PgStore::Lead(const std::string& role) {
  std::lock_guard lock(write_mu_);
  if (Status s = WriterReady(); !s.ok()) return Context(s, "taking the role " + role);
  auto led = writer_.Exec(kLead, {role, instance_, std::to_string(lease_.count())},
                          "taking the role " + role);
  if (!led.ok()) return led.status();
  return led->size() == 1;
}

}  // namespace baton::pg
