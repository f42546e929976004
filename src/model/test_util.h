// Helpers for the model unit tests.
#pragma once

#include <baton/workflow.h>

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace baton::testing_model {

inline ParseOutcome Parse(std::string_view text, std::string_view file = "wf.yaml") {
  return ParseWorkflow(text, file);
}

// The first diagnostic whose message contains `needle` (and whose field is `field`, when
// given; failing that, any field), or nullptr.
inline const Diagnostic* FindDiag(const ParseOutcome& out, std::string_view needle,
                                  const char* field = nullptr) {
  if (field) {
    for (const Diagnostic& d : out.diagnostics) {
      if (d.message.find(needle) != std::string::npos && d.field == field) return &d;
    }
  }
  for (const Diagnostic& d : out.diagnostics) {
    if (d.message.find(needle) != std::string::npos) return &d;
  }
  return nullptr;
}

inline std::string AllDiags(const ParseOutcome& out) {
  return out.ToStatus().ToString();
}

// Parses text that must be valid.
inline WorkflowDef MustParse(std::string_view text, std::string_view file = "wf.yaml") {
  ParseOutcome out = ParseWorkflow(text, file);
  EXPECT_TRUE(out.ok()) << AllDiags(out);
  return out.workflow ? *out.workflow : WorkflowDef{};
}

// Every parsed field of two steps (not `line`).
inline void ExpectSameStep(const StepDef& a, const StepDef& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.extra().description, b.extra().description);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.depends_on, b.depends_on);
  EXPECT_EQ(a.when, b.when);
  EXPECT_EQ(a.trigger_rule, b.trigger_rule);
  EXPECT_EQ(a.optional, b.optional);
  EXPECT_EQ(a.timeout, b.timeout);
  EXPECT_EQ(a.extra().heartbeat_timeout, b.extra().heartbeat_timeout);
  EXPECT_EQ(a.retry.max_attempts, b.retry.max_attempts);
  EXPECT_EQ(a.retry.initial_delay, b.retry.initial_delay);
  EXPECT_EQ(a.retry.max_delay, b.retry.max_delay);
  EXPECT_EQ(a.retry.multiplier, b.retry.multiplier);
  EXPECT_EQ(a.retry.jitter, b.retry.jitter);
  EXPECT_EQ(a.retry.retry_on, b.retry.retry_on);
  EXPECT_EQ(a.priority, b.priority);
  EXPECT_EQ(a.spec, b.spec);
  EXPECT_EQ(a.for_each, b.for_each);
  EXPECT_EQ(a.extra().expected_duration, b.extra().expected_duration);
  EXPECT_EQ(a.extra().pool, b.extra().pool);
  EXPECT_EQ(a.extra().pool_slots, b.extra().pool_slots);
  EXPECT_EQ(a.extra().set_vars, b.extra().set_vars);
  ASSERT_EQ(a.extra().circuit_breaker.has_value(), b.extra().circuit_breaker.has_value());
  if (a.extra().circuit_breaker) {
    EXPECT_EQ(a.extra().circuit_breaker->key, b.extra().circuit_breaker->key);
    EXPECT_EQ(a.extra().circuit_breaker->failure_threshold,
              b.extra().circuit_breaker->failure_threshold);
    EXPECT_EQ(a.extra().circuit_breaker->recovery_timeout,
              b.extra().circuit_breaker->recovery_timeout);
    EXPECT_EQ(a.extra().circuit_breaker->success_threshold,
              b.extra().circuit_breaker->success_threshold);
  }
  ASSERT_EQ(a.extra().cache.has_value(), b.extra().cache.has_value());
  if (a.extra().cache) {
    EXPECT_EQ(a.extra().cache->ttl, b.extra().cache->ttl);
    EXPECT_EQ(a.extra().cache->key, b.extra().cache->key);
  }
}

}  // namespace baton::testing_model

// Asserts that `outcome` has a diagnostic with exactly this line, step, field and message.
#define EXPECT_DIAG(outcome, line_, step_, field_, message_)                   \
  do {                                                                         \
    const ::baton::ParseOutcome& outcome_ = (outcome);                         \
    const ::baton::Diagnostic* found_ =                                        \
        ::baton::testing_model::FindDiag(outcome_, (message_), (field_));      \
    ASSERT_NE(found_, nullptr) << "no diagnostic '" << (message_) << "' in:\n" \
                               << ::baton::testing_model::AllDiags(outcome_);  \
    EXPECT_EQ(found_->message, std::string(message_));                         \
    EXPECT_EQ(found_->line, (line_)) << found_->ToString();                    \
    EXPECT_EQ(found_->step, std::string(step_)) << found_->ToString();         \
    EXPECT_EQ(found_->field, std::string(field_)) << found_->ToString();       \
  } while (0)
