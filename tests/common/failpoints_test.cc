#include "common/failpoints.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace tessera {
namespace {

TEST(FailpointsTest, OffByDefaultErrorWhenSetAndBadActionsRefused) {
  Failpoints f;
  EXPECT_TRUE(f.Hit("migration.streaming").ok());
  ASSERT_TRUE(f.SetFromFlag("migration.streaming=error").ok());
  Status st = f.Hit("migration.streaming");
  EXPECT_EQ(st.code(), Status::Code::kIOError);
  EXPECT_NE(st.ToString().find("failpoint migration.streaming"), std::string::npos) << st.ToString();
  EXPECT_TRUE(f.Hit("migration.cleanup").ok());  // only the named one
  ASSERT_TRUE(f.Set("migration.streaming", "off").ok());
  EXPECT_TRUE(f.Hit("migration.streaming").ok());
  EXPECT_TRUE(f.Set("x", "sleep").IsInvalidArgument());
  EXPECT_TRUE(f.SetFromFlag("no-action").IsInvalidArgument());
  EXPECT_TRUE(f.Set("", "pause").IsInvalidArgument());
}

TEST(FailpointsTest, PauseHoldsUntilChangedAndReleaseAllWakesEveryone) {
  Failpoints f;
  ASSERT_TRUE(f.Set("stage", "pause").ok());
  std::atomic<int> passed{0};
  Status second;
  std::thread a([&] {
    EXPECT_TRUE(f.Hit("stage").ok());
    ++passed;
  });
  // Wait (bounded) until the thread is held, then set error: it wakes with it.
  for (int i = 0; i < 500 && f.Paused().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(f.Paused(), std::vector<std::string>{"stage"});
  EXPECT_EQ(passed.load(), 0);
  ASSERT_TRUE(f.Set("stage", "off").ok());
  a.join();
  EXPECT_EQ(passed.load(), 1);
  EXPECT_TRUE(f.Paused().empty());

  ASSERT_TRUE(f.Set("stage", "pause").ok());
  std::thread b([&] { second = f.Hit("stage"); });
  for (int i = 0; i < 500 && f.Paused().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_FALSE(f.Paused().empty());
  f.ReleaseAll();
  b.join();
  EXPECT_TRUE(second.ok());
}

}  // namespace
}  // namespace tessera
