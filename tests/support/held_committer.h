// For tests of what is committed when: a committer that holds every batch until the test
// releases it, in order and with a chosen outcome (so a test can look at what one commit
// carries), and an engine over one, in virtual time.
#pragma once

#include <baton/engine.h>
#include <baton/event_loop.h>
#include <baton/memory_store.h>
#include <baton/store.h>

#include <deque>
#include <functional>
#include <memory>
#include <utility>

namespace baton::testing {

class HeldCommitter final : public Committer {
 public:
  explicit HeldCommitter(Store* store) : store_(store) {}
  void Submit(std::shared_ptr<const WriteBatch> batch,
              std::function<void(const Status&)> done) override {
    held_.emplace_back(std::move(batch), std::move(done));
  }
  void Flush() override {}
  size_t held() const { return held_.size(); }
  // The i-th batch still held (0: the next to be released).
  const WriteBatch& batch(size_t i) const { return *held_.at(i).first; }
  // Commits the oldest batch (or, given an error, reports it without committing).
  void ReleaseOne(Status outcome = Status::Ok()) {
    auto [batch, done] = std::move(held_.front());
    held_.pop_front();
    if (outcome.ok()) outcome = store_->Commit(*batch);
    done(outcome);
  }
  // Every batch held now (not those their callbacks submit), each as ReleaseOne.
  void Release(const Status& outcome = Status::Ok()) {
    for (size_t n = held_.size(); n > 0; --n) ReleaseOne(outcome);
  }

 private:
  Store* store_;
  std::deque<std::pair<std::shared_ptr<const WriteBatch>, std::function<void(const Status&)>>>
      held_;
};

// An engine whose batches wait for the test: `committer.ReleaseOne()`, then
// `loop.RunReady()` for what follows the commit.
struct HeldEngine {
  SimClock clock{1'000};
  SimEventLoop loop{&clock};
  std::unique_ptr<Store> store = NewMemoryStore();
  HeldCommitter committer{store.get()};
  Engine engine{&loop, &committer, EngineOptions{.parallel = 1, .random_seed = 1}};
};

}  // namespace baton::testing
