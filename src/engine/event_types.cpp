#include <baton/event_types.h>

#include <algorithm>
#include <array>

namespace baton {
namespace {

// Sorted (IsEventType searches it). scripts/check_event_types.sh reads this list.
constexpr std::array<std::string_view, 35> kEventTypes = {
    "breaker.closed",
    "breaker.half_opened",
    "breaker.opened",
    "execution.cancelled",
    "execution.completed",
    "execution.dequeued",
    "execution.failed",
    "execution.paused",
    "execution.queued",
    "execution.recovered",
    "execution.resumed",
    "execution.retried",
    "execution.stalled",
    "execution.started",
    "execution.timed_out",
    "signal.consumed",
    "signal.received",
    "step.cache_wait",
    "step.cached",
    "step.cancelled",
    "step.completed",
    "step.dispatched",
    "step.failed",
    "step.progress",
    "step.ready",
    "step.reassigned",
    "step.reattached",
    "step.retrying",
    "step.skipped",
    "step.slow",
    "step.stale_result",
    "step.started",
    "step.timed_out",
    "step.waiting",
    "vars.set",
};

}  // namespace

std::span<const std::string_view> EventTypes() {
  return kEventTypes;
}

bool IsEventType(std::string_view type) {
  return std::binary_search(kEventTypes.begin(), kEventTypes.end(), type);
}

bool IsEventFamily(std::string_view family) {
  return std::any_of(kEventTypes.begin(), kEventTypes.end(), [&](std::string_view t) {
    return t.size() > family.size() && t.substr(0, family.size()) == family &&
           t[family.size()] == '.';
  });
}

}  // namespace baton
