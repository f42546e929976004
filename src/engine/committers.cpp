#include <baton/commit_queue.h>
#include <baton/engine.h>

#include <chrono>
#include <random>

namespace baton {
namespace {

class SyncCommitter final : public Committer {
 public:
  explicit SyncCommitter(Store* store) : store_(store) {}
  void Submit(std::shared_ptr<const WriteBatch> batch,
              std::function<void(const Status&)> done) override {
    done(store_->Commit(*batch));
  }
  void Flush() override {}

 private:
  Store* store_;
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
  // Crockford base32 of the millisecond time (sorts by creation), then random bits.
  static const char* kDigits = "0123456789abcdefghjkmnpqrstvwxyz";
  std::string id(10, '0');
  uint64_t t = static_cast<uint64_t>(now);
  for (int i = 9; i >= 0; --i) {
    id[i] = kDigits[t & 31];
    t >>= 5;
  }
  static thread_local std::mt19937_64 rng(std::random_device{}());
  uint64_t r = rng();
  id += '-';
  for (int i = 0; i < 6; ++i) {
    id += kDigits[r & 31];
    r >>= 5;
  }
  return id;
}

}  // namespace baton
