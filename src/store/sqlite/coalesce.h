// Coalescing of repeated upserts within one group commit. Private to the SQLite store.
//
// A group often upserts one key several times (a step goes ready -> running -> completed
// within a few batches; many batches carry their execution record). Inside a single
// transaction only the last value survives, so writing each key once saves most of the
// b-tree work. The last value is written at the key's FIRST position, which leaves
// first-insertion (rowid) order -- the tie-break of execution listings -- exactly as if
// every upsert had been written.
#pragma once

#include <baton/store.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <unordered_map>

namespace baton::sqlite {

struct RecordKey {
  std::string_view a;
  std::string_view b;
  int64_t n = 0;
  bool operator==(const RecordKey&) const = default;
};

struct RecordKeyHash {
  size_t operator()(const RecordKey& k) const {
    size_t h = std::hash<std::string_view>{}(k.a);
    h ^= std::hash<std::string_view>{}(k.b) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= std::hash<int64_t>{}(k.n) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
  }
};

inline RecordKey KeyOf(const WorkflowRecord& w) {
  return {w.ns, w.name, w.version};
}
inline RecordKey KeyOf(const ExecutionRecord& e) {
  return {e.id, {}, 0};
}
inline RecordKey KeyOf(const StepRecord& s) {
  return {s.execution_id, s.step_id, 0};
}
inline RecordKey KeyOf(const AttemptRecord& a) {
  return {a.execution_id, a.step_id, a.attempt};
}
// A command's assignment goes dispatched -> accepted -> running -> completed, often
// within one group on a busy worker path; its upsert replaces every column.
inline RecordKey KeyOf(const AssignmentRecord& a) {
  return {a.dispatch_id, {}, 0};
}

// The keys point into the batches, which outlive the commit that uses this.
template <class Record>
class LastWriteWins {
 public:
  // Indexes `records` (call for each batch, in order) after Clear().
  void Add(const std::vector<Record>& records) {
    for (const Record& r : records) last_[KeyOf(r)] = &r;
  }
  void Clear() { last_.clear(); }  // keeps the buckets for the next commit

  // What to write at this occurrence of r's key: its last value the first time the key
  // comes up, nullptr afterwards.
  const Record* Take(const Record& r) {
    auto it = last_.find(KeyOf(r));
    if (it == last_.end()) return nullptr;
    const Record* latest = it->second;
    last_.erase(it);
    return latest;
  }

 private:
  std::unordered_map<RecordKey, const Record*, RecordKeyHash> last_;
};

}  // namespace baton::sqlite
