#include <baton/clock.h>

namespace baton {

TimeMs RealClock::Now() const {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

TimeMs SimClock::Now() const {
  return now_.load(std::memory_order_relaxed);
}
void SimClock::Set(TimeMs t) {
  now_.store(t, std::memory_order_relaxed);
}
void SimClock::Advance(Duration d) {
  now_.fetch_add(d.count(), std::memory_order_relaxed);
}

}  // namespace baton
