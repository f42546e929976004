// Delivers the outbox (DeliveryRecords, see follow_ups.h): POSTs notifications and starts
// event triggers' executions, retrying failures with exponential backoff, and records
// every attempt's outcome in the store.
//
// Retries: after attempt n fails, the next one is due base_delay * 2^(n-1) later (capped
// at max_delay). A delivery gives up -- status `failed` -- after max_attempts, or at once
// when the outcome is not retryable (the receiver answered 4xx other than 408/425/429,
// the egress guard refused the URL, the workflow no longer exists). Pending deliveries
// are stored with their next attempt time, so they survive restarts (Load()).
//
// At least once: an attempt whose outcome was not yet stored when the process died is
// made again after the restart. Notifications carry their delivery id for receivers to
// deduplicate; trigger starts are idempotent (key "trigger/<delivery id>").
//
// Threading: every call on the loop's thread. Send hooks may answer from any thread.
#pragma once

#include <baton/clock.h>
#include <baton/engine.h>
#include <baton/store.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace baton::server {

class Deliverer {
 public:
  struct Outcome {
    Status status;          // ok = delivered
    bool retryable = true;  // false: give up now
    int http_status = 0;    // notifications: the response's status, 0 when none came
    std::string result;     // triggers: the execution started
  };
  using Send = std::function<void(const DeliveryRecord&, std::function<void(Outcome)> done)>;
  struct Hooks {
    Send notify;   // kind "notification"
    Send trigger;  // kind "trigger"
  };
  struct Options {
    int max_attempts = 8;
    Duration base_delay{1000};
    Duration max_delay{5 * 60 * 1000};
  };
  struct Stats {
    uint64_t delivered = 0;
    uint64_t failed = 0;   // gave up
    uint64_t retried = 0;  // attempts that failed and were scheduled again
    size_t pending = 0;
  };

  // Outcomes are written through `committer` (asynchronously: a lost write means the
  // attempt is made again).
  Deliverer(EventLoop* loop, Committer* committer, Hooks hooks, Options options);
  ~Deliverer();
  Deliverer(const Deliverer&) = delete;
  Deliverer& operator=(const Deliverer&) = delete;

  // Pending deliveries already stored (at start), or just committed (FollowUps).
  void Add(std::vector<DeliveryRecord> records);
  // Tries a failed delivery again: attempts start over. CONFLICT unless it
  // is `failed`. Returns the record as stored.
  Result<DeliveryRecord> Redeliver(DeliveryRecord record);

  Stats stats() const;

 private:
  struct Entry {
    DeliveryRecord record;
    TimerId timer = 0;
  };
  void Arm(Entry& e);
  void Attempt(const std::string& id);
  void Finish(const std::string& id, Outcome outcome);
  void Save(const DeliveryRecord& r);
  Duration Backoff(int attempts) const;

  EventLoop* loop_;
  Committer* committer_;
  Hooks hooks_;
  Options options_;
  std::map<std::string, Entry> entries_;  // pending, by id
  Stats stats_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

// Whether an HTTP status is worth retrying: 5xx, 408, 425 and 429.
bool RetryableHttpStatus(int status);

}  // namespace baton::server
