#include "store/memory/execution_tables.h"

#include <map>

#include <algorithm>
#include <type_traits>

namespace baton::memory {
namespace {

// A record of a batch being applied: copied from a batch the caller keeps (Commit), moved
// out of one it handed over (CommitOwned).
template <class Record>
Record&& Take(Record& r) {
  return std::move(r);
}
template <class Record>
const Record& Take(const Record& r) {
  return r;
}

// Record is AttemptRecord (moved in) or const AttemptRecord (copied).
template <class Record>
void PutAttempt(std::vector<AttemptRecord>& slots, Record& a) {
  if (a.attempt < 1) return;
  if (slots.size() + 1 == static_cast<size_t>(a.attempt)) {  // the next attempt: the usual case
    slots.push_back(Take(a));
    return;
  }
  if (slots.size() < static_cast<size_t>(a.attempt)) {
    AttemptRecord unwritten;
    unwritten.attempt = 0;  // a gap: never listed
    slots.resize(a.attempt, unwritten);
  }
  slots[a.attempt - 1] = Take(a);
}

// True when every event is of one execution, in ascending seq order: the shape of a
// batch from one engine turn, which a fresh event log can adopt whole.
bool OneExecutionInOrder(const std::vector<EventRecord>& events) {
  for (size_t i = 1; i < events.size(); ++i) {
    if (events[i].seq <= events[i - 1].seq || events[i].execution_id != events[0].execution_id) {
      return false;
    }
  }
  return true;
}

// Makes room for `extra` more entries in one step when they would not fit, growing at
// least geometrically. (reserve(size + extra) on every commit would be exact-size growth:
// a full copy or rehash per small batch, quadratic over a run.)
template <class Vector>
void GrowFor(Vector& v, size_t extra) {
  if (v.size() + extra > v.capacity()) v.reserve(std::max(v.size() + extra, 2 * v.capacity()));
}
template <class K, class V>
void GrowFor(std::unordered_map<K, V>& m, size_t extra) {
  const size_t need = m.size() + extra;
  if (need > static_cast<size_t>(static_cast<double>(m.bucket_count()) * m.max_load_factor())) {
    m.reserve(std::max(need, 2 * m.size()));
  }
}

// As the SQL stores do: the id, or the input or output as their stored JSON text.
bool HoldsText(const ExecutionRecord& e, const std::string& text) {
  auto dumped = [](const Json& j) {
    return j.is_null() ? std::string() : j.dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  return e.id.find(text) != std::string::npos || dumped(e.input).find(text) != std::string::npos ||
         dumped(e.output).find(text) != std::string::npos;
}

bool Matches(const ExecutionFilter& f, const ExecutionRecord& e) {
  if (f.status && e.status != *f.status) return false;
  if (!f.workflow.empty() && e.workflow != f.workflow) return false;
  if (!f.ns.empty() && e.ns != f.ns) return false;
  if (!f.parent_id.empty() && e.parent_id != f.parent_id) return false;
  if (!f.idempotency_key.empty() && e.idempotency_key != f.idempotency_key) return false;
  if (f.created_from != 0 && e.created_at < f.created_from) return false;
  if (f.created_until != 0 && e.created_at >= f.created_until) return false;
  if (f.after && (e.created_at > f.after->created_at ||
                  (e.created_at == f.after->created_at && e.id >= f.after->id))) {
    return false;
  }
  if (!f.text.empty()) return HoldsText(e, f.text);
  return true;
}

bool HasEvent(const std::vector<EventRecord>& events, int64_t seq) {
  auto it = std::lower_bound(events.begin(), events.end(), seq,
                             [](const EventRecord& e, int64_t s) { return e.seq < s; });
  return it != events.end() && it->seq == seq;
}

}  // namespace

const ExecutionData* ExecutionTables::Find(const std::string& execution_id) const {
  auto it = data_.find(execution_id);
  return it == data_.end() ? nullptr : &it->second;
}

// Consecutive records of a batch almost always belong to one execution; remembering
// the last one saves a hash lookup per record.
ExecutionData& ExecutionTables::DataFor(const std::string& execution_id) {
  if (last_data_ == nullptr || last_id_ != execution_id) {
    last_data_ = &data_[execution_id];  // node-based map: the pointer stays valid
    if (last_data_->id.empty()) last_data_->id = execution_id;
    last_id_ = execution_id;
  }
  return *last_data_;
}

bool ExecutionTables::EventsMatch(const EventQuery& q, const ExecutionData& d) const {
  if (!q.execution_id.empty() && d.id != q.execution_id) return false;
  auto it = executions_.find(d.id);
  if (it == executions_.end() || it->second.record.ns != q.ns) return false;
  return q.workflow.empty() || it->second.record.workflow == q.workflow;
}

// Engines number events in commit order, so this is an append but for callers that
// write positions out of order.
void ExecutionTables::IndexPosition(ExecutionData& d, const EventRecord& e) {
  if (e.position <= 0) return;
  if (by_position_.empty() || by_position_.back().position < e.position) {
    by_position_.push_back({e.position, &d, e.seq});
    return;
  }
  auto at = std::upper_bound(by_position_.begin(), by_position_.end(), e.position,
                             [](int64_t p, const PositionEntry& x) { return p < x.position; });
  by_position_.insert(at, {e.position, &d, e.seq});
}

Status ExecutionTables::CheckEvents(std::span<const WriteBatch* const> batches) const {
  // Fast path: per execution, every new seq is above both the stored maximum and the
  // previous seq of this commit -- then none can collide.
  std::unordered_map<std::string_view, int64_t> high;  // execution -> highest seq seen
  // Consecutive events almost always belong to one execution: look it up once per run.
  std::string_view last_id;
  int64_t* last_high = nullptr;
  bool in_order = true;
  for (const WriteBatch* b : batches) {
    for (const EventRecord& e : b->events) {
      if (last_high == nullptr || e.execution_id != last_id) {
        auto [it, inserted] = high.try_emplace(e.execution_id, 0);
        if (inserted) {
          const ExecutionData* d = Find(e.execution_id);
          if (d != nullptr && !d->events.empty()) it->second = d->events.back().seq;
        }
        last_id = e.execution_id;
        last_high = &it->second;  // node-based map: the pointer stays valid
      }
      if (e.seq <= *last_high) in_order = false;
      *last_high = std::max(*last_high, e.seq);
    }
  }
  if (in_order) return Status::Ok();
  // Slow path (out-of-order seqs): exact check against the store and within the commit.
  std::vector<std::pair<std::string_view, int64_t>> seen;
  for (const WriteBatch* b : batches) {
    for (const EventRecord& e : b->events) {
      const ExecutionData* d = Find(e.execution_id);
      if (d != nullptr && HasEvent(d->events, e.seq)) return DuplicateEvent(e);
      seen.emplace_back(e.execution_id, e.seq);
    }
  }
  std::sort(seen.begin(), seen.end());
  auto dup = std::adjacent_find(seen.begin(), seen.end());
  if (dup != seen.end()) {
    return Status(errc::kStore, "duplicate event seq " + std::to_string(dup->second) +
                                    " for execution " + std::string(dup->first) +
                                    " within one commit");
  }
  return Status::Ok();
}

Status ExecutionTables::DuplicateEvent(const EventRecord& e) {
  return Status(errc::kStore, "event seq " + std::to_string(e.seq) + " of execution " +
                                  e.execution_id + " already exists");
}

Result<ExecutionRecord> ExecutionTables::GetExecution(const std::string& id) const {
  auto it = executions_.find(id);
  if (it == executions_.end()) return Status(errc::kNotFound, "execution " + id);
  return it->second.record;
}

Result<std::vector<ExecutionRecord>> ExecutionTables::ListExecutions(
    const ExecutionFilter& f) const {
  std::vector<const ExecutionEntry*> hits;
  for (const auto& [id, e] : executions_) {
    if (Matches(f, e.record)) hits.push_back(&e);
  }
  auto newest_first = [](const ExecutionEntry* a, const ExecutionEntry* b) {
    if (a->record.created_at != b->record.created_at) {
      return a->record.created_at > b->record.created_at;
    }
    return a->record.id > b->record.id;
  };
  size_t n = f.limit == 0 ? hits.size() : std::min(f.limit, hits.size());
  std::partial_sort(hits.begin(), hits.begin() + static_cast<ptrdiff_t>(n), hits.end(),
                    newest_first);
  std::vector<ExecutionRecord> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(hits[i]->record);
  return out;
}

Result<std::vector<ExecutionCount>> ExecutionTables::CountExecutions(
    const ExecutionFilter& f) const {
  ExecutionFilter every = f;
  every.status.reset();
  every.after.reset();
  std::map<ExecutionStatus, int64_t> counts;
  for (const auto& [id, e] : executions_) {
    if (Matches(every, e.record)) ++counts[e.record.status];
  }
  std::vector<ExecutionCount> out;
  for (const auto& [status, n] : counts) out.push_back({status, n});
  return out;
}

Result<std::vector<ExecutionRecord>> ExecutionTables::ListUnfinishedExecutions() const {
  std::vector<const ExecutionEntry*> hits;
  for (const auto& [id, e] : executions_) {
    if (!IsTerminal(e.record.status)) hits.push_back(&e);
  }
  std::sort(hits.begin(), hits.end(), [](const ExecutionEntry* a, const ExecutionEntry* b) {
    if (a->record.created_at != b->record.created_at) {
      return a->record.created_at < b->record.created_at;
    }
    return a->order < b->order;
  });
  std::vector<ExecutionRecord> out;
  out.reserve(hits.size());
  for (const ExecutionEntry* e : hits) out.push_back(e->record);
  return out;
}

Result<std::vector<StepRecord>> ExecutionTables::GetSteps(const std::string& execution_id) const {
  std::vector<StepRecord> out;
  if (const ExecutionData* d = Find(execution_id)) {
    out.reserve(d->steps.size());
    for (const auto& [id, entry] : d->steps) {
      if (entry.row) out.push_back(*entry.row);
    }
  }
  std::sort(out.begin(), out.end(), [](const StepRecord& a, const StepRecord& b) {
    if (a.index != b.index) return a.index < b.index;
    return a.step_id < b.step_id;
  });
  return out;
}

Result<std::vector<AttemptRecord>> ExecutionTables::GetAttempts(
    const std::string& execution_id) const {
  std::vector<AttemptRecord> out;
  if (const ExecutionData* d = Find(execution_id)) {
    for (const auto& [step, entry] : d->steps) {
      for (const AttemptRecord& a : entry.attempts) {
        if (a.attempt > 0) out.push_back(a);
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const AttemptRecord& a, const AttemptRecord& b) {
    if (a.step_id != b.step_id) return a.step_id < b.step_id;
    return a.attempt < b.attempt;
  });
  return out;
}

Result<std::vector<EventRecord>> ExecutionTables::GetEvents(const std::string& execution_id,
                                                            int64_t after_seq, size_t limit) const {
  std::vector<EventRecord> out;
  const ExecutionData* d = Find(execution_id);
  if (d == nullptr) return out;
  auto it = std::upper_bound(d->events.begin(), d->events.end(), after_seq,
                             [](int64_t s, const EventRecord& e) { return s < e.seq; });
  size_t available = static_cast<size_t>(d->events.end() - it);
  size_t n = limit == 0 ? available : std::min(limit, available);
  out.assign(it, it + static_cast<ptrdiff_t>(n));
  return out;
}

Result<std::vector<EventRecord>> ExecutionTables::ListEvents(const EventQuery& q) const {
  std::vector<EventRecord> out;
  // Events without a position (0) are never listed.
  auto it =
      std::upper_bound(by_position_.begin(), by_position_.end(), std::max<int64_t>(q.after, 0),
                       [](int64_t after, const PositionEntry& p) { return after < p.position; });
  const ExecutionData* last = nullptr;
  bool match = false;
  for (; it != by_position_.end() && (q.limit == 0 || out.size() < q.limit); ++it) {
    if (it->data != last) {
      last = it->data;
      match = EventsMatch(q, *last);
    }
    if (!match) continue;
    const std::vector<EventRecord>& events = last->events;
    auto e = std::lower_bound(events.begin(), events.end(), it->seq,
                              [](const EventRecord& x, int64_t s) { return x.seq < s; });
    out.push_back(*e);
  }
  return out;
}

Result<int64_t> ExecutionTables::LastEventSeq(const std::string& execution_id) const {
  const ExecutionData* d = Find(execution_id);
  return d == nullptr || d->events.empty() ? 0 : d->events.back().seq;  // kept in seq order
}

Result<int64_t> ExecutionTables::LastEventPosition() const {
  return by_position_.empty() ? 0 : by_position_.back().position;
}

Result<std::vector<SignalRecord>> ExecutionTables::ListSignals(
    const std::string& execution_id) const {
  std::vector<SignalRecord> out;
  for (auto it = signals_.lower_bound({execution_id, 0});
       it != signals_.end() && it->first.first == execution_id; ++it) {
    out.push_back(it->second);
  }
  return out;
}

// Batch is WriteBatch (records are moved out) or const WriteBatch (copied).
template <class Batch>
void ExecutionTables::ApplyBatch(Batch& b) {
  for (auto& e : b.executions) {
    auto [it, inserted] = executions_.try_emplace(e.id);
    if (inserted) it->second.order = next_order_++;
    it->second.record = Take(e);
  }
  // One execution per batch is the common case: size its tables once instead of
  // rehashing as they grow (a new 100k-step execution arrives in one batch).
  if (keep_steps_ && !b.steps.empty() &&
      b.steps.front().execution_id == b.steps.back().execution_id) {
    GrowFor(DataFor(b.steps.front().execution_id).steps, b.steps.size());
  }
  if (keep_steps_) {
    for (auto& s : b.steps) {
      StepEntry& entry = DataFor(s.execution_id).steps[s.step_id];
      entry.row = Take(s);
    }
    for (auto& a : b.attempts) {
      StepEntry& entry = DataFor(a.execution_id).steps[a.step_id];
      PutAttempt(entry.attempts, a);
    }
  }
  if (!keep_events_) {
    for (auto& sg : b.signals) signals_[{sg.execution_id, sg.seq}] = Take(sg);
    return;
  }
  if (!b.events.empty() && b.events.front().execution_id == b.events.back().execution_id) {
    // The common case, one execution per batch. A new execution's first batch carries
    // its whole log so far: adopt it when the batch is ours, else make room once.
    std::vector<EventRecord>& events = DataFor(b.events.front().execution_id).events;
    if constexpr (!std::is_const_v<Batch>) {
      if (events.empty() && OneExecutionInOrder(b.events)) {
        events = std::move(b.events);
        b.events.clear();  // a moved-from vector is unspecified, not necessarily empty
        for (const EventRecord& e : events) IndexPosition(*last_data_, e);
      }
    }
    GrowFor(events, b.events.size());
  }
  for (auto& e : b.events) {
    ExecutionData& data = DataFor(e.execution_id);
    IndexPosition(data, e);
    std::vector<EventRecord>& events = data.events;
    if (events.empty() || events.back().seq < e.seq) {
      events.push_back(Take(e));
    } else {
      auto it = std::lower_bound(events.begin(), events.end(), e.seq,
                                 [](const EventRecord& x, int64_t s) { return x.seq < s; });
      events.insert(it, Take(e));
    }
  }
  for (auto& sg : b.signals) signals_[{sg.execution_id, sg.seq}] = Take(sg);
}

void ExecutionTables::Apply(const WriteBatch& b) {
  ApplyBatch(b);
}
void ExecutionTables::Apply(WriteBatch& b) {
  ApplyBatch(b);
}

}  // namespace baton::memory
