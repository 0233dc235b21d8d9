// PlanReplicaCounts (cluster/replication_change.h): which replica an
// ALTER KEYSPACE adds or drops on each tablet, as plain values.
#include "cluster/replication_change.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tessera::cluster {
namespace {

using Hosts = std::vector<std::string>;

ReplicationFactors Simple(int factor) {
  ReplicationFactors f;
  f.simple_factor = factor;
  return f;
}

TabletReplicas Tablet(const std::string& start, Hosts replicas) {
  TabletReplicas t;
  t.start = start;
  t.replicas = std::move(replicas);
  return t;
}

std::vector<ReplicaCountNode> Nodes(const std::vector<TabletReplicas>& tablets, const Hosts& hosts,
                                    const std::string& dc = "dc1") {
  std::vector<ReplicaCountNode> nodes;
  for (const auto& h : hosts) {
    int count = 0;
    for (const auto& t : tablets) count += std::count(t.replicas.begin(), t.replicas.end(), h);
    nodes.push_back({h, dc, "rack1", true, count});
  }
  return nodes;
}

// Applies `changes` to `tablets` (as the migrations would end).
void Apply(const std::vector<ReplicaCountChange>& changes, std::vector<TabletReplicas>* tablets) {
  for (const auto& c : changes) {
    auto& r = (*tablets)[c.tablet].replicas;
    if (!c.add.empty()) r.push_back(c.add);
    if (!c.drop.empty()) r.erase(std::find(r.begin(), r.end(), c.drop));
  }
}

TEST(ReplicationChangeTest, RaisingTheFactorAddsOneReplicaPerTabletSpreadEvenly) {
  std::vector<TabletReplicas> tablets;
  const Hosts hosts = {"A", "B", "C"};
  for (int i = 0; i < 6; ++i) tablets.push_back(Tablet(std::string(1, static_cast<char>('a' + i)), {hosts[i % 3]}));
  auto nodes = Nodes(tablets, hosts);
  std::vector<std::string> problems;
  auto changes = PlanReplicaCounts(Simple(2), tablets, &nodes, &problems);
  EXPECT_TRUE(problems.empty());
  ASSERT_EQ(changes.size(), 6u);
  for (const auto& c : changes) {
    EXPECT_TRUE(c.drop.empty());
    EXPECT_NE(c.add, tablets[c.tablet].replicas[0]);  // never a node that holds one
  }
  Apply(changes, &tablets);
  std::map<std::string, int> per_node;
  for (const auto& t : tablets) {
    ASSERT_EQ(t.replicas.size(), 2u);
    for (const auto& h : t.replicas) ++per_node[h];
  }
  EXPECT_EQ(per_node, (std::map<std::string, int>{{"A", 4}, {"B", 4}, {"C", 4}}));
  // At the factor, nothing more is planned.
  auto again = Nodes(tablets, hosts);
  EXPECT_TRUE(PlanReplicaCounts(Simple(2), tablets, &again, &problems).empty());
}

TEST(ReplicationChangeTest, LoweringTheFactorDropsADownNodeFirstThenTheFullest) {
  std::vector<TabletReplicas> tablets = {Tablet("a", {"A", "B"}), Tablet("b", {"B", "C"}), Tablet("c", {"A", "B"})};
  auto nodes = Nodes(tablets, {"A", "B", "C"});
  nodes[2].alive = false;  // C is down
  std::vector<std::string> problems;
  auto changes = PlanReplicaCounts(Simple(1), tablets, &nodes, &problems);
  ASSERT_EQ(changes.size(), 3u);
  EXPECT_EQ(changes[0].drop, "B");  // B holds 3, A 2
  EXPECT_EQ(changes[1].drop, "C");  // down
  EXPECT_EQ(changes[2].drop, "A");  // B's count fell to 2 with the first drop, A's is 2 too: ties go to the first
  for (const auto& c : changes) EXPECT_TRUE(c.add.empty());
}

TEST(ReplicationChangeTest, NoLiveNodeToAddToIsAProblemAndTransitionsWait) {
  std::vector<TabletReplicas> tablets = {Tablet("a", {"A", "B"}), Tablet("b", {"A"})};
  tablets[1].transition = TabletTransition{MigrationStage::kStreaming, "A", "B"};
  auto nodes = Nodes(tablets, {"A", "B", "C"});
  nodes[2].alive = false;
  std::vector<std::string> problems;
  auto changes = PlanReplicaCounts(Simple(3), tablets, &nodes, &problems);
  EXPECT_TRUE(changes.empty());  // tablet a: only C could take it, and it is down; tablet b is moving
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("no live node"), std::string::npos) << problems[0];
}

TEST(ReplicationChangeTest, NetworkTopologyCountsEachDataCenterAndDropsUnnamedOnes) {
  std::vector<TabletReplicas> tablets = {Tablet("a", {"A", "X"})};
  auto nodes = Nodes(tablets, {"A", "B"}, "dc1");
  auto west = Nodes(tablets, {"X", "Y"}, "dc2");
  nodes.insert(nodes.end(), west.begin(), west.end());
  ReplicationFactors f;
  f.network_topology = true;
  f.per_dc = {{"dc1", 2}};  // dc2 no longer named: its replica goes, after dc1 gets its second
  std::vector<std::string> problems;
  auto changes = PlanReplicaCounts(f, tablets, &nodes, &problems);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].add, "B");
  Apply(changes, &tablets);
  nodes = Nodes(tablets, {"A", "B"}, "dc1");
  west = Nodes(tablets, {"X", "Y"}, "dc2");
  nodes.insert(nodes.end(), west.begin(), west.end());
  changes = PlanReplicaCounts(f, tablets, &nodes, &problems);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].drop, "X");
  EXPECT_EQ(changes[0].group, "dc2");
  EXPECT_TRUE(problems.empty());
}

TEST(ReplicationChangeTest, ATabletsLastReplicaIsNeverDropped) {
  std::vector<TabletReplicas> tablets = {Tablet("a", {"A"})};
  auto nodes = Nodes(tablets, {"A", "B"});
  std::vector<std::string> problems;
  EXPECT_TRUE(PlanReplicaCounts(Simple(0), tablets, &nodes, &problems).empty());
}

}  // namespace
}  // namespace tessera::cluster
