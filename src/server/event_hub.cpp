#include "server/event_hub.h"

#include "server/views.h"

#include <algorithm>

namespace baton::server {

bool EventFilter::Matches(const EventRecord& e, const ExecutionProgress& p) const {
  if (p.ns != ns) return false;
  if (!execution_id.empty() && e.execution_id != execution_id) return false;
  if (!workflow.empty() && p.workflow != workflow) return false;
  return true;
}

std::string FeedJson(const EventRecord& event, const ExecutionProgress& p) {
  Json j = EventJson(event);
  j["workflow"] = p.workflow;
  j["progress"] = {
      {"status", ToString(p.status)}, {"percent", p.percent},       {"layer", p.layer},
      {"layers", p.layers},           {"steps_done", p.steps_done}, {"steps_total", p.steps_total}};
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
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

void EventHub::OnEvent(const EventRecord& event, const ExecutionProgress& progress) {
  std::vector<std::shared_ptr<Subscriber>> targets;
  {
    std::lock_guard lock(mu_);
    for (const auto& s : subs_) {
      if (s->filter().Matches(event, progress)) targets.push_back(s);
    }
  }
  if (targets.empty()) return;
  FeedMessage m{event.execution_id, event.seq, event.position, FeedJson(event, progress)};
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
