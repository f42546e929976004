// Enum names, small members of the definition types, and diagnostics formatting.
#include <baton/workflow.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace baton {

const char* ToString(ConcurrencyPolicy p) {
  switch (p) {
    case ConcurrencyPolicy::kQueue:
      return "queue";
    case ConcurrencyPolicy::kCancelNewest:
      return "cancel_newest";
    case ConcurrencyPolicy::kCancelOldest:
      return "cancel_oldest";
  }
  return "queue";
}
namespace {

template <class E, size_t N>
std::optional<E> Lookup(const std::array<std::pair<E, const char*>, N>& table, std::string_view s) {
  for (const auto& [value, name] : table) {
    if (s == name) return value;
  }
  return std::nullopt;
}

template <class E, size_t N>
const char* NameOf(const std::array<std::pair<E, const char*>, N>& table, E e) {
  for (const auto& [value, name] : table) {
    if (value == e) return name;
  }
  return "unknown";
}

constexpr std::array<std::pair<StepType, const char*>, 6> kStepTypes{{
    {StepType::kNoop, "noop"},
    {StepType::kShell, "shell"},
    {StepType::kHttp, "http"},
    {StepType::kWait, "wait"},
    {StepType::kCommand, "command"},
    {StepType::kWorkflow, "workflow"},
}};

constexpr std::array<std::pair<TriggerRule, const char*>, 8> kTriggerRules{{
    {TriggerRule::kAllSuccess, "all_success"},
    {TriggerRule::kAllDone, "all_done"},
    {TriggerRule::kAllFailed, "all_failed"},
    {TriggerRule::kOneSuccess, "one_success"},
    {TriggerRule::kOneFailed, "one_failed"},
    {TriggerRule::kNoneFailed, "none_failed"},
    {TriggerRule::kNoneSkipped, "none_skipped"},
    {TriggerRule::kAlways, "always"},
}};

constexpr std::array<std::pair<Priority, const char*>, 4> kPriorities{{
    {Priority::kLow, "low"},
    {Priority::kNormal, "normal"},
    {Priority::kHigh, "high"},
    {Priority::kCritical, "critical"},
}};

}  // namespace

const char* ToString(StepType t) {
  return NameOf(kStepTypes, t);
}
const char* ToString(TriggerRule r) {
  return NameOf(kTriggerRules, r);
}
const char* ToString(Priority p) {
  return NameOf(kPriorities, p);
}
std::optional<StepType> ParseStepType(std::string_view s) {
  return Lookup(kStepTypes, s);
}
std::optional<TriggerRule> ParseTriggerRule(std::string_view s) {
  return Lookup(kTriggerRules, s);
}
std::optional<Priority> ParsePriority(std::string_view s) {
  return Lookup(kPriorities, s);
}

bool RetryPolicy::IsRetryable(std::string_view code) const {
  if (retry_on.empty()) {
    return code != errc::kTemplateError && code != errc::kValidation && code != errc::kCancelled;
  }
  return std::find(retry_on.begin(), retry_on.end(), code) != retry_on.end();
}

Duration RetryPolicy::DelayBefore(int next_attempt) const {
  if (next_attempt < 2) return Duration{0};
  // Computed in double so large exponents saturate at max_delay instead of overflowing.
  double delay = static_cast<double>(initial_delay.count()) *
                 std::pow(multiplier, static_cast<double>(next_attempt - 2));
  double cap = static_cast<double>(max_delay.count());
  if (!(delay < cap)) delay = cap;  // also catches inf and nan
  if (delay < 0) delay = 0;
  return Duration{static_cast<Duration::rep>(delay)};
}

const StepExtras& StepDef::extra() const {
  static const StepExtras kNone;
  return extras ? *extras : kNone;
}

StepExtras& StepDef::edit_extra() {
  if (!extras) {
    extras = std::make_shared<StepExtras>();
  } else if (extras.use_count() > 1) {
    extras = std::make_shared<StepExtras>(*extras);
  }
  return *extras;
}

int WorkflowDef::FindStep(std::string_view id) const {
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

std::string Diagnostic::ToString() const {
  std::string out;
  if (!file.empty()) {
    out = file;
    if (line > 0) out += ":" + std::to_string(line);
  } else if (line > 0) {
    out = "line " + std::to_string(line);
  }
  auto append = [&out](const std::string& part) {
    if (part.empty()) return;
    if (!out.empty()) out += ": ";
    out += part;
  };
  if (!step.empty()) append("step '" + step + "'");
  if (!field.empty()) append("field '" + field + "'");
  append(message);
  return out;
}

Status ParseOutcome::ToStatus() const {
  if (ok()) return Status::Ok();
  std::string text;
  for (const Diagnostic& d : diagnostics) {
    if (!text.empty()) text += '\n';
    text += d.ToString();
  }
  return Status(errc::kValidation, text);
}

}  // namespace baton
