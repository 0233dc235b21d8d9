// The load report's etcd value (cluster/node_load.h): its frozen fields and
// the refusal of anything else.
#include "cluster/node_load.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cluster/replica_reads.h"

namespace tessera::cluster {
namespace {

TEST(NodeLoadTest, RoundTripsThroughItsFrozenFields) {
  NodeLoad load;
  load.bytes = 5'000'000'000ULL;  // beyond 32 bits
  load.tablets = 17;
  load.at_micros = 1'795'520'008'727'836;
  const std::string text = EncodeNodeLoad(load);
  auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j.at("bytes").get<uint64_t>(), 5'000'000'000ULL);
  EXPECT_EQ(j.at("tablets").get<uint64_t>(), 17u);
  EXPECT_EQ(j.at("at_micros").get<int64_t>(), 1'795'520'008'727'836);
  auto back = DecodeNodeLoad(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->bytes, load.bytes);
  EXPECT_EQ(back->tablets, load.tablets);
  EXPECT_EQ(back->at_micros, load.at_micros);
}

TEST(NodeLoadTest, CarriesServedRatesPerTabletAndReadsOlderReportsWithout) {
  NodeLoad load;
  load.replica_reads_per_second = 412.5;
  load.replica_writes_per_second = 3;
  load.tablet_loads.push_back({"5b6962dd-3f90-4c93-8f61-eabfa4a803e2", std::string("\x80\x00\x01\xff", 4), 400, 1});
  load.tablet_loads.push_back({"5b6962dd-3f90-4c93-8f61-eabfa4a803e2", "", 12.5, 2, 123456789012});
  const std::string text = EncodeNodeLoad(load);
  EXPECT_EQ(nlohmann::json::parse(text).at("tablet_loads").at(0).at("start"), "800001ff");
  auto back = DecodeNodeLoad(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_DOUBLE_EQ(back->replica_reads_per_second, 412.5);
  EXPECT_DOUBLE_EQ(back->replica_writes_per_second, 3);
  ASSERT_EQ(back->tablet_loads.size(), 2u);
  EXPECT_EQ(back->tablet_loads[0].start, std::string("\x80\x00\x01\xff", 4));
  EXPECT_EQ(back->tablet_loads[0].table_uuid, "5b6962dd-3f90-4c93-8f61-eabfa4a803e2");
  EXPECT_DOUBLE_EQ(back->tablet_loads[0].reads, 400);
  EXPECT_EQ(back->tablet_loads[1].start, "");
  EXPECT_DOUBLE_EQ(back->tablet_loads[1].writes, 2);
  EXPECT_EQ(back->tablet_loads[1].bytes, 123456789012u);
  EXPECT_EQ(back->tablet_loads[0].bytes, 0u);
  // A tablet load of a node that did not report bytes yet.
  auto older = DecodeNodeLoad(
      "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"table\": \"t\", \"start\": \"00\", "
      "\"reads\": 1}]}");
  ASSERT_TRUE(older.ok()) << older.status().ToString();
  EXPECT_EQ(older->tablet_loads.at(0).bytes, 0u);

  // A report of a node that did not count served requests yet.
  auto old = DecodeNodeLoad("{\"bytes\": 1, \"tablets\": 2, \"at_micros\": 3}");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->replica_reads_per_second, 0);
  EXPECT_TRUE(old->tablet_loads.empty());
}

TEST(NodeLoadTest, CarriesATabletsKeySampleAndReadsReportsWithout) {
  NodeLoad load;
  TabletLoadReport t{"5b6962dd-3f90-4c93-8f61-eabfa4a803e2", "", 0, 0};
  t.sample = {{std::string("\x00\x01", 2), 3.5}, {"zz", 1}};
  t.sampled_writes = 40, t.advances = 31, t.near_tail = 7;
  load.tablet_loads.push_back(t);
  load.tablet_loads.push_back({"5b6962dd-3f90-4c93-8f61-eabfa4a803e2", "\x80", 2, 0});
  const std::string text = EncodeNodeLoad(load);
  auto j = nlohmann::json::parse(text).at("tablet_loads");
  EXPECT_EQ(j.at(0).at("sample").at(0).at(0), "0001");
  EXPECT_FALSE(j.at(1).contains("sample"));  // none: not written at all
  auto back = DecodeNodeLoad(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->tablet_loads.size(), 2u);
  EXPECT_EQ(back->tablet_loads[0].sample, t.sample);
  EXPECT_EQ(j.at(0).at("tail"), nlohmann::json::parse("[40, 31, 7]"));
  EXPECT_EQ(back->tablet_loads[0].sampled_writes, 40u);
  EXPECT_EQ(back->tablet_loads[0].advances, 31u);
  EXPECT_EQ(back->tablet_loads[0].near_tail, 7u);
  EXPECT_TRUE(back->tablet_loads[1].sample.empty());
  EXPECT_EQ(back->tablet_loads[1].sampled_writes, 0u);
}

// What a cut before any kept key puts on its left: the same weight as in the
// full sample.
TEST(NodeLoadTest, ACoarsenedSampleKeepsTheWeightOnEitherSideOfEveryKeptKey) {
  std::vector<std::pair<std::string, double>> keys;
  for (int i = 0; i < 1000; ++i) {
    char key[8];
    std::snprintf(key, sizeof key, "%05d", i);
    keys.emplace_back(key, i == 700 ? 5000 : (i % 7) + 1);  // one heavy partition among light ones
  }
  keys.emplace_back("99999", 0);  // weightless: dropped
  auto left_of = [](const std::vector<std::pair<std::string, double>>& sample, const std::string& cut) {
    double w = 0;
    for (const auto& k : sample) w += k.first < cut ? k.second : 0;
    return w;
  };
  const auto coarse = CoarsenSample(keys, 64);
  ASSERT_LE(coarse.size(), 64u);
  ASSERT_GE(coarse.size(), 24u);  // the heavy partition alone holds 35 of the 64 shares
  EXPECT_DOUBLE_EQ(left_of(coarse, "99999"), left_of(keys, "99999"));  // all the weight
  for (size_t i = 0; i < coarse.size(); ++i) {
    EXPECT_GT(coarse[i].second, 0);
    if (i > 0) {
      EXPECT_LT(coarse[i - 1].first, coarse[i].first);
    }
    EXPECT_DOUBLE_EQ(left_of(coarse, coarse[i].first), left_of(keys, coarse[i].first)) << coarse[i].first;
  }
  // No run outweighs a 64th of the whole by more than its last key: the
  // heavy partition's run holds little else, every other run at most a 64th
  // and one light key (weight <= 7).
  const double total = left_of(keys, "99999");
  for (const auto& k : coarse) EXPECT_LE(k.second, total / 64 + (k.second >= 5000 ? 5000 : 7)) << k.first;
  // Fewer keys than the bound: unchanged but for the weightless.
  std::vector<std::pair<std::string, double>> few = {{"a", 1}, {"b", 0}, {"c", 2}};
  EXPECT_EQ(CoarsenSample(few, 64), (std::vector<std::pair<std::string, double>>{{"a", 1}, {"c", 2}}));
}

// The leader's sample of a tablet: its own and the other nodes' reported
// ones, within the tablet, equal keys summed, its own report left out.
TEST(NodeLoadTest, TheClusterSampleJoinsTheOtherNodesReportsWithinTheTablet) {
  constexpr uint32_t kTable = 7;
  const std::string uuid = "5b6962dd-3f90-4c93-8f61-eabfa4a803e2";
  TabletLoad own;
  own.start = AbsoluteKey(kTable, "b");
  own.end = AbsoluteKey(kTable, "m");
  own.sample.keys = {{AbsoluteKey(kTable, "c"), 2}};
  own.sample.writes = 9;
  std::map<std::string, NodeLoad> reports;
  TabletLoadReport r{uuid, "", 0, 0};
  r.sample = {{"a", 100}, {"c", 1}, {"k", 40}, {"z", 100}};  // a node whose map still has one tablet
  r.sampled_writes = 100, r.advances = 90, r.near_tail = 8;
  reports["node-2"].tablet_loads.push_back(r);
  TabletLoadReport beyond{uuid, "x", 0, 0};  // another tablet of the table, wholly outside
  beyond.sample = {{"x", 5}};
  beyond.sampled_writes = 1000;
  reports["node-2"].tablet_loads.push_back(beyond);
  TabletLoadReport other_table{"00000000-0000-0000-0000-000000000001", "", 0, 0};
  other_table.sample = {{"d", 1000}};
  reports["node-3"].tablet_loads.push_back(other_table);
  TabletLoadReport mine{uuid, "b", 0, 0};
  mine.sample = {{"c", 2}};  // the leader's own last report: its live sample counts instead
  reports["self"].tablet_loads.push_back(mine);
  size_t nodes = 0;
  const auto merged = ClusterKeySample(kTable, uuid, own, "self", reports, &nodes);
  EXPECT_EQ(nodes, 2u);
  EXPECT_EQ(merged.keys, (std::vector<std::pair<std::string, double>>{{AbsoluteKey(kTable, "c"), 3},
                                                                      {AbsoluteKey(kTable, "k"), 40}}));
  // Its writes and the other node's that reported keys inside the tablet:
  // a leader that coordinates none of an append-only tail still sees it.
  EXPECT_EQ(merged.writes, 109u);
  EXPECT_EQ(merged.advances, 90u);
  EXPECT_EQ(merged.near_tail, 8u);
  // A leader that sampled nothing itself: the others' alone.
  own.sample = {};
  EXPECT_EQ(ClusterKeySample(kTable, uuid, own, "self", reports, &nodes).keys.size(), 2u);
  EXPECT_EQ(nodes, 1u);
}

TEST(NodeLoadTest, RefusesWhatIsNoLoadReport) {
  for (const char* text : {"", "not json", "[1, 2]", "{\"bytes\": 1}", "{\"bytes\": \"x\", \"tablets\": 1, \"at_micros\": 2}",
                           "{\"bytes\": -1, \"tablets\": 1, \"at_micros\": 2}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"replica_reads_per_second\": -4}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": {}}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"table\": \"t\", \"start\": \"zz\"}]}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"start\": \"00\"}]}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"table\": \"t\", \"start\": \"00\", "
                           "\"bytes\": -5}]}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"table\": \"t\", \"start\": \"00\", "
                           "\"sample\": {}}]}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"table\": \"t\", \"start\": \"00\", "
                           "\"sample\": [[\"00\"]]}]}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"table\": \"t\", \"start\": \"00\", "
                           "\"sample\": [[\"0g\", 1]]}]}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"table\": \"t\", \"start\": \"00\", "
                           "\"sample\": [[\"00\", -1]]}]}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"table\": \"t\", \"start\": \"00\", "
                           "\"tail\": [1, 2]}]}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"table\": \"t\", \"start\": \"00\", "
                           "\"tail\": [1, -2, 3]}]}"}) {
    auto load = DecodeNodeLoad(text);
    EXPECT_EQ(load.status().code(), Status::Code::kCorruption) << text << ": " << load.status().ToString();
  }
}

}  // namespace
}  // namespace tessera::cluster
