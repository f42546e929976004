#include "workers/registry.h"

#include <algorithm>

namespace baton::workers {
namespace {

void SortUnique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

const char* ToString(WorkerState s) {
  switch (s) {
    case WorkerState::kOnline:
      return "ONLINE";
    case WorkerState::kUnhealthy:
      return "UNHEALTHY";
    case WorkerState::kDraining:
      return "DRAINING";
    case WorkerState::kOffline:
      return "OFFLINE";
  }
  return "?";
}

bool WorkerEntry::Handles(const std::string& command) const {
  return std::binary_search(commands.begin(), commands.end(), command);
}

bool WorkerEntry::HasTags(const std::vector<std::string>& wanted) const {
  for (const std::string& t : wanted) {
    if (!std::binary_search(tags.begin(), tags.end(), t)) return false;
  }
  return true;
}

WorkerEntry& Registry::Register(WorkerEntry worker) {
  SortUnique(worker.commands);
  SortUnique(worker.tags);
  if (worker.capacity < 1) worker.capacity = 1;
  worker.state = WorkerState::kOnline;
  auto it = workers_.find(worker.id);
  if (it != workers_.end()) {
    worker.held = std::move(it->second.held);
    worker.registered_at = it->second.registered_at;
    it->second = std::move(worker);
    return it->second;
  }
  return workers_.emplace(worker.id, std::move(worker)).first->second;
}

WorkerEntry* Registry::Find(const std::string& id) {
  auto it = workers_.find(id);
  return it == workers_.end() ? nullptr : &it->second;
}

const WorkerEntry* Registry::Find(const std::string& id) const {
  auto it = workers_.find(id);
  return it == workers_.end() ? nullptr : &it->second;
}

void Registry::Remove(const std::string& id) {
  workers_.erase(id);
}

std::vector<const WorkerEntry*> Registry::List(const std::string& ns) const {
  std::vector<const WorkerEntry*> out;
  for (const auto& [id, w] : workers_) {
    if (ns.empty() || w.ns == ns || w.local) out.push_back(&w);
  }
  return out;
}

bool Registry::Fits(const WorkerEntry& w, const Placement& p) {
  if (w.local != p.local || (!w.local && w.ns != p.ns)) return false;
  return w.Handles(p.command) && (p.node.empty() || w.node == p.node) && w.HasTags(p.tags);
}

bool Registry::AnyOnline(const Placement& p) const {
  for (const auto& [id, w] : workers_) {
    if (w.state == WorkerState::kOnline && Fits(w, p) && !p.exclude.count(id)) return true;
  }
  return false;
}

std::map<std::string, int> Registry::Room(const Placement& p) const {
  std::map<std::string, int> out;
  for (const auto& [id, w] : workers_) {
    if (w.state == WorkerState::kOnline && Fits(w, p) && !p.exclude.count(id) && w.free() > 0) {
      out[id] = w.free();
    }
  }
  return out;
}

std::string Registry::Explain(const Placement& p) const {
  if (p.local) {
    for (const auto& [id, w] : workers_) {
      if (Fits(w, p)) {
        return "all " + std::to_string(w.capacity) + " slots of the local worker are taken";
      }
    }
    return "no local worker runs " + p.command + " steps here";
  }
  int matching_online = 0;
  std::map<WorkerState, int> not_online;
  for (const auto& [id, w] : workers_) {
    if (!Fits(w, p)) continue;
    if (w.state != WorkerState::kOnline) {
      ++not_online[w.state];
      continue;
    }
    ++matching_online;
  }
  std::string what = p.command;
  if (!p.node.empty()) what += " on node " + p.node;
  if (!p.tags.empty()) what += " with tags " + Join(p.tags);
  if (matching_online == 0) {
    std::string why = "no ONLINE worker handles " + what;
    std::string states;
    for (const auto& [state, n] : not_online) {
      states += (states.empty() ? "" : ", ") + std::to_string(n) + " " + ToString(state);
    }
    if (!states.empty()) why += " (" + states + ")";
    return why;
  }
  const char* full = p.exclude.empty() ? " at capacity" : " at capacity or refused it";
  return matching_online == 1 ? "the only ONLINE worker for " + what + " is" + full
                              : "all " + std::to_string(matching_online) + " ONLINE workers for " +
                                    what + " are" + full;
}

WorkerEntry* Registry::Select(const Placement& p, std::string* why) {
  ++selects_;
  std::vector<WorkerEntry*> fit;  // by id (map order)
  for (auto& [id, w] : workers_) {
    if (w.state != WorkerState::kOnline || !Fits(w, p)) continue;
    if (w.free() > 0 && !p.exclude.count(id)) fit.push_back(&w);
  }
  if (fit.empty()) {
    if (why != nullptr) *why = Explain(p);
    return nullptr;
  }
  double best = fit.front()->load_ratio();
  for (WorkerEntry* w : fit) best = std::min(best, w->load_ratio());
  std::erase_if(fit, [&](WorkerEntry* w) { return w->load_ratio() > best; });
  // Round-robin among equals: the first after the last one chosen for this command.
  std::string& last = last_chosen_[p.ns + "/" + p.command];
  WorkerEntry* chosen = fit.front();
  for (WorkerEntry* w : fit) {
    if (w->id > last) {
      chosen = w;
      break;
    }
  }
  last = chosen->id;
  return chosen;
}

}  // namespace baton::workers
