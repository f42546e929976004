// Several instances on one database: the live feed comes from the database's shared
// feed (SharedFeed), not from this instance's engine, so that a client of any instance
// sees every execution's events, numbered the same on every instance, whichever instance
// runs the execution (or takes it over).
//
// One thread reads the feed from where it stopped, every 100 ms and soon (1 ms) after
// this instance's engine committed events, and publishes what it read to the hub in
// feed order. Events of the executions this instance runs carry the progress its engine
// reported with them (kept for a moment by OnEvent, bounded); the others carry none.
//
// With no subscriber it reads no events: it moves its position to the feed's end, read
// before it checks that still nobody subscribed, so that a subscriber arriving meanwhile
// misses nothing (a WebSocket session subscribes before it replays from the store, and
// its replay reaches at least that end).
//
// Threading: OnEvent on the engine thread; Start/Stop from one thread; the rest on the
// tail's own thread.
#pragma once

#include "server/event_hub.h"

#include <baton/engine.h>
#include <baton/store.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace baton::server {

class FeedTail final : public ExecutionObserver {
 public:
  // Both outlive the tail.
  FeedTail(SharedFeed* feed, EventHub* hub) : feed_(feed), hub_(hub) {}
  ~FeedTail() override { Stop(); }

  void OnEvent(const EventRecord& event, const ExecutionProgress& progress) override;
  void Start();
  void Stop();

  // How many events the tail has published (for tests and /metrics).
  uint64_t published() const;

 private:
  void Run();
  // One read of the feed (and its next pages while they are full).
  void Poll();
  // The progress OnEvent kept for this event, if any: moved out.
  bool TakeProgress(const EventRecord& event, ExecutionProgress* out);

  SharedFeed* const feed_;
  EventHub* const hub_;
  std::thread thread_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool woken_ = false;
  uint64_t published_ = 0;
  // Progress by "execution id \x1f seq", oldest first in order_ (bounded by kKept).
  std::unordered_map<std::string, ExecutionProgress> progress_;
  std::deque<std::string> order_;

  int64_t position_ = -1;  // the tail's thread: the last position published (-1: not read)
};

}  // namespace baton::server
