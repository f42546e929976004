#include <baton/clock.h>

#include <cmath>

namespace baton {

namespace {
int64_t SteadyMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}
}  // namespace

RealClock::RealClock(TimeMs start, double rate)
    : start_(start), rate_(rate > 0 ? rate : 1), origin_(SteadyMs()) {}

TimeMs RealClock::Now() const {
  using namespace std::chrono;
  if (start_ != 0) {
    return start_ + static_cast<TimeMs>(static_cast<double>(SteadyMs() - origin_) * rate_);
  }
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

int64_t RealClock::MonotonicMs() const {
  // A test clock (start_ != 0) is already derived from the steady clock.
  return start_ != 0 ? Now() : SteadyMs();
}

int64_t RealClock::RealDelay(int64_t delta) const {
  if (rate_ == 1 || delta <= 0) return delta;
  return static_cast<int64_t>(std::ceil(static_cast<double>(delta) / rate_));
}

TimeMs SimClock::Now() const {
  return now_.load(std::memory_order_relaxed);
}
int64_t SimClock::MonotonicMs() const {
  return mono_.load(std::memory_order_relaxed);
}
void SimClock::Set(TimeMs t) {
  const TimeMs before = now_.exchange(t, std::memory_order_relaxed);
  if (t > before) mono_.fetch_add(t - before, std::memory_order_relaxed);
}
void SimClock::Advance(Duration d) {
  now_.fetch_add(d.count(), std::memory_order_relaxed);
  mono_.fetch_add(d.count(), std::memory_order_relaxed);
}
void SimClock::JumpWall(Duration d) {
  now_.fetch_add(d.count(), std::memory_order_relaxed);
}

}  // namespace baton
