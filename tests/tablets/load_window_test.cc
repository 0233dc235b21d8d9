#include "tablets/load_window.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace tessera {
namespace {

constexpr int64_t kSecond = 1'000'000;

TEST(LoadWindowTest, RateIsEventsPerSecondOverTheLastTenWholeSeconds) {
  LoadWindow w;
  const int64_t t0 = 1'700'000'000 * kSecond;
  for (int s = 0; s < 20; ++s) {
    for (int i = 0; i < 100; ++i) w.Add(t0 + s * kSecond + i * 1000, 1);
  }
  EXPECT_DOUBLE_EQ(w.Rate(t0 + 20 * kSecond), 100.0);    // seconds 10..19 complete
  EXPECT_DOUBLE_EQ(w.Rate(t0 + 25 * kSecond), 50.0);     // five of the ten seconds idle
  EXPECT_DOUBLE_EQ(w.Rate(t0 + 40 * kSecond), 0.0);      // all idle
  w.Add(t0 + 40 * kSecond, 1000);                        // a burst now...
  EXPECT_DOUBLE_EQ(w.Rate(t0 + 40 * kSecond + 1), 0.0);  // ...counts once its second is over
  EXPECT_DOUBLE_EQ(w.Rate(t0 + 41 * kSecond), 100.0);
  w.Add(t0 + 5 * kSecond, 77);                           // a stale event is dropped
  EXPECT_DOUBLE_EQ(w.Rate(t0 + 41 * kSecond), 100.0);
}

TEST(LoadWindowTest, ConcurrentAddsWithinASecondAreAllCounted) {
  LoadWindow w;
  const int64_t t0 = 1'700'000'000 * kSecond;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) w.Add(t0 + 500'000, 1);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_DOUBLE_EQ(w.Rate(t0 + kSecond), 40000.0 / LoadWindow::kSeconds);
}

}  // namespace
}  // namespace tessera
