// The live feed: committed events fan out from the engine to subscribers (WebSocket
// sessions), each through a bounded queue.
//
// A subscriber that falls behind by more than its queue holds loses the overflow (Take()
// says how many); memory stays bounded whatever a client does. Events reach the hub
// after their commit, in position order, so a subscriber never sees an event the store
// does not have, and what it lost can be read back from the store after the last
// position it kept (the WebSocket session does).
//
// Threading: everything is thread-safe. OnEvent runs on the thread that committed the
// events (one server: ObserverThread::kCommit, the store writer's or the engine's) or the
// feed tail's (several instances); Publish and
// Subscribe/Unsubscribe from any thread.
// Deliveries call the subscriber's `wake` (which must be quick: it posts to the
// subscriber's own strand), and the subscriber drains its queue with Take().
#pragma once

#include <baton/engine.h>

#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace baton::server {

struct EventFilter {
  std::string ns;            // always set: a subscriber sees only its namespace
  std::string execution_id;  // empty = any
  std::string workflow;      // empty = any
  // The event types wanted ("execution.completed") and the families wanted whole
  // ("step" for step.*); both empty = every type.
  std::vector<std::string> types;
  std::vector<std::string> families;
  bool Matches(const EventRecord& e, const ExecutionProgress& p) const;
  bool MatchesType(const std::string& type) const;
};

// The feed's `types=` parameter into `filter`: a comma-separated list of event types
// (include/baton/event_types.h) and families ("step.*"), at most kMaxEventTypeFilters of
// them. An unknown type or family, an empty entry or too many is an INVALID_ARGUMENT
// naming the entry, and leaves `filter` as it was.
inline constexpr size_t kMaxEventTypeFilters = 64;
Status ParseEventTypes(const std::string& text, EventFilter* filter);

// One message of the feed, already rendered as JSON text.
struct FeedMessage {
  std::string execution_id;
  int64_t seq = 0;
  int64_t position = 0;  // EventRecord::position: what a replay from the store dedupes by
  std::string text;
};

class Subscriber {
 public:
  Subscriber(EventFilter filter, size_t capacity, std::function<void()> wake)
      : filter_(std::move(filter)), capacity_(capacity), wake_(std::move(wake)) {}
  const EventFilter& filter() const { return filter_; }
  // Moves out what is queued; `missed` is how many were dropped since the last Take().
  std::vector<FeedMessage> Take(uint64_t* missed);
  void Push(const FeedMessage& m);

 private:
  EventFilter filter_;
  size_t capacity_;
  std::function<void()> wake_;
  std::mutex mu_;
  std::deque<FeedMessage> queue_;
  uint64_t missed_ = 0;
  bool woken_ = false;  // a wake is pending: no need for another
};

class EventHub final : public ExecutionObserver {
 public:
  void OnEvent(const EventRecord& event, const ExecutionProgress& progress) override {
    Publish(event, progress, /*with_progress=*/true);
  }
  // Delivers `event` to the subscribers whose filter matches it (progress.ns and
  // progress.workflow are its execution's), with "progress" in the message only when
  // `with_progress` (otherwise the progress is not known).
  void Publish(const EventRecord& event, const ExecutionProgress& progress, bool with_progress);
  void Subscribe(const std::shared_ptr<Subscriber>& s);
  void Unsubscribe(const Subscriber* s);
  size_t subscribers() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<Subscriber>> subs_;
};

// The feed's JSON for one event: the event (views.h EventJson) plus "workflow" and, with
// `with_progress`, "progress".
std::string FeedJson(const EventRecord& event, const ExecutionProgress& progress,
                     bool with_progress = true);

}  // namespace baton::server
