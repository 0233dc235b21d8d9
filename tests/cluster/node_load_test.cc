// The load report's etcd value (cluster/node_load.h): its frozen fields and
// the refusal of anything else.
#include "cluster/node_load.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

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

TEST(NodeLoadTest, RefusesWhatIsNoLoadReport) {
  for (const char* text : {"", "not json", "[1, 2]", "{\"bytes\": 1}", "{\"bytes\": \"x\", \"tablets\": 1, \"at_micros\": 2}",
                           "{\"bytes\": -1, \"tablets\": 1, \"at_micros\": 2}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"replica_reads_per_second\": -4}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": {}}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"table\": \"t\", \"start\": \"zz\"}]}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"start\": \"00\"}]}",
                           "{\"bytes\": 1, \"tablets\": 1, \"at_micros\": 2, \"tablet_loads\": [{\"table\": \"t\", \"start\": \"00\", "
                           "\"bytes\": -5}]}"}) {
    auto load = DecodeNodeLoad(text);
    EXPECT_EQ(load.status().code(), Status::Code::kCorruption) << text << ": " << load.status().ToString();
  }
}

}  // namespace
}  // namespace tessera::cluster
