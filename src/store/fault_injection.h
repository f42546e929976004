// A store that refuses commits on a plan, as a full disk or a failing device does
// (LevelDB's fault-injection Env, SQLite's I/O-error tests). Reads pass through.
//
// Tests use it in-process; `baton server` and `baton run` wrap their store in one when
// BATON_FAULT_STORE is set (e.g. "from=20,count=15": commits 20 to 34 are refused), so
// that an outside test can fail the real binary's writes at a chosen point.
//
// Threading: as thread-safe as the wrapped store; the counters are atomic.
#pragma once

#include <baton/store.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace baton {

class FaultInjectingStore final : public StoreWrapper {
 public:
  struct Plan {
    uint64_t from = 0;   // the first refused commit, counting from 1; 0 = none
    uint64_t count = 0;  // how many in a row are refused; 0 = every one from `from` on
  };
  // "from=N,count=M" (count optional). INVALID_ARGUMENT naming the part it cannot read.
  static Result<Plan> ParsePlan(std::string_view text);

  FaultInjectingStore(std::unique_ptr<Store> target, Plan plan);
  using Store::Commit;

  // While set, every commit is refused as well (tests that switch a fault on and off).
  void SetFailing(bool failing) { failing_ = failing; }
  uint64_t commits() const { return commits_; }  // attempted, refused included
  uint64_t refused() const { return refused_; }

  Status Commit(std::span<const WriteBatch* const> batches) override;
  Status CommitOwned(WriteBatch&& batch) override;

 private:
  // The error for this commit, or ok to let it through.
  Status Decide();

  std::unique_ptr<Store> owned_;
  Plan plan_;
  std::atomic<bool> failing_{false};
  std::atomic<uint64_t> commits_{0};
  std::atomic<uint64_t> refused_{0};
};

// `store` itself, or `store` inside a FaultInjectingStore when BATON_FAULT_STORE is set
// (a malformed value is an error).
Result<std::unique_ptr<Store>> WithFaultsFromEnv(std::unique_ptr<Store> store);

}  // namespace baton
