#include "server/feed_tail.h"

#include "common/thread_name.h"

#include <chrono>
#include <cstdio>

namespace baton::server {

namespace {

constexpr auto kPollEvery = std::chrono::milliseconds(100);
// After a read, the least wait before the next: under load one read picks up many
// commits' events instead of one read per commit. Short, since an execution's last
// event often commits just after the read its first one woke.
constexpr auto kReadGap = std::chrono::milliseconds(1);
constexpr size_t kPage = 1000;
constexpr size_t kKept = 1 << 16;  // progress entries held for events not read back yet

std::string KeyOf(const std::string& execution_id, int64_t seq) {
  std::string key = execution_id;
  key += '\x1f';
  key += std::to_string(seq);
  return key;
}

}  // namespace

void FeedTail::OnEvent(const EventRecord& event, const ExecutionProgress& progress) {
  if (hub_->subscribers() == 0) return;  // nobody would see it
  std::lock_guard lock(mu_);
  std::string key = KeyOf(event.execution_id, event.seq);
  if (progress_.insert_or_assign(key, progress).second) order_.push_back(std::move(key));
  while (order_.size() > kKept) {
    progress_.erase(order_.front());
    order_.pop_front();
  }
  if (!woken_) {
    woken_ = true;
    cv_.notify_one();
  }
}

bool FeedTail::TakeProgress(const EventRecord& event, ExecutionProgress* out) {
  std::lock_guard lock(mu_);
  auto it = progress_.find(KeyOf(event.execution_id, event.seq));
  if (it == progress_.end()) return false;
  *out = std::move(it->second);
  progress_.erase(it);  // its key leaves order_ when it comes to the front
  return true;
}

void FeedTail::Start() {
  // From the end as it is now, before any client can subscribe: a client that subscribes
  // gets what is committed after that. (If the database cannot say, the first poll that
  // can starts there.)
  if (auto end = feed_->FeedEnd(); end.ok()) position_ = *end;
  thread_ = std::thread([this] {
    SetThreadName("baton-feed");
    Run();
  });
}

void FeedTail::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t FeedTail::published() const {
  std::lock_guard lock(mu_);
  return published_;
}

void FeedTail::Run() {
  for (;;) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, kPollEvery, [this] { return stop_ || woken_; });
      if (stop_) return;
      woken_ = false;
    }
    Poll();
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, kReadGap, [this] { return stop_; })) return;
  }
}

void FeedTail::Poll() {
  if (position_ < 0 || hub_->subscribers() == 0) {
    // The end first, then the check: a subscriber that came after the check replayed
    // from the store past this end.
    auto end = feed_->FeedEnd();
    if (!end.ok()) return;  // the next poll tries again
    if (position_ < 0 || hub_->subscribers() == 0) {
      position_ = std::max(position_, *end);
      return;
    }
  }
  for (;;) {
    auto page = feed_->FeedAfter(position_, kPage);
    if (!page.ok()) return;
    for (FeedEntry& entry : *page) {
      ExecutionProgress progress;
      const bool known = TakeProgress(entry.event, &progress);
      progress.execution_id = entry.event.execution_id;
      progress.ns = std::move(entry.ns);
      progress.workflow = std::move(entry.workflow);
      hub_->Publish(entry.event, progress, known);
      position_ = entry.event.position;
    }
    {
      std::lock_guard lock(mu_);
      published_ += page->size();
    }
    if (page->size() < kPage) return;
  }
}

}  // namespace baton::server
