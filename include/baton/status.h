// Status and Result: expected failures are values, never exceptions across modules.
//
// A Status is either ok or carries a stable error code (see error codes below, the
// strings users see in `error.code`) and a human-readable message. Result<T> holds a
// T or a non-ok Status.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace baton {

// Stable error codes (DESIGN.md §4). Workers may report codes of their own.
namespace errc {
inline constexpr const char* kExitNonzero = "EXIT_NONZERO";
inline constexpr const char* kTimeout = "TIMEOUT";
inline constexpr const char* kHeartbeatTimeout = "HEARTBEAT_TIMEOUT";
inline constexpr const char* kTemplateError = "TEMPLATE_ERROR";
inline constexpr const char* kConditionError = "CONDITION_ERROR";
inline constexpr const char* kValidation = "VALIDATION";
inline constexpr const char* kCancelled = "CANCELLED";
inline constexpr const char* kEngineRestart = "ENGINE_RESTART";
inline constexpr const char* kWorkerLost = "WORKER_LOST";
inline constexpr const char* kUnsupportedStepType = "UNSUPPORTED_STEP_TYPE";
inline constexpr const char* kHttpStatus = "HTTP_STATUS";
inline constexpr const char* kNetwork = "NETWORK";
inline constexpr const char* kCircuitOpen = "CIRCUIT_OPEN";
// A child workflow (`type: workflow`) failed, timed out or was cancelled; details name it.
inline constexpr const char* kChildFailed = "CHILD_FAILED";
// A workflow's `concurrency` limit was reached and its policy cancelled the new execution.
inline constexpr const char* kConcurrencyLimit = "CONCURRENCY_LIMIT";
inline constexpr const char* kStaleAssignment = "STALE_ASSIGNMENT";
// Internal codes (not step errors).
inline constexpr const char* kNotFound = "NOT_FOUND";
inline constexpr const char* kIo = "IO_ERROR";
inline constexpr const char* kStore = "STORE_ERROR";
inline constexpr const char* kSpawn = "SPAWN_ERROR";
inline constexpr const char* kInvalidArgument = "INVALID_ARGUMENT";
inline constexpr const char* kConflict = "CONFLICT";
// An execution holds as many unconsumed signals as it may (Engine::kMaxPendingSignals).
inline constexpr const char* kTooManySignals = "TOO_MANY_SIGNALS";
}  // namespace errc

class Status {
 public:
  Status() = default;  // ok
  Status(std::string code, std::string message)
      : code_(std::move(code)), message_(std::move(message)) {
    assert(!code_.empty());
  }
  static Status Ok() { return Status(); }

  bool ok() const { return code_.empty(); }
  const std::string& code() const { return code_; }
  const std::string& message() const { return message_; }
  // "CODE: message", or "ok".
  std::string ToString() const { return ok() ? "ok" : code_ + ": " + message_; }

 private:
  std::string code_;
  std::string message_;
};

template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT
    assert(!std::get<Status>(v_).ok());
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  // By value on rvalues, so `for (auto& x : *store->List())` owns what it iterates.
  T value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T operator*() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace baton
