#include "tablets/top_k.h"

#include <gtest/gtest.h>

#include <map>
#include <algorithm>
#include <cmath>
#include <random>

namespace tessera {
namespace {

TEST(TopKTest, FindsTheHeavyHittersOfAZipfStreamWithinItsBounds) {
  // 200,000 draws over 10,000 keys, Zipf(1.1): a few keys carry most of the load.
  std::mt19937_64 rng(11);
  std::vector<double> cdf;
  double sum = 0;
  for (int i = 1; i <= 10000; ++i) cdf.push_back(sum += 1.0 / std::pow(i, 1.1));
  std::uniform_real_distribution<double> u(0, sum);
  TopK sketch(100);
  std::map<std::string, uint64_t> truth;
  for (int i = 0; i < 200000; ++i) {
    size_t k = static_cast<size_t>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin());
    std::string key = "key-" + std::to_string(k);
    sketch.Add(key);
    truth[key]++;
  }
  EXPECT_EQ(sketch.size(), 100u);
  EXPECT_EQ(sketch.total(), 200000u);
  auto top = sketch.Top(10);
  ASSERT_EQ(top.size(), 10u);
  // The ten most frequent keys are key-0 .. key-9, in order.
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(top[i].key, "key-" + std::to_string(i));
  for (const auto& e : sketch.Top(100)) {
    EXPECT_LE(e.count - e.error, truth[e.key]) << e.key;  // lower bound
    EXPECT_GE(e.count, truth[e.key]) << e.key;            // upper bound
  }
  // Every key above total/capacity is tracked.
  for (const auto& [key, n] : truth) {
    if (n > 200000 / 100) {
      auto all = sketch.Top(100);
      EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const auto& e) { return e.key == key; })) << key;
    }
  }
}

TEST(TopKTest, WeightsAndClear) {
  TopK sketch(2);
  sketch.Add("a", 5);
  sketch.Add("b", 3);
  sketch.Add("c", 1);  // replaces b (3), inherits error 3
  auto top = sketch.Top(5);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].key, "a");
  EXPECT_EQ(top[1].key, "c");
  EXPECT_EQ(top[1].count, 4u);
  EXPECT_EQ(top[1].error, 3u);
  sketch.Clear();
  EXPECT_EQ(sketch.size(), 0u);
  EXPECT_EQ(sketch.total(), 0u);
}

}  // namespace
}  // namespace tessera
