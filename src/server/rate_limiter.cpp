#include "server/rate_limiter.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace baton::server {

constexpr int64_t kMicros = 1'000'000;  // one request

RateLimiter::RateLimiter(const Clock* clock, RateLimit limit, size_t max_keys)
    : clock_(clock), limit_(limit), max_keys_(std::max<size_t>(max_keys, 1)) {
  if (limit_.burst < 1) limit_.burst = std::max(1.0, limit_.per_second);
  burst_micros_ = static_cast<int64_t>(std::llround(limit_.burst * kMicros));
}

int64_t RateLimiter::Refilled(const Bucket& b, TimeMs now) const {
  if (now <= b.updated) return b.micros;
  // per_second requests per 1000 ms = per_second * 1000 micros per ms.
  const double added = static_cast<double>(now - b.updated) * limit_.per_second * 1000;
  if (added >= static_cast<double>(burst_micros_)) return burst_micros_;
  return std::min<int64_t>(burst_micros_, b.micros + std::llround(added));
}

bool RateLimiter::Allow(const std::string& key, int64_t* retry_after_ms) {
  if (!enabled()) return true;
  const TimeMs now = clock_->Now();
  std::lock_guard lock(mu_);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= max_keys_) EvictIdle(now);
    it = buckets_.emplace(key, Bucket{burst_micros_, now}).first;
  }
  Bucket& b = it->second;
  b.micros = Refilled(b, now);
  b.updated = std::max(b.updated, now);
  if (b.micros >= kMicros) {
    b.micros -= kMicros;
    return true;
  }
  if (retry_after_ms != nullptr) {
    *retry_after_ms = static_cast<int64_t>(
        std::ceil(static_cast<double>(kMicros - b.micros) / (limit_.per_second * 1000)));
  }
  return false;
}

size_t RateLimiter::keys() const {
  std::lock_guard lock(mu_);
  return buckets_.size();
}

// Drops every bucket that has refilled (it would behave as a new one); if none has, the
// older half (by last use).
void RateLimiter::EvictIdle(TimeMs now) {
  std::erase_if(buckets_,
                [&](const auto& kv) { return Refilled(kv.second, now) >= burst_micros_; });
  if (buckets_.size() < max_keys_) return;
  std::vector<TimeMs> times;
  times.reserve(buckets_.size());
  for (const auto& [k, b] : buckets_) times.push_back(b.updated);
  auto mid = times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2);
  std::nth_element(times.begin(), mid, times.end());
  const TimeMs cutoff = *mid;
  // Older than the median; all equally old: all of them.
  if (std::erase_if(buckets_, [&](const auto& kv) { return kv.second.updated < cutoff; }) == 0) {
    buckets_.clear();
  }
}

}  // namespace baton::server
