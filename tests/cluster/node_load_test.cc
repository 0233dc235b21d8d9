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

TEST(NodeLoadTest, RefusesWhatIsNoLoadReport) {
  for (const char* text : {"", "not json", "[1, 2]", "{\"bytes\": 1}", "{\"bytes\": \"x\", \"tablets\": 1, \"at_micros\": 2}",
                           "{\"bytes\": -1, \"tablets\": 1, \"at_micros\": 2}"}) {
    auto load = DecodeNodeLoad(text);
    EXPECT_EQ(load.status().code(), Status::Code::kCorruption) << text << ": " << load.status().ToString();
  }
}

}  // namespace
}  // namespace tessera::cluster
