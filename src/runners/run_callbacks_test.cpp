// RunCallbacks: one handle on an attempt's RunSink, shared by its copies.
#include <baton/runner.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace baton {
namespace {

class CountingSink final : public RunSink {
 public:
  int started = 0;
  std::vector<int> progress;
  std::vector<RunResult> done;
  void Started() override { ++started; }
  void Progress(int p, Json) override { progress.push_back(p); }
  void Done(RunResult r) override { done.push_back(std::move(r)); }
};

TEST(RunCallbacks, CopiesReportToTheOneSinkAndAMovedFromHandleToNone) {
  auto sink = std::make_shared<CountingSink>();
  RunCallbacks held(sink);
  RunCallbacks copy = held;  // as a runner's thread might keep one
  copy.Started();
  held.Progress(40, Json{{"chunk", 4}});
  RunCallbacks moved = std::move(held);
  EXPECT_FALSE(held);  // NOLINT(bugprone-use-after-move): what a moved-from handle does
  held.Done(RunResult{});
  moved.Done(RunResult{Status("EXIT_NONZERO", "x"), {}, {}, 1, {}});
  EXPECT_EQ(sink->started, 1);
  EXPECT_EQ(sink->progress, std::vector<int>{40});
  ASSERT_EQ(sink->done.size(), 1u);
  EXPECT_EQ(sink->done[0].status.code(), "EXIT_NONZERO");
}

TEST(RunCallbacks, FunctionsLeftUnsetAreSkipped) {
  int done = 0;
  RunFunctions f;
  f.on_done = [&](RunResult) { ++done; };
  RunCallbacks cb = f;
  cb.Started();
  cb.Progress(10, nullptr);
  cb.Done(RunResult{});
  EXPECT_EQ(done, 1);
  RunCallbacks none;
  EXPECT_FALSE(none);
  none.Done(RunResult{});  // reports nowhere, and does not crash
}

}  // namespace
}  // namespace baton
