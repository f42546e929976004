#include <baton/commit_queue.h>
#include <baton/engine.h>

#include <atomic>
#include <chrono>
#include <random>

namespace baton {
namespace {

class SyncCommitter final : public Committer {
 public:
  explicit SyncCommitter(Store* store) : store_(store) {}
  void Submit(std::shared_ptr<const WriteBatch> batch,
              std::function<void(const Status&)> done) override {
    done(Sticky(refusing_ ? Refused() : store_->Commit(*batch)));
  }
  void SubmitOwned(std::unique_ptr<WriteBatch> batch,
                   std::function<void(const Status&)> done) override {
    done(Sticky(refusing_ ? Refused() : store_->CommitOwned(std::move(*batch))));
  }
  void Flush() override {}
  void ClearFailure() override { refusing_ = false; }

 private:
  // As CommitQueue: after a refused batch, every later one is refused until cleared.
  Status Sticky(Status s) {
    if (!s.ok()) refusing_ = true;
    return s;
  }
  static Status Refused() {
    return Status(errc::kStore, "not written: an earlier batch was refused");
  }
  Store* store_;
  bool refusing_ = false;  // the caller's thread only (commits are synchronous)
};

// Batches from many turns share one transaction and one fsync.
class GroupCommitter final : public Committer {
 public:
  explicit GroupCommitter(Store* store) : queue_(store, CommitQueue::Options{}) {}
  void Submit(std::shared_ptr<const WriteBatch> batch,
              std::function<void(const Status&)> done) override {
    queue_.Submit(std::move(batch), std::move(done));
  }
  void Flush() override { queue_.Flush(); }
  // A few batches: a turn or two of an idle engine. A larger backlog is a busy one's,
  // whose loop should go back to its tasks while the writer commits.
  bool CommitHere() override { return queue_.CommitHere(4); }
  void DeferWakeupsOnThisThread() override { queue_.DeferWakeupsOnThisThread(); }
  void WakeDeferred() override { queue_.WakeDeferred(); }
  CommitQueue::Stats stats() const override { return queue_.stats(); }
  void ClearFailure() override { queue_.ClearFailure(); }

 private:
  CommitQueue queue_;
};

}  // namespace

std::unique_ptr<Committer> NewGroupCommitter(Store* store) {
  return std::make_unique<GroupCommitter>(store);
}

std::unique_ptr<Committer> NewSyncCommitter(Store* store) {
  return std::make_unique<SyncCommitter>(store);
}

std::string NewExecutionId(TimeMs now) {
  // Crockford base32: 10 characters of millisecond time (ids sort by creation), then 5
  // of a per-process counter that starts at a random value, so ids made in one process
  // never repeat and two processes collide only on the same millisecond and counter.
  // 15 characters fit std::string's inline buffer: no allocation per copy.
  static const char* kDigits = "0123456789abcdefghjkmnpqrstvwxyz";
  static std::atomic<uint64_t> counter{std::random_device{}()};
  std::string id(15, '0');
  uint64_t t = static_cast<uint64_t>(now);
  for (int i = 9; i >= 0; --i) {
    id[i] = kDigits[t & 31];
    t >>= 5;
  }
  uint64_t r = counter.fetch_add(1, std::memory_order_relaxed);
  for (int i = 14; i >= 10; --i) {
    id[i] = kDigits[r & 31];
    r >>= 5;
  }
  return id;
}

}  // namespace baton
