// The worker registry: who is connected, in what state, holding what; and the choice of
// a worker for a command (seed 003's selection, docs/coordinator.md):
//
//   candidates  ONLINE workers of the namespace that advertise the command, on the
//               requested node (if any), carrying every requested tag, with free
//               capacity (held < capacity), not excluded (e.g. it rejected this one);
//   choice      the lowest ratio held/capacity; among equals, round-robin (the first
//               worker after the one chosen last, by id, wrapping around).
//
// The in-process local worker (shell and http steps) is an entry like any other, marked
// `local`: it serves every namespace, and only local placements go to it (a remote
// worker advertising "shell" never gets a `type: shell` step, nor the local worker a
// `type: command` one).
//
// When nobody fits, Select() says why, for the API ("no ONLINE worker handles
// model.download (1 UNHEALTHY)", "all 2 ONLINE workers for model.download are at
// capacity").
//
// Threading: not thread-safe; the coordinator keeps it on the engine thread.
#pragma once

#include <baton/clock.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace baton::workers {

enum class WorkerState { kOnline, kUnhealthy, kDraining, kOffline };
const char* ToString(WorkerState s);  // "ONLINE", "UNHEALTHY", "DRAINING", "OFFLINE"

struct WorkerEntry {
  std::string id;
  std::string ns;  // empty for the local worker: it serves every namespace
  bool local = false;
  std::string node;
  std::string host;
  int capacity = 1;
  std::vector<std::string> commands;  // sorted, unique
  std::vector<std::string> tags;      // sorted, unique
  WorkerState state = WorkerState::kOnline;
  TimeMs registered_at = 0;
  TimeMs last_seen = 0;        // last message of any kind
  int reported_load = 0;       // from its last heartbeat (informational)
  std::string session;         // the registered process's incarnation ("" = unknown)
  std::set<std::string> held;  // dispatches placed on it and not finished

  bool Handles(const std::string& command) const;
  bool HasTags(const std::vector<std::string>& wanted) const;
  int free() const { return capacity - static_cast<int>(held.size()); }
  double load_ratio() const { return static_cast<double>(held.size()) / capacity; }
};

// What a dispatch needs of a worker.
struct Placement {
  std::string ns;
  std::string command;
  std::string node;               // empty: any
  std::vector<std::string> tags;  // all of them
  std::set<std::string> exclude;  // worker ids
  bool local = false;             // a built-in step type for the in-process local worker
};

class Registry {
 public:
  // A new worker, or the same id registering again (a reconnect): its description is
  // replaced, its held dispatches and registration time kept, its state ONLINE.
  WorkerEntry& Register(WorkerEntry worker);
  WorkerEntry* Find(const std::string& id);
  const WorkerEntry* Find(const std::string& id) const;
  void Remove(const std::string& id);
  // Workers of one namespace (empty = all) and the local worker, by id.
  std::vector<const WorkerEntry*> List(const std::string& ns) const;

  // The worker for `p`, or nullptr with the reason in `why`.
  WorkerEntry* Select(const Placement& p, std::string* why);
  // Whether an ONLINE worker fits `p`, with room or not: false means the dispatch can
  // only wait here until a worker for it connects (another instance may have one).
  bool AnyOnline(const Placement& p) const;
  // Free slots of ONLINE workers that fit `p` (none excluded), by worker id.
  std::map<std::string, int> Room(const Placement& p) const;
  // Why nobody fits `p` (as Select says it).
  std::string Explain(const Placement& p) const;
  // Select() calls so far: how the tests see that a backlog is not scanned again.
  uint64_t selects() const { return selects_; }

 private:
  static bool Fits(const WorkerEntry& w, const Placement& p);  // all but state and room

  std::map<std::string, WorkerEntry> workers_;      // by id
  std::map<std::string, std::string> last_chosen_;  // per "ns/command": round-robin
  uint64_t selects_ = 0;
};

}  // namespace baton::workers
