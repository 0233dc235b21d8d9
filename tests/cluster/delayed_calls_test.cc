// DelayedCalls (cluster/delayed_calls.h): a call runs once, not before its
// delay, on the timer thread; what Stop finds pending never runs; a
// cancelled call never runs and costs the thread no wake-up.
#include "cluster/delayed_calls.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

namespace tessera::cluster {
namespace {

using Clock = std::chrono::steady_clock;

TEST(DelayedCallsTest, RunsEachCallOnceAfterItsDelayOnItsOwnThread) {
  DelayedCalls calls;
  std::promise<std::pair<Clock::time_point, std::thread::id>> ran;
  auto fired = ran.get_future();
  const auto asked = Clock::now();
  calls.After(20'000, [&ran] { ran.set_value({Clock::now(), std::this_thread::get_id()}); });
  ASSERT_EQ(fired.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto [at, thread] = fired.get();
  EXPECT_GE(at - asked, std::chrono::microseconds(20'000));  // never early (the contract's lower bound)
  EXPECT_NE(thread, std::this_thread::get_id());
  // Calls asked later with shorter delays run first.
  std::promise<int> first;
  auto order = first.get_future();
  calls.After(3'600'000'000LL, [&first] { first.set_value(1); });
  calls.After(1'000, [&first] { first.set_value(2); });
  ASSERT_EQ(order.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_EQ(order.get(), 2);
  calls.Stop();  // the hour-long one is dropped: set_value is never called twice
}

TEST(DelayedCallsTest, StopDropsWhatIsPendingAndWhatComesAfter) {
  auto pending = std::make_shared<int>(0);
  std::weak_ptr<int> watch = pending;
  {
    DelayedCalls calls;
    calls.After(3'600'000'000LL, [pending] { ++*pending; });
    calls.Stop();
    calls.Stop();  // idempotent
    auto late = std::make_shared<int>(0);
    std::weak_ptr<int> late_watch = late;
    calls.After(0, [late] { ++*late; });
    late.reset();
    EXPECT_TRUE(late_watch.expired());  // dropped unrun at once
    EXPECT_EQ(*pending, 0);
  }
  pending.reset();
  EXPECT_TRUE(watch.expired());  // destroyed with the object, never run
}

TEST(DelayedCallsTest, CancelledCallsNeverRunAndDoNotWakeTheThread) {
  DelayedCalls calls;
  auto owned = std::make_shared<int>(0);
  std::weak_ptr<int> watch = owned;
  std::vector<uint64_t> handles;
  // As reads do: each arms a retry far in the future and finishes first.
  for (int i = 0; i < 1000; ++i) {
    handles.push_back(calls.After(60'000'000, [owned] { ++*owned; }));
    ASSERT_NE(handles.back(), 0u);
  }
  for (uint64_t h : handles) EXPECT_TRUE(calls.Cancel(h));
  EXPECT_FALSE(calls.Cancel(handles.front()));  // once only
  EXPECT_FALSE(calls.Cancel(0));
  owned.reset();
  EXPECT_TRUE(watch.expired());  // their functions are gone with the cancel
  std::promise<void> ran;
  auto fired = ran.get_future();
  const uint64_t last = calls.After(1'000, [&ran] { ran.set_value(); });
  ASSERT_EQ(fired.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  EXPECT_FALSE(calls.Cancel(last));  // ran: nothing to take out
  // One wake-up for the first call (the thread slept with nothing pending),
  // one for the earlier last call, one to run it; not one per call. A
  // timer per call woke the thread at least twice per call (2,000 here).
  EXPECT_LE(calls.wakeups(), 10u);
}

}  // namespace
}  // namespace tessera::cluster
