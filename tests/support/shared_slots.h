// SharedPools for engine tests: the holds of several engines kept in one place, as
// PostgreSQL keeps them for several server instances (without leases: a hold lasts until
// it is given back). Single-threaded, as the simulated clock's tests are.
#pragma once

#include <baton/store.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace baton::testing {

struct SharedSlots {
  struct Hold {
    std::string owner;
    int64_t slots = 0;
    int64_t since = 0;  // the order holds were taken in
  };
  using Key = std::tuple<std::string, std::string, std::string>;  // ns, pool, holder
  std::map<Key, Hold> holds;
  int64_t next_since = 0;
  // Store errors to inject: the next N releases fail; every hold fails while set.
  int failing_releases = 0;
  bool holds_fail = false;

  int64_t Sum(const std::string& ns, const std::string& pool) const {
    int64_t n = 0;
    for (const auto& [key, h] : holds) {
      if (std::get<0>(key) == ns && std::get<1>(key) == pool) n += h.slots;
    }
    return n;
  }
};

// One engine's view of SharedSlots, as the instance `me`.
struct InstanceSlots final : SharedPools {
  SharedSlots* all;
  std::string me;
  InstanceSlots(SharedSlots* a, std::string m) : all(a), me(std::move(m)) {}
  static SharedSlots::Key KeyOf(const PoolHold& h) { return {h.ns, h.pool, h.holder}; }
  Result<bool> HoldSlots(const PoolHold& h, int64_t limit, bool force) override {
    if (all->holds_fail) return Status(errc::kStore, "injected: holding");
    if (auto it = all->holds.find(KeyOf(h)); it != all->holds.end()) {
      it->second.owner = me;
      return true;
    }
    if (!force && all->Sum(h.ns, h.pool) + h.slots > limit) return false;
    all->holds[KeyOf(h)] = {me, h.slots, all->next_since++};
    return true;
  }
  Status ReleaseSlots(const PoolHold& h) override {
    if (all->failing_releases > 0) {
      --all->failing_releases;
      return Status(errc::kStore, "injected: releasing");
    }
    auto it = all->holds.find(KeyOf(h));
    if (it != all->holds.end() && it->second.owner == me) all->holds.erase(it);
    return Status::Ok();
  }
  Status ReleaseAllSlots() override {
    std::erase_if(all->holds, [&](const auto& kv) { return kv.second.owner == me; });
    return Status::Ok();
  }
  Result<int64_t> SlotsHeld(const std::string& ns, const std::string& pool) override {
    return all->Sum(ns, pool);
  }
  Result<std::vector<std::string>> Holders(const std::string& ns,
                                           const std::string& pool) override {
    std::vector<std::pair<int64_t, std::string>> found;
    for (const auto& [key, h] : all->holds) {
      if (std::get<0>(key) == ns && std::get<1>(key) == pool) {
        found.emplace_back(h.since, std::get<2>(key));
      }
    }
    std::sort(found.begin(), found.end());
    std::vector<std::string> out;
    for (auto& [since, holder] : found) out.push_back(std::move(holder));
    return out;
  }
};

}  // namespace baton::testing
