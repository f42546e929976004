#include "server/lease_keeper.h"

#include <baton/engine.h>

#include "common/thread_name.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace baton::server {

void LeaseKeeper::Start() {
  cache_after_ = host_->cache_read_from();
  thread_ = std::thread([this] {
    SetThreadName("baton-leases");
    Run();
  });
}

void LeaseKeeper::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LeaseKeeper::Run() {
  // Renewals come often enough that two in a row may fail before the trust window (three
  // quarters of a lease) lapses.
  const auto period = std::max(leases_->lease() / 4, Duration(25));
  bool first = true;
  for (;;) {
    const bool rest = Turn(first);
    first = false;
    std::unique_lock lock(mu_);
    if (rest) {
      wake_.wait_for(lock, period, [this] { return stopping_; });
    }
    if (stopping_) return;
  }
}

void LeaseKeeper::Drop(std::vector<std::string> ids) {
  ExecutionLeases* leases = leases_;
  host_->Post([leases, ids = std::move(ids)](Engine& engine) {
    for (const std::string& id : ids) (void)engine.Evict(id);
    // Batches submitted before the eviction may still be queued: the store refuses them
    // (the ids count as lost) until they are settled, so none lands after this instance
    // takes one of these executions again.
    engine.WhenDurable([leases, ids](const Status&) { leases->Forget(ids); });
  });
}

bool LeaseKeeper::Turn(bool first) {
  auto lost = leases_->Renew();
  if (!lost.ok()) {
    if (!leases_->Trusted()) {
      leading_.store(false, std::memory_order_release);
      std::vector<std::string> held = leases_->Held();
      if (!held.empty()) {
        std::fprintf(stderr,
                     "baton: this instance's leases were not renewed in time (%s); dropping %zu "
                     "execution(s) for any instance to take once the leases expire\n",
                     lost.status().message().c_str(), held.size());
        for (const std::string& id : held) (void)leases_->Release(id);
        Drop(std::move(held));
      }
    }
    return true;
  }
  if (!lost->empty()) {
    std::fprintf(stderr, "baton: another instance took %zu execution(s) from this one (e.g. %s)\n",
                 lost->size(), lost->front().c_str());
    Drop(std::move(lost).value());
  }
  // Breakers other instances opened (or closed) apply here too from now on.
  if (auto breakers = host_->store()->ListBreakers(""); breakers.ok()) {
    host_->Post([stored = std::move(breakers).value()](Engine& engine) mutable {
      engine.MergeBreakers(std::move(stored));
    });
  }
  // Pools other instances created, resized or removed apply here too from now on.
  if (auto pools = host_->store()->ListPools(""); pools.ok()) {
    host_->Post([stored = std::move(pools).value()](Engine& engine) mutable {
      engine.MergePools(std::move(stored));
    });
  }
  // Results other instances cached (or deleted) are found here too from now on.
  if (SharedCache* cache = host_->store()->shared_cache(); cache != nullptr) {
    if (auto changes = cache->CacheChangesAfter(cache_after_); changes.ok()) {
      cache_after_ = changes->next;
      if (!changes->entries.empty() || !changes->deleted.empty()) {
        host_->Post([changes = std::move(changes).value()](Engine& engine) mutable {
          engine.MergeCache(std::move(changes.entries), changes.deleted);
        });
      }
    }
  }
  auto led = leases_->Lead("cron");
  leading_.store(led.ok() && *led, std::memory_order_release);
  auto claimed = leases_->Claim(kClaimBatch, first);
  if (!claimed.ok()) {
    std::fprintf(stderr, "baton: claiming executions: %s\n", claimed.status().message().c_str());
    return true;
  }
  const bool more = claimed->size() >= kClaimBatch;
  if (claimed->empty()) return true;
  ExecutionLeases* leases = leases_;
  EngineHost* host = host_;
  host_->Post([leases, host, ids = std::move(claimed).value()](Engine& engine) {
    size_t recovered = 0;
    for (const std::string& id : ids) {
      auto back = RecoverExecutions(host->store(), &engine, id);
      if (back.ok()) {
        ++recovered;
        continue;
      }
      // Finished meanwhile, or unreadable now: let it go, for whoever claims it next.
      if (back.status().code() != errc::kConflict) {
        std::fprintf(stderr, "baton: recovering claimed execution %s: %s\n", id.c_str(),
                     back.status().message().c_str());
      }
      (void)leases->Release(id);
      leases->Forget({id});
    }
    if (recovered > 0) {
      std::fprintf(stderr, "baton: took over %zu execution(s) whose lease expired\n", recovered);
    }
  });
  return !more;
}

}  // namespace baton::server
