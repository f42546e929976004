// What a finished execution sets off: its workflow's `notify` entries and the event
// triggers watching its workflow. Written as DeliveryRecords into the batch that commits
// the terminal state (Engine FinishHook: a transactional outbox), then handed to the
// Deliverer once that batch is durable.
//
// Notifications: each `notify: [{url, events}]` entry whose events name the terminal
// event (execution.completed, execution.failed, execution.timed_out,
// execution.cancelled; no `events` = all four) gets one delivery whose payload is the
// body to POST:
//   {"event", "delivery_id", "execution": {id, namespace, workflow, version, status,
//    input, output, error, created_at, started_at, completed_at}}
// Triggers: each trigger of the namespace whose `source` is the execution's workflow and
// whose `on` holds its status gets one delivery whose payload is
//   {"workflow", "version", "input"}
// with `input` rendered over {"source": <the execution object above>}. A template that
// does not resolve makes the delivery `failed` at once, with the reason in last_error.
//
// Threading: every call on the engine's thread.
#pragma once

#include <baton/engine.h>
#include <baton/store.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace baton::server {

// The terminal event of an execution status ("execution.completed", ...).
const char* TerminalEvent(ExecutionStatus status);
// Whether `name` is a terminal event a notify entry may name.
bool IsTerminalEventName(const std::string& name);

// Checks a trigger before it is stored: statuses, the source != workflow, and that the
// triggers of the namespace (with this one) form no cycle. INVALID_ARGUMENT naming the
// field.
Status ValidateTrigger(const TriggerRecord& trigger, const std::vector<TriggerRecord>& existing);

class FollowUps final : public FinishHook {
 public:
  // `deliver` gets the records of each finished execution once they are durable.
  explicit FollowUps(std::function<void(std::vector<DeliveryRecord>)> deliver)
      : deliver_(std::move(deliver)) {}

  // The triggers to watch (replaces any loaded before).
  void SetTriggers(std::vector<TriggerRecord> triggers);
  void PutTrigger(const TriggerRecord& trigger);
  void RemoveTrigger(const std::string& id);

  std::function<void()> OnFinish(const ExecutionRecord& execution, const WorkflowDef& workflow,
                                 WriteBatch& batch) override;

 private:
  std::function<void(std::vector<DeliveryRecord>)> deliver_;
  // By (namespace, source workflow), then id: a finished execution looks at its own
  // workflow's triggers only.
  std::map<std::pair<std::string, std::string>, std::map<std::string, TriggerRecord>> triggers_;
  std::map<std::string, std::pair<std::string, std::string>> trigger_keys_;  // id -> key
};

}  // namespace baton::server
