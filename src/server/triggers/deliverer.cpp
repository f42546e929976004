#include "server/triggers/deliverer.h"

#include <algorithm>
#include <cstdio>

namespace baton::server {

bool RetryableHttpStatus(int status) {
  return status >= 500 || status == 408 || status == 425 || status == 429;
}

Deliverer::Deliverer(EventLoop* loop, Committer* committer, Hooks hooks, Options options)
    : loop_(loop), committer_(committer), hooks_(std::move(hooks)), options_(options) {}

Deliverer::~Deliverer() {
  *alive_ = false;
  for (auto& [id, e] : entries_) {
    if (e.timer) loop_->CancelTimer(e.timer);
  }
}

void Deliverer::Add(std::vector<DeliveryRecord> records) {
  for (DeliveryRecord& r : records) {
    if (r.status != DeliveryStatus::kPending || entries_.count(r.id)) continue;
    Entry& e = entries_[r.id];
    e.record = std::move(r);
    Arm(e);
  }
}

Result<DeliveryRecord> Deliverer::Redeliver(DeliveryRecord record) {
  if (record.status != DeliveryStatus::kFailed) {
    return Status(errc::kConflict, "delivery " + record.id + " is " + ToString(record.status) +
                                       "; only a failed delivery can be redelivered");
  }
  record.status = DeliveryStatus::kPending;
  record.attempts = 0;
  record.next_attempt_at = loop_->Now();
  record.updated_at = loop_->Now();
  Save(record);
  Add({record});
  return record;
}

Deliverer::Stats Deliverer::stats() const {
  Stats s = stats_;
  s.pending = entries_.size();
  return s;
}

void Deliverer::Arm(Entry& e) {
  const std::string id = e.record.id;
  std::weak_ptr<bool> alive = alive_;
  e.timer = loop_->ScheduleAt(std::max(e.record.next_attempt_at, loop_->Now()), [this, alive, id] {
    if (!alive.expired()) Attempt(id);
  });
}

void Deliverer::Attempt(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  e.timer = 0;
  const Send& send = e.record.kind == "trigger" ? hooks_.trigger : hooks_.notify;
  std::weak_ptr<bool> alive = alive_;
  EventLoop* loop = loop_;
  send(e.record, [this, alive, loop, id](Outcome outcome) {
    // The alive flag is read on the loop thread only (the destructor runs there too).
    loop->Post([this, alive, id, outcome = std::move(outcome)]() mutable {
      if (!alive.expired()) Finish(id, std::move(outcome));
    });
  });
}

void Deliverer::Finish(const std::string& id, Outcome outcome) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  DeliveryRecord& r = e.record;
  const TimeMs now = loop_->Now();
  ++r.attempts;
  r.updated_at = now;
  if (outcome.status.ok()) {
    r.status = DeliveryStatus::kDelivered;
    r.result = outcome.result;
    r.last_error = nullptr;
    ++stats_.delivered;
  } else {
    r.last_error = {{"code", outcome.status.code()}, {"message", outcome.status.message()}};
    if (outcome.http_status != 0) r.last_error["http_status"] = outcome.http_status;
    if (!outcome.retryable || r.attempts >= options_.max_attempts) {
      r.status = DeliveryStatus::kFailed;
      ++stats_.failed;
    } else {
      r.next_attempt_at = now + Backoff(r.attempts).count();
      ++stats_.retried;
    }
  }
  Save(r);
  if (r.status == DeliveryStatus::kPending) {
    Arm(e);
  } else {
    entries_.erase(it);
  }
}

Duration Deliverer::Backoff(int attempts) const {
  int64_t delay = options_.base_delay.count();
  for (int i = 1; i < attempts && delay < options_.max_delay.count(); ++i) delay *= 2;
  return Duration(std::min(delay, options_.max_delay.count()));
}

void Deliverer::Save(const DeliveryRecord& r) {
  auto batch = std::make_unique<WriteBatch>();
  batch->deliveries.push_back(r);
  const std::string id = r.id;
  committer_->SubmitOwned(std::move(batch), [id](const Status& s) {
    if (!s.ok()) {
      std::fprintf(stderr, "baton: storing delivery %s: %s\n", id.c_str(), s.message().c_str());
    }
  });
}

}  // namespace baton::server
