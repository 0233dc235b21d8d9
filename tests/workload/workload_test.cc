#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "tests/server/test_node.h"
#include "workload/generators.h"
#include "workload/latency_recorder.h"
#include "workload/runner.h"
#include "workload/workload.h"

namespace tessera::workload {
namespace {

TEST(LatencyRecorderTest, PercentilesWithinTheBucketPrecision) {
  LatencyRecorder r;
  for (int64_t v = 1; v <= 100000; ++v) r.Record(v);
  EXPECT_EQ(r.count(), 100000u);
  EXPECT_EQ(r.max(), 100000);
  EXPECT_NEAR(r.mean(), 50000.5, 1e-6);
  for (double p : {50.0, 95.0, 99.0, 99.9}) {
    const double exact = p * 1000;
    EXPECT_NEAR(static_cast<double>(r.Percentile(p)), exact, exact / 128 + 1) << p;
    EXPECT_GE(r.Percentile(p), static_cast<int64_t>(exact));  // the highest equivalent value
  }
  EXPECT_EQ(r.Percentile(100), 100000);
  LatencyRecorder small;
  small.Record(3);
  small.Record(7);
  EXPECT_EQ(small.Percentile(50), 3);  // exact below 128
  small.Merge(r);
  EXPECT_EQ(small.count(), 100002u);
}

TEST(GeneratorsTest, ZipfianFavoursTheFirstItems) {
  std::mt19937_64 rng(1);
  Zipfian z(0, 999);
  std::map<int64_t, int> hits;
  for (int i = 0; i < 100000; ++i) {
    const int64_t v = z.Next(rng);
    ASSERT_GE(v, 0);
    ASSERT_LE(v, 999);
    ++hits[v];
  }
  // theta 0.99 over 1,000 items: item 0 takes 1/zeta(1000) ~ 13% of draws, item 1 about half of that.
  EXPECT_NEAR(hits[0] / 100000.0, 0.133, 0.01);
  EXPECT_NEAR(static_cast<double>(hits[1]) / hits[0], 0.5, 0.05);
  ScrambledZipfian s(0, 999);
  std::map<int64_t, int> scrambled;
  for (int i = 0; i < 100000; ++i) ++scrambled[s.Next(rng)];
  int top = 0;
  int64_t top_key = -1;
  for (const auto& [k, n] : scrambled) {
    if (n > top) {
      top = n;
      top_key = k;
    }
  }
  // Zipfian over YCSB's 10^10 items: the top item takes 1/zeta(10^10) = 1/26.47 = 3.8% of draws.
  EXPECT_NEAR(top / 100000.0, 1 / 26.469, 0.004);  // still skewed...
  EXPECT_NE(top_key, 0);    // ...but the popular key is scattered by the hash
  EXPECT_EQ(FnvHash64(7), FnvHash64(7));
  EXPECT_GE(FnvHash64(-1), 0);
}

TEST(WorkloadTest, PresetsFollowYcsb) {
  auto mix = [](const std::string& name) {
    WorkloadOptions o;
    o.name = name;
    std::map<std::string, double> m;
    for (const auto& [k, v] : (*Workload::Create(o))->mix()) {
      if (v > 0) m[OpName(k)] = v;
    }
    return m;
  };
  EXPECT_EQ(mix("a"), (std::map<std::string, double>{{"READ", 0.5}, {"UPDATE", 0.5}}));
  EXPECT_EQ(mix("b"), (std::map<std::string, double>{{"READ", 0.95}, {"UPDATE", 0.05}}));
  EXPECT_EQ(mix("c"), (std::map<std::string, double>{{"READ", 1.0}}));
  EXPECT_EQ(mix("d"), (std::map<std::string, double>{{"READ", 0.95}, {"INSERT", 0.05}}));
  EXPECT_EQ(mix("e"), (std::map<std::string, double>{{"SCAN", 0.95}, {"INSERT", 0.05}}));
  EXPECT_EQ(mix("f"), (std::map<std::string, double>{{"READ", 0.5}, {"READ-MODIFY-WRITE", 0.5}}));
  WorkloadOptions bad;
  bad.name = "z";
  EXPECT_FALSE(Workload::Create(bad).ok());
}

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    run_.client.port = node_.port();
    run_.connections = 2;
    run_.inflight = 4;
  }
  testing::TestNode node_{"workload"};
  RunOptions run_;
};

TEST_F(RunnerTest, EveryYcsbWorkloadRunsWithoutErrorsOverCql) {
  WorkloadOptions o;
  o.record_count = 500;
  o.field_length = 20;
  for (const std::string name : {"a", "b", "c", "d", "e", "f"}) {
    o.name = name;
    auto w = Workload::Create(o);
    ASSERT_TRUE(w.ok());
    if (name == "a") {
      auto load = LoadPhase(**w, run_);
      ASSERT_TRUE(load.ok()) << load.status().ToString();
      EXPECT_EQ(load->operations, 500u);
      EXPECT_EQ(load->errors, 0u);
    }
    run_.operations = 400;
    auto r = RunPhase(**w, run_);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->errors, 0u) << name << ": " << r->first_error;
    EXPECT_EQ(r->operations, 400u) << name;
    for (const auto& [k, share] : (*w)->mix()) {
      if (share >= 0.5) {
        EXPECT_GT(r->by_op[OpName(k)].latency.count(), 100u) << name << " " << OpName(k);
      }
    }
  }
  // Workload D inserted about 5% of 400 new records; E too.
  auto count = client::CqlConnection::Connect(run_.client);
  ASSERT_TRUE(count.ok());
  auto rows = (*count)->Query("SELECT count(*) FROM ycsb.usertable");
  ASSERT_TRUE(rows.ok());
}

TEST_F(RunnerTest, ATargetRateIsHeldAndSeedsScenariosRun) {
  WorkloadOptions o;
  o.name = "write";
  o.record_count = 1000;
  o.value_bytes = 100;
  auto w = Workload::Create(o);
  ASSERT_TRUE(w.ok());
  run_.seconds = 2;
  run_.target_ops_per_second = 500;
  auto r = RunPhase(**w, run_);
  ASSERT_TRUE(r.ok());
  // Open loop: never above the target (a loaded machine may fall a little short of it).
  EXPECT_LE(r->ops_per_second(), 550);
  EXPECT_GE(r->ops_per_second(), 250);
  run_.target_ops_per_second = 0;
  run_.operations = 300;
  for (const std::string name : {"monotonic", "swapped", "timeseries", "latest-n", "point-read"}) {
    o.name = name;
    auto s = Workload::Create(o);
    ASSERT_TRUE(s.ok());
    auto result = RunPhase(**s, run_);
    ASSERT_TRUE(result.ok()) << name << ": " << result.status().ToString();
    EXPECT_EQ(result->errors, 0u) << name << ": " << result->first_error;
    EXPECT_EQ(result->operations, 300u) << name;
  }
}

}  // namespace
}  // namespace tessera::workload
