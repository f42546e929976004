#include <baton/store.h>

#include <gtest/gtest.h>

namespace baton {
namespace {

TEST(StoreEnums, ExecutionStatusNamesRoundTrip) {
  const std::pair<ExecutionStatus, const char*> all[] = {
      {ExecutionStatus::kPending, "pending"},     {ExecutionStatus::kRunning, "running"},
      {ExecutionStatus::kPaused, "paused"},       {ExecutionStatus::kCompleted, "completed"},
      {ExecutionStatus::kFailed, "failed"},       {ExecutionStatus::kTimeout, "timeout"},
      {ExecutionStatus::kCancelled, "cancelled"},
  };
  for (auto [status, name] : all) {
    EXPECT_STREQ(ToString(status), name);
    EXPECT_EQ(ParseExecutionStatus(name), status) << name;
  }
  EXPECT_EQ(ParseExecutionStatus("Running"), std::nullopt);
  EXPECT_EQ(ParseExecutionStatus(""), std::nullopt);
  EXPECT_EQ(ParseExecutionStatus("waiting_retry"), std::nullopt);
}

TEST(StoreEnums, StepStatusNamesRoundTrip) {
  const std::pair<StepStatus, const char*> all[] = {
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
  };
  for (auto [status, name] : all) {
    EXPECT_STREQ(ToString(status), name);
    EXPECT_EQ(ParseStepStatus(name), status) << name;
  }
  EXPECT_EQ(ParseStepStatus("paused"), std::nullopt);
  EXPECT_EQ(ParseStepStatus("waiting-retry"), std::nullopt);
}

TEST(StoreEnums, TerminalStates) {
  EXPECT_FALSE(IsTerminal(ExecutionStatus::kPending));
  EXPECT_FALSE(IsTerminal(ExecutionStatus::kRunning));
  EXPECT_FALSE(IsTerminal(ExecutionStatus::kPaused));
  EXPECT_TRUE(IsTerminal(ExecutionStatus::kCompleted));
  EXPECT_TRUE(IsTerminal(ExecutionStatus::kFailed));
  EXPECT_TRUE(IsTerminal(ExecutionStatus::kTimeout));
  EXPECT_TRUE(IsTerminal(ExecutionStatus::kCancelled));

  for (StepStatus s : {StepStatus::kPending, StepStatus::kReady, StepStatus::kDispatched,
                       StepStatus::kRunning, StepStatus::kWaitingRetry}) {
    EXPECT_FALSE(IsTerminal(s)) << ToString(s);
  }
  for (StepStatus s : {StepStatus::kCompleted, StepStatus::kFailed, StepStatus::kTimeout,
                       StepStatus::kSkipped, StepStatus::kCached, StepStatus::kCancelled}) {
    EXPECT_TRUE(IsTerminal(s)) << ToString(s);
  }
}

}  // namespace
}  // namespace baton
