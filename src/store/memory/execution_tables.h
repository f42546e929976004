// The MemoryStore's tables of execution state: executions, their steps, attempts, events
// (with the store-wide position index) and signals. Private to the memory store, which
// guards every call with its mutex.
//
// Commit costs O(records in the batches): every upsert is a hash-map operation and
// events are appended to a per-execution vector that stays sorted by seq (append is the
// common case; an out-of-order seq is inserted in place), and indexed by position in one
// store-wide vector (an append per event). Reads sort on demand -- they are rare compared
// with commits.
#pragma once

#include <baton/status.h>
#include <baton/store.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace baton::memory {

struct ExecutionEntry {
  ExecutionRecord record;
  uint64_t order = 0;  // first-insertion order: the tie-break of created_at
};

// A step's row and its attempts under one key: an attempt is usually written in the
// same batch as its step's row, so it finds the entry there instead of making another.
struct StepEntry {
  std::optional<StepRecord> row;        // absent while only attempts were written
  std::vector<AttemptRecord> attempts;  // attempt N at N-1; unwritten ones have 0
};

// Steps, attempts and events of one execution (which may exist before its record).
struct ExecutionData {
  std::string id;
  std::unordered_map<std::string, StepEntry> steps;
  std::vector<EventRecord> events;  // sorted by seq
};

// An event with a position: where ListEvents reads, in ascending position.
struct PositionEntry {
  int64_t position;
  const ExecutionData* data;
  int64_t seq;
};

class ExecutionTables {
 public:
  // keep_events = false: events are neither checked nor kept (a run that only watches
  // them as they are committed, and never reads them back). keep_steps = false: step and
  // attempt rows are not kept (a run that reads no step back).
  explicit ExecutionTables(bool keep_events = true, bool keep_steps = true)
      : keep_events_(keep_events), keep_steps_(keep_steps) {}
  // What would fail the commit: an event seq already stored, or repeated within the
  // commit. Called before anything is applied (the commit is all or nothing).
  Status Check(std::span<const WriteBatch* const> batches) const {
    return keep_events_ ? CheckEvents(batches) : Status::Ok();
  }
  void Apply(const WriteBatch& b);  // copies the records
  void Apply(WriteBatch& b);        // moves them out of a batch handed over

  Result<ExecutionRecord> GetExecution(const std::string& id) const;
  Result<std::vector<ExecutionRecord>> ListExecutions(const ExecutionFilter& f) const;
  Result<std::vector<ExecutionCount>> CountExecutions(const ExecutionFilter& f) const;
  Result<std::vector<ExecutionRecord>> ListUnfinishedExecutions() const;
  Result<std::vector<StepRecord>> GetSteps(const std::string& execution_id) const;
  Result<std::vector<AttemptRecord>> GetAttempts(const std::string& execution_id) const;
  Result<std::vector<EventRecord>> GetEvents(const std::string& execution_id, int64_t after_seq,
                                             size_t limit) const;
  Result<std::vector<EventRecord>> ListEvents(const EventQuery& q) const;
  Result<int64_t> LastEventPosition() const;
  Result<int64_t> LastEventSeq(const std::string& execution_id) const;
  Result<std::vector<SignalRecord>> ListSignals(const std::string& execution_id) const;

 private:
  template <class Batch>
  void ApplyBatch(Batch& b);
  const ExecutionData* Find(const std::string& execution_id) const;
  ExecutionData& DataFor(const std::string& execution_id);
  bool EventsMatch(const EventQuery& q, const ExecutionData& d) const;
  void IndexPosition(ExecutionData& d, const EventRecord& e);
  Status CheckEvents(std::span<const WriteBatch* const> batches) const;
  static Status DuplicateEvent(const EventRecord& e);

  std::unordered_map<std::string, ExecutionEntry> executions_;
  std::unordered_map<std::string, ExecutionData> data_;
  std::map<std::pair<std::string, int64_t>, SignalRecord> signals_;  // by execution, seq
  std::vector<PositionEntry> by_position_;  // every event with a position, ascending
  bool keep_events_ = true;
  bool keep_steps_ = true;
  uint64_t next_order_ = 0;
  ExecutionData* last_data_ = nullptr;
  std::string last_id_;
};

}  // namespace baton::memory
