#include "common/thread_slice.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace baton {
namespace {

using std::chrono::microseconds;

TEST(ThreadSlice, ZeroAsksForNothing) {
  std::thread([] {
    const microseconds before = OwnSlice();
    EXPECT_FALSE(RequestShortSlices(microseconds(0)));
    EXPECT_EQ(OwnSlice(), before);
  }).join();
}

// On a kernel with per-task slices (Linux 6.12 on) the request holds for the calling
// thread only: not for the thread beside it, nor for one it starts afterwards.
TEST(ThreadSlice, HoldsForTheCallingThreadOnly) {
  const microseconds before = OwnSlice();
  std::thread([before] {
    if (!RequestShortSlices(microseconds(300))) {
      EXPECT_EQ(OwnSlice(), before);
      GTEST_SKIP() << "this kernel keeps no per-thread slice (Linux < 6.12)";
    }
    EXPECT_EQ(OwnSlice(), microseconds(300));
    std::thread([before] { EXPECT_EQ(OwnSlice(), before); }).join();
    // The kernel keeps a slice within 0.1-100 ms.
    EXPECT_TRUE(RequestShortSlices(microseconds(10)));
    EXPECT_EQ(OwnSlice(), microseconds(100));
  }).join();
  EXPECT_EQ(OwnSlice(), before);
  EXPECT_NE(before, microseconds(300));
}

}  // namespace
}  // namespace baton
