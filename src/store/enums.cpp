// Status names are stored in databases and shown to users, so they are part of the
// format: never rename one, only add.
#include <baton/store.h>

#include <array>
#include <utility>

namespace baton {
namespace {

constexpr std::array<std::pair<ExecutionStatus, const char*>, 8> kExecutionNames{{
    {ExecutionStatus::kPending, "pending"},
    {ExecutionStatus::kRunning, "running"},
    {ExecutionStatus::kPaused, "paused"},
    {ExecutionStatus::kCompleted, "completed"},
    {ExecutionStatus::kFailed, "failed"},
    {ExecutionStatus::kTimeout, "timeout"},
    {ExecutionStatus::kCancelled, "cancelled"},
    {ExecutionStatus::kQueued, "queued"},
}};

constexpr std::array<std::pair<StepStatus, const char*>, 11> kStepNames{{
    {StepStatus::kPending, "pending"},
    {StepStatus::kReady, "ready"},
    {StepStatus::kDispatched, "dispatched"},
    {StepStatus::kRunning, "running"},
    {StepStatus::kCompleted, "completed"},
    {StepStatus::kFailed, "failed"},
    {StepStatus::kTimeout, "timeout"},
    {StepStatus::kSkipped, "skipped"},
    {StepStatus::kCached, "cached"},
    {StepStatus::kCancelled, "cancelled"},
    {StepStatus::kWaitingRetry, "waiting_retry"},
}};

constexpr std::array<std::pair<DeliveryStatus, const char*>, 3> kDeliveryNames{{
    {DeliveryStatus::kPending, "pending"},
    {DeliveryStatus::kDelivered, "delivered"},
    {DeliveryStatus::kFailed, "failed"},
}};

template <class E, size_t N>
const char* NameOf(const std::array<std::pair<E, const char*>, N>& names, E value) {
  for (const auto& [e, name] : names) {
    if (e == value) return name;
  }
  return "unknown";  // only reachable with a value cast from an out-of-range integer
}

template <class E, size_t N>
std::optional<E> Parse(const std::array<std::pair<E, const char*>, N>& names, std::string_view s) {
  for (const auto& [e, name] : names) {
    if (s == name) return e;
  }
  return std::nullopt;
}

}  // namespace

const char* ToString(ExecutionStatus s) {
  return NameOf(kExecutionNames, s);
}
const char* ToString(StepStatus s) {
  return NameOf(kStepNames, s);
}

const char* ToString(DeliveryStatus s) {
  return NameOf(kDeliveryNames, s);
}
std::optional<DeliveryStatus> ParseDeliveryStatus(std::string_view s) {
  return Parse(kDeliveryNames, s);
}

std::optional<ExecutionStatus> ParseExecutionStatus(std::string_view s) {
  return Parse(kExecutionNames, s);
}
std::optional<StepStatus> ParseStepStatus(std::string_view s) {
  return Parse(kStepNames, s);
}

bool IsTerminal(ExecutionStatus s) {
  switch (s) {
    case ExecutionStatus::kPending:
    case ExecutionStatus::kRunning:
    case ExecutionStatus::kPaused:
    case ExecutionStatus::kQueued:
      return false;
    case ExecutionStatus::kCompleted:
    case ExecutionStatus::kFailed:
    case ExecutionStatus::kTimeout:
    case ExecutionStatus::kCancelled:
      return true;
  }
  return false;
}

bool IsTerminal(StepStatus s) {
  switch (s) {
    case StepStatus::kPending:
    case StepStatus::kReady:
    case StepStatus::kDispatched:
    case StepStatus::kRunning:
    case StepStatus::kWaitingRetry:
      return false;
    case StepStatus::kCompleted:
    case StepStatus::kFailed:
    case StepStatus::kTimeout:
    case StepStatus::kSkipped:
    case StepStatus::kCached:
    case StepStatus::kCancelled:
      return true;
  }
  return false;
}

}  // namespace baton
