#include "cluster/routing_tokens.h"

#include <gtest/gtest.h>

#include "keys/storage_key.h"

namespace tessera::cluster {
namespace {

TabletReplicas Tablet(const std::string& start, const std::string& end, std::vector<std::string> replicas) {
  TabletReplicas t;
  t.start = start;
  t.end = end;
  t.replicas = std::move(replicas);
  return t;
}

TEST(RoutingTokensTest, EachTabletsLastTokenBelongsToItsFirstReplica) {
  const std::string q1 = EncodeToken(-100), q2 = EncodeToken(0), q3 = EncodeToken(100);
  std::vector<TabletReplicas> placement = {Tablet("", q1, {"a", "b"}), Tablet(q1, q2, {"b", "c"}),
                                           Tablet(q2, q3, {"c", "a"}), Tablet(q3, "", {"a", "b"})};
  auto ring = RingOfPlacement(placement, {"a", "b", "c"});
  EXPECT_EQ(ring["a"], (std::vector<int64_t>{-101, kMaxToken}));
  EXPECT_EQ(ring["b"], (std::vector<int64_t>{-1}));
  EXPECT_EQ(ring["c"], (std::vector<int64_t>{99}));
}

TEST(RoutingTokensTest, ACutInsideOnePartitionsTokenKeepsThatTokenOnTheLeft) {
  EXPECT_EQ(LastTokenBefore(EncodeToken(7)), 6);
  EXPECT_EQ(LastTokenBefore(EncodeToken(7) + std::string("\x01k", 2)), 7);
  EXPECT_EQ(LastTokenBefore(""), kMaxToken);
  // Two tablets ending within token 7: the second adds no range of its own.
  std::vector<TabletReplicas> placement = {Tablet("", EncodeToken(7) + "a", {"a"}),
                                           Tablet(EncodeToken(7) + "a", EncodeToken(7) + "b", {"b"}),
                                           Tablet(EncodeToken(7) + "b", "", {"c"})};
  auto ring = RingOfPlacement(placement, {"a", "b", "c"});
  EXPECT_EQ(ring["a"], (std::vector<int64_t>{7}));
  EXPECT_EQ(ring["c"], (std::vector<int64_t>{kMaxToken}));
  EXPECT_EQ(ring["b"], (std::vector<int64_t>{kMinToken}));  // no range: an empty one, as drivers want a token
}

TEST(RoutingTokensTest, NodesWithoutTabletsGetDistinctEmptyRangesAndStrangersNone) {
  std::vector<TabletReplicas> placement = {Tablet("", "", {"gone"})};
  auto ring = RingOfPlacement(placement, {"a", "b"});
  EXPECT_EQ(ring.count("gone"), 0u);
  EXPECT_EQ(ring["a"], (std::vector<int64_t>{kMinToken}));
  EXPECT_EQ(ring["b"], (std::vector<int64_t>{kMinToken + 1}));
}

}  // namespace
}  // namespace tessera::cluster
