#include "types/speculative_retry.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(SpeculativeRetryTest, ParsesCassandrasForms) {
  auto p = ParseSpeculativeRetry("99p");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, SpeculativeRetry::Kind::kPercentile);
  EXPECT_EQ(p->value, 99);
  p = ParseSpeculativeRetry("95.5PERCENTILE");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, SpeculativeRetry::Kind::kPercentile);
  EXPECT_EQ(p->value, 95.5);
  p = ParseSpeculativeRetry("10ms");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, SpeculativeRetry::Kind::kFixed);
  EXPECT_EQ(p->value, 10);
  EXPECT_EQ(ParseSpeculativeRetry("NONE")->kind, SpeculativeRetry::Kind::kNone);
  EXPECT_EQ(ParseSpeculativeRetry("always")->kind, SpeculativeRetry::Kind::kAlways);
  for (const char* bad : {"", "p", "ms", "100p", "0p", "-5ms", "fast", "10 ms", "99x"}) {
    auto r = ParseSpeculativeRetry(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_NE(r.status().message().find("speculative_retry"), std::string::npos) << bad;
  }
}

TEST(SpeculativeRetryTest, ThresholdFromTheTablesReadLatency) {
  LatencyHistogram h;
  const SpeculativeRetry p99 = *ParseSpeculativeRetry("99p");
  // Fewer than 100 reads: the default.
  for (int i = 0; i < 50; ++i) h.Record(400);
  EXPECT_EQ(SpeculativeThresholdMicros(p99, h, 10'000, 5'000'000), 10'000);
  // 990 reads at 400 us and 10 at 40 ms: the 99th percentile is the 500 us bucket's bound.
  for (int i = 0; i < 940; ++i) h.Record(400);
  for (int i = 0; i < 10; ++i) h.Record(40'000);
  EXPECT_EQ(SpeculativeThresholdMicros(p99, h, 10'000, 5'000'000), 500);
  EXPECT_EQ(SpeculativeThresholdMicros(*ParseSpeculativeRetry("99.9p"), h, 10'000, 5'000'000), 50'000);
  EXPECT_EQ(SpeculativeThresholdMicros(*ParseSpeculativeRetry("25ms"), h, 10'000, 5'000'000), 25'000);
  EXPECT_EQ(SpeculativeThresholdMicros(*ParseSpeculativeRetry("25ms"), h, 10'000, 20'000), 20'000);  // the time-out caps it
  EXPECT_EQ(SpeculativeThresholdMicros(*ParseSpeculativeRetry("ALWAYS"), h, 10'000, 5'000'000), 0);
  EXPECT_EQ(SpeculativeThresholdMicros(*ParseSpeculativeRetry("NONE"), h, 10'000, 5'000'000), -1);
}

}  // namespace
}  // namespace tessera
