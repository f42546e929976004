#include "server/triggers/follow_ups.h"

#include "expr/template.h"
#include "server/auth.h"
#include "server/views.h"

#include <algorithm>
#include <set>

namespace baton::server {
namespace {

constexpr const char* kTerminalEvents[] = {"execution.completed", "execution.failed",
                                           "execution.timed_out", "execution.cancelled"};

// What receivers and trigger templates see of the finished execution.
Json SourceJson(const ExecutionRecord& e) {
  auto time = [](TimeMs t) { return t ? Json(IsoTime(t)) : Json(nullptr); };
  return {{"id", e.id},
          {"namespace", e.ns},
          {"workflow", e.workflow},
          {"version", e.version},
          {"status", ToString(e.status)},
          {"input", e.input},
          {"output", e.output},
          {"error", e.error},
          {"created_at", time(e.created_at)},
          {"started_at", time(e.started_at)},
          {"completed_at", time(e.completed_at)}};
}

bool WantsEvent(const Json& entry, const std::string& event) {
  if (!entry.contains("events") || !entry["events"].is_array()) return true;
  for (const Json& e : entry["events"]) {
    if (e.is_string() && e.get<std::string>() == event) return true;
  }
  return false;
}

DeliveryRecord NewDelivery(const ExecutionRecord& e, const char* event, const char* kind) {
  DeliveryRecord d;
  d.id = "dlv_" + RandomHex(8);
  d.ns = e.ns;
  d.execution_id = e.id;
  d.event = event;
  d.kind = kind;
  d.created_at = e.completed_at;
  d.updated_at = e.completed_at;
  d.next_attempt_at = e.completed_at;
  return d;
}

}  // namespace

const char* TerminalEvent(ExecutionStatus status) {
  switch (status) {
    case ExecutionStatus::kFailed:
      return kTerminalEvents[1];
    case ExecutionStatus::kTimeout:
      return kTerminalEvents[2];
    case ExecutionStatus::kCancelled:
      return kTerminalEvents[3];
    default:
      return kTerminalEvents[0];
  }
}

bool IsTerminalEventName(const std::string& name) {
  return std::find(std::begin(kTerminalEvents), std::end(kTerminalEvents), name) !=
         std::end(kTerminalEvents);
}

Status ValidateTrigger(const TriggerRecord& t, const std::vector<TriggerRecord>& existing) {
  if (t.on.empty()) {
    return Status(errc::kInvalidArgument,
                  "field 'on': name at least one status (completed, failed, timeout, cancelled)");
  }
  for (const std::string& s : t.on) {
    auto status = ParseExecutionStatus(s);
    if (!status || !IsTerminal(*status)) {
      return Status(errc::kInvalidArgument, "field 'on': '" + s +
                                                "' is not a terminal status (completed, "
                                                "failed, timeout, cancelled)");
    }
  }
  // Triggers form a graph over workflow names; a cycle would start executions forever.
  std::multimap<std::string, std::string> edges;
  for (const TriggerRecord& o : existing) {
    if (o.ns == t.ns && o.id != t.id) edges.emplace(o.source, o.workflow);
  }
  edges.emplace(t.source, t.workflow);
  // Depth-first from the new edge's target: reaching its source closes a cycle.
  std::vector<std::vector<std::string>> stack = {{t.source, t.workflow}};
  std::set<std::string> seen;
  while (!stack.empty()) {
    std::vector<std::string> path = std::move(stack.back());
    stack.pop_back();
    const std::string& at = path.back();
    if (at == t.source) {
      std::string chain;
      for (const std::string& w : path) chain += (chain.empty() ? "" : " -> ") + w;
      return Status(errc::kInvalidArgument,
                    "field 'workflow': the trigger would form a cycle: " + chain);
    }
    if (!seen.insert(at).second) continue;
    auto [lo, hi] = edges.equal_range(at);
    for (auto it = lo; it != hi; ++it) {
      std::vector<std::string> next = path;
      next.push_back(it->second);
      stack.push_back(std::move(next));
    }
  }
  return Status::Ok();
}

void FollowUps::SetTriggers(std::vector<TriggerRecord> triggers) {
  triggers_.clear();
  trigger_keys_.clear();
  for (const TriggerRecord& t : triggers) PutTrigger(t);
}

void FollowUps::PutTrigger(const TriggerRecord& trigger) {
  RemoveTrigger(trigger.id);
  auto key = std::make_pair(trigger.ns, trigger.source);
  triggers_[key][trigger.id] = trigger;
  trigger_keys_[trigger.id] = std::move(key);
}

void FollowUps::RemoveTrigger(const std::string& id) {
  auto it = trigger_keys_.find(id);
  if (it == trigger_keys_.end()) return;
  auto bucket = triggers_.find(it->second);
  bucket->second.erase(id);
  if (bucket->second.empty()) triggers_.erase(bucket);
  trigger_keys_.erase(it);
}

std::function<void()> FollowUps::OnFinish(const ExecutionRecord& execution,
                                          const WorkflowDef& workflow, WriteBatch& batch) {
  const std::string event = TerminalEvent(execution.status);
  const std::string status = ToString(execution.status);
  std::vector<DeliveryRecord> out;
  Json source;  // built on first use: most executions set nothing off
  auto source_json = [&]() -> const Json& {
    if (source.is_null()) source = SourceJson(execution);
    return source;
  };
  if (workflow.notify.is_array()) {
    for (const Json& entry : workflow.notify) {
      if (!entry.is_object() || !entry.contains("url") || !WantsEvent(entry, event)) continue;
      DeliveryRecord d = NewDelivery(execution, event.c_str(), "notification");
      d.target = entry["url"].get<std::string>();
      d.payload = {{"event", event}, {"delivery_id", d.id}, {"execution", source_json()}};
      out.push_back(std::move(d));
    }
  }
  auto watching = triggers_.find({execution.ns, execution.workflow});
  const std::map<std::string, TriggerRecord> none;
  for (const auto& [id, t] : watching == triggers_.end() ? none : watching->second) {
    if (std::find(t.on.begin(), t.on.end(), status) == t.on.end()) continue;
    DeliveryRecord d = NewDelivery(execution, event.c_str(), "trigger");
    d.target = t.id;
    d.payload = {{"workflow", t.workflow}, {"version", t.version}, {"input", Json::object()}};
    const Json scope_root = {{"source", source_json()}};
    expr::JsonScope scope(scope_root);
    auto input = expr::Render(t.input, scope);
    if (input.ok()) {
      d.payload["input"] = std::move(input.value());
    } else {
      d.status = DeliveryStatus::kFailed;
      d.last_error = {{"code", input.status().code()},
                      {"message", "trigger " + t.id + " input: " + input.status().message()}};
    }
    out.push_back(std::move(d));
  }
  if (out.empty()) return nullptr;
  batch.deliveries.insert(batch.deliveries.end(), out.begin(), out.end());
  std::erase_if(out, [](const DeliveryRecord& d) { return d.status != DeliveryStatus::kPending; });
  if (out.empty()) return nullptr;
  return [deliver = deliver_, records = std::move(out)]() mutable { deliver(std::move(records)); };
}

}  // namespace baton::server
