#include "server/event_hub.h"

#include "common/json_text.h"
#include "server/views.h"

#include <baton/event_types.h>

#include <algorithm>

namespace baton::server {

bool EventFilter::Matches(const EventRecord& e, const ExecutionProgress& p) const {
  if (p.ns != ns) return false;
  if (!execution_id.empty() && e.execution_id != execution_id) return false;
  if (!workflow.empty() && p.workflow != workflow) return false;
  return MatchesType(e.type);
}

bool EventFilter::MatchesType(const std::string& type) const {
  if (types.empty() && families.empty()) return true;
  if (std::find(types.begin(), types.end(), type) != types.end()) return true;
  const std::string_view family = std::string_view(type).substr(0, type.find('.'));
  return std::find(families.begin(), families.end(), family) != families.end();
}

Status ParseEventTypes(const std::string& text, EventFilter* filter) {
  std::vector<std::string> types;
  std::vector<std::string> families;
  size_t start = 0;
  for (size_t entries = 1;; ++entries) {
    const size_t comma = text.find(',', start);
    const std::string entry =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (entries > kMaxEventTypeFilters) {
      return Status(errc::kInvalidArgument,
                    "types: more than " + std::to_string(kMaxEventTypeFilters) + " entries");
    }
    const std::string shown = entry.size() > 80 ? entry.substr(0, 80) + "..." : entry;
    if (entry.empty()) {
      return Status(errc::kInvalidArgument,
                    "types: an empty entry (give event types or families separated by "
                    "commas, e.g. types=execution.completed,step.*)");
    }
    if (entry.size() > 2 && entry.compare(entry.size() - 2, 2, ".*") == 0) {
      const std::string family = entry.substr(0, entry.size() - 2);
      if (!IsEventFamily(family)) {
        return Status(errc::kInvalidArgument,
                      "types: '" + shown +
                          "' is not a family of event types (execution.*, step.*, "
                          "signal.*, breaker.*, vars.*)");
      }
      families.push_back(family);
    } else if (IsEventType(entry)) {
      types.push_back(entry);
    } else {
      return Status(errc::kInvalidArgument,
                    "types: '" + shown +
                        "' is not an event type (e.g. execution.completed, step.failed, "
                        "or a family such as step.*)");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  filter->types = std::move(types);
  filter->families = std::move(families);
  return Status::Ok();
}

// Written directly rather than built as a Json and dumped: the feed renders every event
// of the server once per event, and the DOM (a map node per member) was most of its cost.
// The members are those of EventJson plus "workflow" and "progress".
std::string FeedJson(const EventRecord& event, const ExecutionProgress& p, bool with_progress) {
  std::string out;
  out.reserve(256);
  out += "{\"execution_id\":";
  AppendJsonString(out, event.execution_id);
  AppendJsonMember(out, "seq", event.seq);
  AppendJsonMember(out, "position", event.position);
  out += ",\"type\":";
  AppendJsonString(out, event.type);
  out += ",\"time\":";
  AppendJsonString(out, IsoTime(event.time));
  out += ",\"data\":";
  out += event.data.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (!event.step_id.empty()) {
    out += ",\"step_id\":";
    AppendJsonString(out, event.step_id);
  }
  if (event.attempt > 0) AppendJsonMember(out, "attempt", event.attempt);
  out += ",\"workflow\":";
  AppendJsonString(out, p.workflow);
  if (!with_progress) {
    out += '}';
    return out;
  }
  out += ",\"progress\":{\"status\":";
  AppendJsonString(out, ToString(p.status));
  out += ",\"percent\":";
  out += std::to_string(p.percent);
  AppendJsonMember(out, "layer", p.layer);
  AppendJsonMember(out, "layers", p.layers);
  AppendJsonMember(out, "steps_done", p.steps_done);
  AppendJsonMember(out, "steps_total", p.steps_total);
  out += "}}";
  return out;
}

std::vector<FeedMessage> Subscriber::Take(uint64_t* missed) {
  std::lock_guard lock(mu_);
  std::vector<FeedMessage> out(std::make_move_iterator(queue_.begin()),
                               std::make_move_iterator(queue_.end()));
  queue_.clear();
  *missed = missed_;
  missed_ = 0;
  woken_ = false;
  return out;
}

void Subscriber::Push(const FeedMessage& m) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= capacity_) {
      ++missed_;
    } else {
      queue_.push_back(m);
    }
    wake = !woken_;
    woken_ = true;
  }
  if (wake) wake_();
}

void EventHub::Publish(const EventRecord& event, const ExecutionProgress& progress,
                       bool with_progress) {
  std::vector<std::shared_ptr<Subscriber>> targets;
  {
    std::lock_guard lock(mu_);
    for (const auto& s : subs_) {
      if (s->filter().Matches(event, progress)) targets.push_back(s);
    }
  }
  if (targets.empty()) return;
  FeedMessage m{event.execution_id, event.seq, event.position,
                FeedJson(event, progress, with_progress)};
  for (const auto& s : targets) s->Push(m);
}

void EventHub::Subscribe(const std::shared_ptr<Subscriber>& s) {
  std::lock_guard lock(mu_);
  subs_.push_back(s);
}

void EventHub::Unsubscribe(const Subscriber* s) {
  std::lock_guard lock(mu_);
  subs_.erase(
      std::remove_if(subs_.begin(), subs_.end(), [s](const auto& x) { return x.get() == s; }),
      subs_.end());
}

size_t EventHub::subscribers() const {
  std::lock_guard lock(mu_);
  return subs_.size();
}

}  // namespace baton::server
