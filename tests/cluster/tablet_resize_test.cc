// The balancer leader's choice among the nodes' split and merge proposals
// (cluster/tablet_resize.h), and the proposals' etcd encoding.
#include "cluster/tablet_resize.h"

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tessera::cluster {
namespace {

using Kind = ResizeProposal::Kind;

const std::string kTable = "6ab0c7a2-4c1d-4f0e-9b1a-0123456789ab";

PlacementResizeProposal Split(const std::string& host, const std::string& start, const std::string& end,
                              std::optional<std::string> position = std::nullopt) {
  PlacementResizeProposal p;
  p.host = host;
  p.table_uuid = kTable;
  p.kind = Kind::kSplit;
  p.start = start;
  p.end = end;
  p.position = std::move(position);
  p.reason = "load " + host;
  return p;
}

PlacementResizeProposal Merge(const std::string& host, const std::string& start, const std::string& boundary,
                              const std::string& end) {
  PlacementResizeProposal p;
  p.host = host;
  p.table_uuid = kTable;
  p.kind = Kind::kMerge;
  p.start = start;
  p.boundary = boundary;
  p.end = end;
  p.reason = "small and cold";
  return p;
}

std::map<std::string, std::vector<TabletReplicas>> Placement(std::vector<TabletReplicas> tablets) {
  return {{kTable, std::move(tablets)}};
}

const std::vector<std::string> kABC = {"A", "B", "C"};

TEST(TabletResizeTest, SeveralNodesProposingSplitsOfOneTabletGiveOneSplit) {
  auto placement = Placement({{"", "m", kABC, {}}, {"m", "", kABC, {}}});
  // Three nodes saw the first tablet hot and cut it at nearby keys; one saw it only large (median).
  std::vector<PlacementResizeProposal> proposals = {Split("C", "", "m", "f"), Split("A", "", "m"),
                                                    Split("B", "", "m", "e"), Split("B", "m", "", "q")};
  auto decided = DecideResizes(placement, proposals);
  ASSERT_EQ(decided.size(), 2u);
  // A load split (a sampled cut) beats the median one; of the two cuts, the lowest host id's.
  EXPECT_EQ(decided[0].host, "B");
  EXPECT_EQ(decided[0].start, "");
  EXPECT_EQ(decided[0].position, "e");
  EXPECT_EQ(decided[1].start, "m");
  EXPECT_EQ(decided[1].position, "q");
}

TEST(TabletResizeTest, StaleOrInvalidSplitsAreDropped) {
  TabletReplicas moving{"m", "", kABC, TabletTransition{}};
  auto placement = Placement({{"", "g", kABC, {}}, {"g", "m", kABC, {}}, moving});
  std::vector<PlacementResizeProposal> proposals = {
      Split("A", "", "m", "c"),   // bounds of a tablet split since
      Split("A", "m", "", "x"),   // a tablet in transition
      Split("B", "", "g", "g"),   // a cut on the boundary, not inside
      Split("C", "g", "m", "a"),  // a cut outside
  };
  EXPECT_TRUE(DecideResizes(placement, proposals).empty());
  auto other_table = Split("A", "", "g", "c");
  other_table.table_uuid = "another";
  EXPECT_TRUE(DecideResizes(placement, {other_table}).empty());
}

TEST(TabletResizeTest, MergesNeedTheSamePairTheSameReplicasAndNoSplitOfEither) {
  auto placement = Placement({{"", "d", kABC, {}},
                              {"d", "h", kABC, {}},
                              {"h", "p", {"A", "B", "D"}, {}},
                              {"p", "t", kABC, {}},
                              {"t", "", {"C", "B", "A"}, {}}});
  std::vector<PlacementResizeProposal> proposals = {
      Merge("A", "", "d", "h"),   // stands
      Merge("B", "", "d", "h"),   // the same pair again: one merge
      Merge("A", "d", "h", "p"),  // different replica sets: would move data
      Merge("C", "p", "t", ""),   // the same set in another order: stands
      Merge("D", "", "d", "h"),   // a node that stores neither tablet
  };
  auto decided = DecideResizes(placement, proposals);
  ASSERT_EQ(decided.size(), 2u);
  EXPECT_EQ(decided[0].start, "");
  EXPECT_EQ(decided[0].host, "A");
  EXPECT_EQ(decided[1].start, "p");

  // A node that wants the right tablet split outweighs one that sees the pair cold.
  proposals.push_back(Split("B", "t", "", "w"));
  decided = DecideResizes(placement, proposals);
  ASSERT_EQ(decided.size(), 2u);
  EXPECT_EQ(decided[0].kind, Kind::kMerge);
  EXPECT_EQ(decided[0].start, "");
  EXPECT_EQ(decided[1].kind, Kind::kSplit);
  EXPECT_EQ(decided[1].start, "t");

  // A node that stores neither tablet sees them empty: its merge alone is nothing.
  EXPECT_TRUE(DecideResizes(placement, {Merge("D", "", "d", "h")}).empty());
  // Bounds that no longer match: nothing.
  EXPECT_TRUE(DecideResizes(placement, {Merge("A", "", "d", "p")}).empty());
  EXPECT_TRUE(DecideResizes(placement, {Merge("A", "", "c", "h")}).empty());
}

TEST(TabletResizeTest, ProposalsRoundTripThroughTheirEtcdValue) {
  std::vector<PlacementResizeProposal> proposals = {Split("A", std::string("\x00\x01", 2), "\xff", "\x10"),
                                                    Split("A", "b", ""), Merge("A", "", "d", "")};
  auto decoded = DecodeResizeProposals(EncodeResizeProposals(proposals), "A");
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  ASSERT_EQ(decoded->size(), proposals.size());
  for (size_t i = 0; i < proposals.size(); ++i) {
    EXPECT_EQ((*decoded)[i], proposals[i]) << i;
    EXPECT_EQ((*decoded)[i].reason, proposals[i].reason) << i;
  }
  EXPECT_FALSE((*decoded)[1].position.has_value());
  EXPECT_TRUE(DecodeResizeProposals("{\"version\": 1}", "A").status().code() == Status::Code::kCorruption);
  EXPECT_TRUE(DecodeResizeProposals("not json", "A").status().code() == Status::Code::kCorruption);
  EXPECT_TRUE(DecodeResizeProposals(R"({"proposals": [{"table": "t", "kind": "grow"}]})", "A").status().code() == Status::Code::kCorruption);
  EXPECT_TRUE(
      DecodeResizeProposals(R"({"proposals": [{"table": "t", "kind": "split", "start": "zz"}]})", "A")
          .status()
          .code() == Status::Code::kCorruption);
}

}  // namespace
}  // namespace tessera::cluster
