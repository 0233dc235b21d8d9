#include "tablets/key_sample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>

namespace tessera {
namespace {

constexpr int64_t kSecond = 1'000'000;

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "k%08d", i);
  return buf;
}

TEST(KeySampleTest, IncreasingWritesAdvanceTheTail) {
  KeySample s;
  for (int i = 0; i < 500; ++i) s.Add(10 * kSecond, Key(i), 1, /*write=*/true);
  auto snap = s.Take(10 * kSecond);
  EXPECT_EQ(snap.writes, 500u);
  EXPECT_EQ(snap.advances, 500u);
  EXPECT_LE(snap.keys.size(), KeySample::kCapacity);
  EXPECT_TRUE(std::is_sorted(snap.keys.begin(), snap.keys.end()));
}

TEST(KeySampleTest, RandomWritesRarelyAdvance) {
  KeySample s;
  std::vector<int> order(5000);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(3));
  for (int i : order) s.Add(10 * kSecond, Key(i), 1, /*write=*/true);
  auto snap = s.Take(10 * kSecond);
  // A random permutation has about ln(5000) ~ 9 left-to-right maxima.
  EXPECT_LT(snap.advances, 50u);
  EXPECT_LT(static_cast<double>(snap.advances + snap.near_tail) / snap.writes, 0.05);
}

TEST(KeySampleTest, IncreasingWritesReorderedByConcurrentRequestsStayNearTheTail) {
  // 4,000 increasing keys, shuffled within windows of 128 (128 requests in flight).
  KeySample s;
  std::mt19937 rng(9);
  for (int base = 0; base < 4000; base += 128) {
    std::vector<int> window(128);
    std::iota(window.begin(), window.end(), base);
    std::shuffle(window.begin(), window.end(), rng);
    for (int k : window) s.Add(10 * kSecond, Key(k), 1, true);
  }
  auto snap = s.Take(10 * kSecond);
  EXPECT_GT(static_cast<double>(snap.advances + snap.near_tail) / snap.writes, 0.9);
  EXPECT_GT(snap.advances, 40u);
}

TEST(KeySampleTest, OnePartitionRepeatsAndSamplesAsOneKey) {
  KeySample s;
  for (int i = 0; i < 1000; ++i) s.Add(10 * kSecond, "hot", 1, /*write=*/true);
  auto snap = s.Take(10 * kSecond);
  ASSERT_EQ(snap.keys.size(), 1u);
  EXPECT_EQ(snap.advances, 1u);
  EXPECT_EQ(snap.near_tail, 999u);
  EXPECT_DOUBLE_EQ(snap.keys[0].second, 1000.0);  // weights scale back to the accesses seen
}

TEST(KeySampleTest, WeightsEstimateTheLoadOnEachSide) {
  KeySample s;
  std::mt19937 rng(5);
  // Keys 0..999; keys below 100 get 9x the accesses of the rest: half of the load sits below 100.
  for (int n = 0; n < 20000; ++n) {
    int k = (rng() % 2 == 0) ? static_cast<int>(rng() % 100) : 100 + static_cast<int>(rng() % 900);
    s.Add(10 * kSecond, Key(k), 1, false);
  }
  auto snap = s.Take(10 * kSecond);
  double below = 0, total = 0;
  for (const auto& [k, w] : snap.keys) {
    total += w;
    if (k < Key(100)) below += w;
  }
  EXPECT_NEAR(total, 20000.0, 1e-6);
  EXPECT_NEAR(below / total, 0.5, 0.2);  // 64 samples: a coarse but unbiased estimate
}

TEST(KeySampleTest, ForgetsAccessesOlderThanTwoWindows) {
  KeySample s;
  for (int i = 0; i < 100; ++i) s.Add(10 * kSecond, Key(i), 1, true);
  EXPECT_EQ(s.Take(15 * kSecond).writes, 100u);
  EXPECT_EQ(s.Take(35 * kSecond).writes, 0u);
  EXPECT_TRUE(s.Take(35 * kSecond).keys.empty());
  // A generation rotates into "previous" and is still seen for one more window.
  s.Add(36 * kSecond, Key(500), 1, true);
  s.Add(47 * kSecond, Key(501), 1, true);
  auto snap = s.Take(47 * kSecond);
  EXPECT_EQ(snap.writes, 2u);
  EXPECT_EQ(snap.advances, 2u);
}

TEST(KeySampleTest, SplitHalvesInheritTheirKeysAndTheTail) {
  KeySample parent;
  for (int i = 0; i < 200; ++i) parent.Add(10 * kSecond, Key(i), 1, true);
  KeySample left, right;
  left.InheritFrom(parent, Key(0), Key(100));
  right.InheritFrom(parent, Key(100), Key(1000));
  auto l = left.Take(10 * kSecond), r = right.Take(10 * kSecond);
  for (const auto& [k, w] : l.keys) EXPECT_LT(k, Key(100));
  for (const auto& [k, w] : r.keys) EXPECT_GE(k, Key(100));
  EXPECT_EQ(l.keys.size() + r.keys.size(), parent.Take(10 * kSecond).keys.size());
  EXPECT_EQ(r.writes, 200u);  // the right half holds the greatest key: it carries the tail
  EXPECT_EQ(r.advances, 200u);
  EXPECT_EQ(l.writes, 0u);
  right.Add(11 * kSecond, Key(150), 1, true);  // below the inherited greatest key: no advance
  EXPECT_EQ(right.Take(11 * kSecond).advances, 200u);
}

}  // namespace
}  // namespace tessera
