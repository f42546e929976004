#include "store/memory/dead_letter_table.h"

#include <algorithm>
#include <tuple>

namespace baton::memory {
namespace {

bool Matches(const DeadLetterFilter& f, const DeadLetterRecord& d) {
  return (f.ns.empty() || d.ns == f.ns) &&
         (f.execution_id.empty() || d.execution_id == f.execution_id) &&
         (f.workflow.empty() || d.workflow == f.workflow) &&
         (f.step_id.empty() || d.step_id == f.step_id) && (f.code.empty() || d.code == f.code) &&
         (f.fingerprint.empty() || d.fingerprint == f.fingerprint) &&
         (f.status.empty() || d.status == f.status) && d.last_failed_at >= f.since;
}

}  // namespace

void DeadLetterTable::Add(DeadLetterRecord d) {
  const int64_t id = d.id != 0 ? d.id : last_id_ + 1;
  last_id_ = std::max(last_id_, id);
  d.id = id;
  entries_[id] = std::move(d);
}

std::vector<DeadLetterRecord> DeadLetterTable::List(const DeadLetterFilter& f) const {
  std::vector<DeadLetterRecord> out;
  for (auto it = entries_.upper_bound(f.after_id);
       it != entries_.end() && (f.limit == 0 || out.size() < f.limit); ++it) {
    if (Matches(f, it->second)) out.push_back(it->second);
  }
  return out;
}

Result<DeadLetterRecord> DeadLetterTable::Get(int64_t id) const {
  auto it = entries_.find(id);
  if (it == entries_.end()) return Status(errc::kNotFound, "dead letter " + std::to_string(id));
  return it->second;
}

std::vector<DeadLetterGroup> DeadLetterTable::Count(const DeadLetterFilter& f) const {
  std::map<std::tuple<std::string, std::string, std::string>, DeadLetterGroup> groups;
  for (const auto& [id, d] : entries_) {
    if (!Matches(f, d)) continue;
    DeadLetterGroup& g = groups[{d.workflow, d.step_id, d.fingerprint}];
    if (g.count == 0) {
      g.workflow = d.workflow;
      g.step_id = d.step_id;
      g.fingerprint = d.fingerprint;
      g.first_failed_at = d.first_failed_at;
    }
    ++g.count;
    g.code = std::max(g.code, d.code);
    g.first_failed_at = std::min(g.first_failed_at, d.first_failed_at);
    g.last_failed_at = std::max(g.last_failed_at, d.last_failed_at);
    g.last_id = id;
  }
  std::vector<DeadLetterGroup> out;
  for (auto& [key, g] : groups) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const DeadLetterGroup& a, const DeadLetterGroup& b) {
    return a.count > b.count;
  });
  return out;
}

}  // namespace baton::memory
