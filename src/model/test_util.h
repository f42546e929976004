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
