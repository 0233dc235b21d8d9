// The placement balancer's rules (cluster/placement_plan.h), one by one, and
// a hot tablet followed through its splits and moves to a spread load.
#include "cluster/placement_plan.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tessera::cluster {
namespace {

using Kind = PlacementDecision::Kind;

std::vector<NodePlacementLoad> Nodes(const std::vector<TabletPlacementLoad>& tablets, int n) {
  std::vector<NodePlacementLoad> nodes;
  for (int i = 0; i < n; ++i) {
    std::string host(1, static_cast<char>('A' + i));
    int count = 0;
    for (const auto& t : tablets) count += std::count(t.replicas.begin(), t.replicas.end(), host);
    nodes.push_back({host, "127.0.0." + std::to_string(i + 1), count, 0});
  }
  NodeLoads(tablets, &nodes);
  return nodes;
}

TabletPlacementLoad Tablet(const std::string& start, const std::string& host, double load, uint64_t mib = 0) {
  return {start, {host}, load, mib << 20};
}

// Plans and applies moves until the plan rests (at most 20 steps); returns
// how often each tablet moved.
std::map<std::string, int> Settle(std::vector<TabletPlacementLoad>* tablets, int nodes, int* moves) {
  std::map<std::string, int> moved;
  *moves = 0;
  for (int step = 0; step < 20; ++step) {
    auto d = PlanPlacement("dc1", Nodes(*tablets, nodes), *tablets, {}, true);
    if (d.kind != Kind::kMove) break;
    auto& t = (*tablets)[d.tablet];
    std::replace(t.replicas.begin(), t.replicas.end(), d.from, d.to);
    ++moved[t.start];
    ++*moves;
  }
  return moved;
}

TEST(PlacementPlanTest, CountsComeFirstAndMoveTheReplicaThatKeepsLoadsClosest) {
  // A holds 4 replicas serving 400 requests/s, C none: a count move to C, of
  // the replica that leaves the higher of the two loads lowest (300 or 100
  // both leave 300: the colder).
  std::vector<TabletPlacementLoad> tablets = {Tablet("a", "A", 0), Tablet("b", "A", 300), Tablet("c", "A", 100),
                                              Tablet("d", "A", 0), Tablet("e", "B", 50), Tablet("f", "B", 50)};
  auto nodes = Nodes(tablets, 3);
  auto d = PlanPlacement("dc1", nodes, tablets, {}, /*loads_current=*/false);
  ASSERT_EQ(d.kind, Kind::kMove) << d.reason;
  EXPECT_EQ(d.from, "A");
  EXPECT_EQ(d.to, "C");
  EXPECT_EQ(tablets[d.tablet].start, "c");
  EXPECT_NE(d.reason.find("balance: 127.0.0.1 holds 4 tablet replicas"), std::string::npos) << d.reason;
}

// Seen in test_hot_tablet_spread: A holds 3 replicas (127, 128 and 0
// requests/s), B one (126), C two (109). Moving the 127 to B leaves the pair's
// peak at 253, the cold one at 255: a gain under min_load_gain, for which B
// would have become the busiest node. The count move takes the cold one.
TEST(PlacementPlanTest, ACountMoveForASmallLoadGainMovesTheColdReplica) {
  std::vector<TabletPlacementLoad> tablets = {Tablet("a", "A", 127), Tablet("b", "A", 128), Tablet("c", "A", 0),
                                              Tablet("d", "B", 126), Tablet("e", "C", 109), Tablet("f", "C", 0)};
  auto d = PlanPlacement("dc1", Nodes(tablets, 3), tablets, {}, true);
  ASSERT_EQ(d.kind, Kind::kMove) << d.reason;
  EXPECT_EQ(d.from, "A");
  EXPECT_EQ(d.to, "B");
  EXPECT_EQ(tablets[d.tablet].start, "c") << d.reason;
}

// The balancer plans on while moves are in flight: a tablet in transition
// counts where it is going and is never chosen again.
TEST(PlacementPlanTest, ATabletInTransitionIsNeverChosen) {
  std::vector<TabletPlacementLoad> tablets = {Tablet("a", "A", 0), Tablet("b", "A", 300), Tablet("c", "A", 100),
                                              Tablet("d", "A", 0), Tablet("e", "B", 50), Tablet("f", "B", 50)};
  tablets[2].moving = true;  // "c", the count rule's first pick
  auto d = PlanPlacement("dc1", Nodes(tablets, 3), tablets, {}, false);
  ASSERT_EQ(d.kind, Kind::kMove) << d.reason;
  EXPECT_NE(tablets[d.tablet].start, "c");
  EXPECT_EQ(d.from, "A");
  for (auto& t : tablets) t.moving = t.replicas[0] == "A";
  EXPECT_EQ(PlanPlacement("dc1", Nodes(tablets, 3), tablets, {}, false).kind, Kind::kNone);
}

TEST(PlacementPlanTest, LoadRulesWaitForCurrentLoads) {
  std::vector<TabletPlacementLoad> tablets = {Tablet("a", "A", 400), Tablet("b", "A", 200), Tablet("c", "B", 0),
                                              Tablet("d", "C", 0)};
  auto nodes = Nodes(tablets, 3);
  EXPECT_EQ(PlanPlacement("dc1", nodes, tablets, {}, false).kind, Kind::kNone);
  auto d = PlanPlacement("dc1", nodes, tablets, {}, true);
  ASSERT_EQ(d.kind, Kind::kMove) << d.reason;
  EXPECT_EQ(tablets[d.tablet].start, "b");  // 600 -> 400 | 200; moving the 400 would leave 400 too, with more moved
  EXPECT_EQ(d.from, "A");
  EXPECT_NE(d.reason.find("load: 127.0.0.1 serves 600 requests/s"), std::string::npos) << d.reason;
}

TEST(PlacementPlanTest, ASingleTabletHotterThanTheExcessIsSplitNotMoved) {
  std::vector<TabletPlacementLoad> tablets = {Tablet("a", "A", 0), Tablet("b", "A", 400), Tablet("c", "B", 0),
                                              Tablet("d", "C", 0)};
  auto nodes = Nodes(tablets, 3);
  auto d = PlanPlacement("dc1", nodes, tablets, {}, true);
  ASSERT_EQ(d.kind, Kind::kSplit) << d.reason;
  EXPECT_EQ(tablets[d.tablet].start, "b");
  EXPECT_EQ(d.from, "A");
  // The mean is 133; B and C serve nothing: the piece to cut off is what
  // one of them lacks to the mean, a third of the 400.
  EXPECT_NEAR(d.split_share, 1.0 / 3, 1e-9);
  EXPECT_NE(d.reason.find("a piece of 133 can be placed apart"), std::string::npos) << d.reason;
  // The piece is at most the excess: A at 400 of a mean of 250 (B 0, C 350)
  // gives off 150 of its 400, not the 250 B lacks.
  std::vector<TabletPlacementLoad> near = {Tablet("b", "A", 400), Tablet("c", "B", 0), Tablet("d", "C", 350)};
  d = PlanPlacement("dc1", Nodes(near, 3), near, {}, true);
  ASSERT_EQ(d.kind, Kind::kSplit) << d.reason;
  EXPECT_NEAR(d.split_share, 150.0 / 400, 1e-9);
  // And the least busy node's lack, when that is less: A at 300 of a mean of
  // 233 (B and C 200 each) gives off 33.
  near = {Tablet("b", "A", 300), Tablet("c", "B", 200), Tablet("d", "C", 200)};
  d = PlanPlacement("dc1", Nodes(near, 3), near, {}, true);
  ASSERT_EQ(d.kind, Kind::kSplit) << d.reason;
  EXPECT_NEAR(d.split_share, (700.0 / 3 - 200) / 300, 1e-9);
}

TEST(PlacementPlanTest, BalancedOrQuietClustersAreLeftAlone) {
  std::vector<TabletPlacementLoad> even = {Tablet("a", "A", 100), Tablet("b", "B", 110), Tablet("c", "C", 90)};
  EXPECT_EQ(PlanPlacement("dc1", Nodes(even, 3), even, {}, true).kind, Kind::kNone);
  // 3x the mean, but 10 requests/s: noise.
  std::vector<TabletPlacementLoad> quiet = {Tablet("a", "A", 15), Tablet("b", "B", 0), Tablet("c", "C", 0)};
  EXPECT_EQ(PlanPlacement("dc1", Nodes(quiet, 3), quiet, {}, true).kind, Kind::kNone);
}

TEST(PlacementPlanTest, ALoadMoveThatCountsWouldUndoIsRefused) {
  // Equal counts; A's load is spread over four warm tablets, none of them the
  // excess alone: a move would leave A 3, C 5 (rule 1 would move one back).
  std::vector<TabletPlacementLoad> tablets;
  for (const char* h : {"A", "B", "C"}) {
    for (int i = 0; i < 4; ++i) tablets.push_back(Tablet(std::string(h) + std::to_string(i), h, *h == 'A' ? 100 : 0));
  }
  auto d = PlanPlacement("dc1", Nodes(tablets, 3), tablets, {}, true);
  EXPECT_EQ(d.kind, Kind::kRefusal) << d.reason;
  EXPECT_NE(d.reason.find("without unbalancing tablet counts"), std::string::npos) << d.reason;
}

TEST(PlacementPlanTest, BytesAreBalancedWithEqualCountsByAMoveAndACountMoveBack) {
  // Two tablets on every node; A's are 100 MiB each, the others 10 MiB:
  // A stores 200 MiB against a mean of 80.
  std::vector<TabletPlacementLoad> tablets = {Tablet("a1", "A", 0, 100), Tablet("a2", "A", 0, 100),
                                              Tablet("b1", "B", 0, 10),  Tablet("b2", "B", 0, 10),
                                              Tablet("c1", "C", 0, 10),  Tablet("c2", "C", 0, 10)};
  // Not while reports may predate the last change.
  EXPECT_EQ(PlanPlacement("dc1", Nodes(tablets, 3), tablets, {}, false).kind, Kind::kNone);
  auto d = PlanPlacement("dc1", Nodes(tablets, 3), tablets, {}, true);
  ASSERT_EQ(d.kind, Kind::kMove) << d.reason;
  EXPECT_EQ(d.from, "A");
  EXPECT_EQ(tablets[d.tablet].start.substr(0, 1), "a");
  EXPECT_NE(d.reason.find("bytes: 127.0.0.1 stores 200.0 MiB"), std::string::npos) << d.reason;
  int moves = 0;
  auto moved = Settle(&tablets, 3, &moves);
  EXPECT_EQ(moves, 2);  // the big replica over, a small one back: a swap
  for (const auto& [start, n] : moved) EXPECT_EQ(n, 1) << start << " moved back and forth";
  auto nodes = Nodes(tablets, 3);
  for (const auto& n : nodes) {
    EXPECT_EQ(n.tablets, 2) << n.address;
    EXPECT_LE(n.bytes, uint64_t{110} << 20) << n.address;
  }
}

TEST(PlacementPlanTest, SmallByteDifferencesAndLoadedTargetsAreLeftAlone) {
  // 3 x the mean, but 40 MiB above it: under min_bytes.
  std::vector<TabletPlacementLoad> small = {Tablet("a", "A", 0, 60), Tablet("b", "B", 0, 0), Tablet("c", "C", 0, 0)};
  EXPECT_EQ(PlanPlacement("dc1", Nodes(small, 3), small, {}, true).kind, Kind::kNone);
  // A's hot replica is the one whose move would even bytes best, but B or C
  // would then serve 300 requests/s against a mean of 100: the bytes rule
  // moves the cold, bigger one instead.
  std::vector<TabletPlacementLoad> mixed = {Tablet("hot", "A", 300, 90), Tablet("big", "A", 0, 150),
                                            Tablet("b", "B", 0, 10), Tablet("b2", "B", 0, 0),
                                            Tablet("c", "C", 0, 10), Tablet("c2", "C", 0, 0)};
  auto d = PlanPlacement("dc1", Nodes(mixed, 3), mixed, {}, true);
  ASSERT_EQ(d.kind, Kind::kMove) << d.reason;
  EXPECT_EQ(mixed[d.tablet].start, "big") << d.reason;
  EXPECT_EQ(d.reason.rfind("bytes:", 0), 0u) << d.reason;
}

TEST(PlacementPlanTest, CountMovesPreferSmallReplicasToTheLargerNode) {
  // A holds 4, C none; C already stores more than A would after any move of a
  // big one: the count move takes a small replica.
  std::vector<TabletPlacementLoad> tablets = {Tablet("a1", "A", 0, 100), Tablet("a2", "A", 0, 1),
                                              Tablet("a3", "A", 0, 100), Tablet("a4", "A", 0, 100),
                                              Tablet("b1", "B", 0, 50),  Tablet("b2", "B", 0, 50),
                                              Tablet("c1", "C", 0, 300)};
  tablets.back().replicas = {"C"};
  auto d = PlanPlacement("dc1", Nodes(tablets, 3), tablets, {}, false);
  ASSERT_EQ(d.kind, Kind::kMove) << d.reason;
  EXPECT_EQ(d.from, "A");
  EXPECT_EQ(tablets[d.tablet].start, "a2");
}

// Applies decisions to a hot tablet of 600 requests/s spread uniformly over
// its keys (a split cuts off its split_share) until the plan rests: every
// node then serves under load_max_over_mean (1.25x) the mean (here exactly
// the mean), after two splits and two moves (halves alone took 4 splits and
// 3 moves, and rested at 1.125x), and nothing moves back and forth.
TEST(PlacementPlanTest, AHotTabletIsSplitAndSpreadUntilNoNodeServesOneAndAQuarterTimesTheMean) {
  std::vector<TabletPlacementLoad> tablets = {Tablet("a", "A", 0), Tablet("h", "B", 600), Tablet("z", "C", 0)};
  int splits = 0, moves = 0;
  std::map<std::string, int> moved;
  for (int step = 0; step < 40; ++step) {
    auto nodes = Nodes(tablets, 3);
    auto d = PlanPlacement("dc1", nodes, tablets, {}, true);
    if (d.kind == Kind::kNone || d.kind == Kind::kRefusal) break;
    TabletPlacementLoad& t = tablets[d.tablet];
    if (d.kind == Kind::kSplit) {
      ++splits;
      const double piece = t.load * d.split_share;
      t.load -= piece;
      tablets.push_back({t.start + std::to_string(step), t.replicas, piece});
    } else {
      ++moves;
      ++moved[t.start];
      std::replace(t.replicas.begin(), t.replicas.end(), d.from, d.to);
    }
  }
  auto nodes = Nodes(tablets, 3);
  double mean = 0, max = 0;
  for (const auto& n : nodes) {
    mean += n.load / 3;
    max = std::max(max, n.load);
  }
  EXPECT_LT(max, 1.25 * mean);
  EXPECT_EQ(splits, 2);
  EXPECT_LE(splits + moves, 4);
  for (const auto& [start, n] : moved) EXPECT_LE(n, 2) << start << " moved back and forth";
  EXPECT_EQ(PlanPlacement("dc1", nodes, tablets, {}, true).kind, Kind::kNone);
}

}  // namespace
}  // namespace tessera::cluster
