// The cluster layer's pure parts: replication options, consistency plans
// and the Unavailable check (Cassandra 4.1's rules), replica placement, and
// the hint store on a real RocksDB directory.
#include <filesystem>
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "cluster/hint_store.h"
#include "cluster/replication_strategy.h"
#include "cluster/tablet_placement.h"

namespace tessera::cluster {
namespace {

using L = ConsistencyLevel;

std::string Host(char c) { return std::string(15, '\0') + c; }

std::vector<ReplicaTarget> Replicas(const std::vector<std::pair<std::string, bool>>& dcs_alive) {
  std::vector<ReplicaTarget> out;
  char id = 'a';
  for (const auto& [dc, alive] : dcs_alive) out.push_back({Host(id++), dc, alive, false});
  return out;
}

TEST(ReplicationStrategyTest, ParsesSimpleAndNetworkTopology) {
  auto simple = ParseReplication({{"class", "SimpleStrategy"}, {"replication_factor", "3"}});
  ASSERT_TRUE(simple.ok());
  EXPECT_FALSE(simple->network_topology);
  EXPECT_EQ(simple->Total(), 3);
  auto nts = ParseReplication(
      {{"class", "org.apache.cassandra.locator.NetworkTopologyStrategy"}, {"dc1", "3"}, {"dc2", "2"}});
  ASSERT_TRUE(nts.ok());
  EXPECT_TRUE(nts->network_topology);
  EXPECT_EQ(nts->per_dc.at("dc2"), 2);
  EXPECT_EQ(nts->Total(), 5);
  EXPECT_FALSE(ParseReplication({{"class", "SimpleStrategy"}, {"replication_factor", "x"}}).ok());
}

TEST(ReplicationStrategyTest, BlockForFollowsTheLevel) {
  const auto three = Replicas({{"dc1", true}, {"dc1", true}, {"dc1", true}});
  auto block_for = [&](L level, bool write, const std::vector<ReplicaTarget>& r) {
    auto plan = PlanConsistency(level, r, "dc1", write);
    EXPECT_TRUE(plan.ok()) << plan.status().ToString();
    return plan.ok() ? plan->block_for : -1;
  };
  EXPECT_EQ(block_for(L::kOne, true, three), 1);
  EXPECT_EQ(block_for(L::kAny, true, three), 1);
  EXPECT_EQ(block_for(L::kTwo, false, three), 2);
  EXPECT_EQ(block_for(L::kQuorum, true, three), 2);
  EXPECT_EQ(block_for(L::kAll, false, three), 3);
  // Two data centers of 3: QUORUM counts all 6, LOCAL_QUORUM the local 3,
  // EACH_QUORUM a quorum in each.
  const auto six = Replicas({{"dc1", true}, {"dc1", true}, {"dc1", true}, {"dc2", true}, {"dc2", true}, {"dc2", true}});
  EXPECT_EQ(block_for(L::kQuorum, true, six), 4);
  EXPECT_EQ(block_for(L::kLocalQuorum, true, six), 2);
  EXPECT_EQ(block_for(L::kEachQuorum, true, six), 4);
  auto local = PlanConsistency(L::kLocalOne, six, "dc2", true);
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->counts, (std::vector<bool>{false, false, false, true, true, true}));
}

TEST(ReplicationStrategyTest, RefusesLevelsAnOperationDoesNotTake) {
  const auto three = Replicas({{"dc1", true}, {"dc1", true}, {"dc1", true}});
  auto any_read = PlanConsistency(L::kAny, three, "dc1", false);
  EXPECT_TRUE(any_read.status().IsInvalidArgument());
  EXPECT_EQ(any_read.status().message(), "ANY ConsistencyLevel is only supported for writes");
  EXPECT_TRUE(PlanConsistency(L::kEachQuorum, three, "dc1", false).status().IsInvalidArgument());
  EXPECT_TRUE(PlanConsistency(L::kSerial, three, "dc1", true).status().IsInvalidArgument());
}

TEST(ReplicationStrategyTest, UnavailableCarriesRequiredAndAlive) {
  const auto one_alive = Replicas({{"dc1", true}, {"dc1", false}, {"dc1", false}});
  auto plan = PlanConsistency(L::kQuorum, one_alive, "dc1", true);
  ASSERT_TRUE(plan.ok());
  Status s = CheckAlive(L::kQuorum, *plan, one_alive);
  ASSERT_EQ(s.code(), Status::Code::kUnavailable);
  ASSERT_NE(s.shortfall(), nullptr);
  EXPECT_EQ(s.shortfall()->consistency, static_cast<uint16_t>(L::kQuorum));
  EXPECT_EQ(s.shortfall()->first, 2);   // required
  EXPECT_EQ(s.shortfall()->second, 1);  // alive
  EXPECT_EQ(s.message(), "Cannot achieve consistency level QUORUM");
  auto one = PlanConsistency(L::kOne, one_alive, "dc1", true);
  EXPECT_TRUE(CheckAlive(L::kOne, *one, one_alive).ok());
  // EACH_QUORUM: one data center short is enough to refuse.
  const auto two_dcs = Replicas({{"dc1", true}, {"dc1", true}, {"dc2", true}, {"dc2", false}});
  auto each = PlanConsistency(L::kEachQuorum, two_dcs, "dc1", true);
  Status e = CheckAlive(L::kEachQuorum, *each, two_dcs);
  ASSERT_EQ(e.code(), Status::Code::kUnavailable);
  EXPECT_EQ(e.shortfall()->first, 2);
  EXPECT_EQ(e.shortfall()->second, 1);
}

std::vector<PlacementNode> Nodes(const std::vector<std::pair<std::string, std::string>>& dc_racks) {
  std::vector<PlacementNode> out;
  char id = 'a';
  for (const auto& [dc, rack] : dc_racks) out.push_back({Host(id++), dc, rack});
  return out;
}

TEST(TabletPlacementTest, DistinctNodesSpreadOverTablets) {
  ReplicationFactors rf2;
  rf2.simple_factor = 2;
  const auto nodes = Nodes({{"dc1", "r1"}, {"dc1", "r1"}, {"dc1", "r1"}, {"dc1", "r1"}});
  std::map<std::string, int> held;
  for (size_t tablet = 0; tablet < 8; ++tablet) {
    auto replicas = PlaceReplicas(rf2, nodes, tablet, "dc1");
    ASSERT_TRUE(replicas.ok());
    ASSERT_EQ(replicas->size(), 2u);
    EXPECT_NE((*replicas)[0], (*replicas)[1]);
    for (const auto& r : *replicas) ++held[r];
  }
  // 8 tablets x 2 replicas over 4 nodes: 4 each.
  for (const auto& [host, n] : held) EXPECT_EQ(n, 4) << host;
  EXPECT_EQ(held.size(), 4u);
}

TEST(TabletPlacementTest, RacksSpreadBeforeASecondNodeOfOneRack) {
  ReplicationFactors rf2;
  rf2.simple_factor = 2;
  const auto nodes = Nodes({{"dc1", "r1"}, {"dc1", "r1"}, {"dc1", "r2"}, {"dc1", "r2"}});
  for (size_t tablet = 0; tablet < 4; ++tablet) {
    auto replicas = PlaceReplicas(rf2, nodes, tablet, "dc1");
    ASSERT_TRUE(replicas.ok());
    std::set<std::string> racks;
    for (const auto& r : *replicas) {
      for (const auto& n : nodes) {
        if (n.host_id == r) racks.insert(n.rack);
      }
    }
    EXPECT_EQ(racks.size(), 2u) << "tablet " << tablet;
  }
}

TEST(TabletPlacementTest, NetworkTopologyPerDataCenterAndTooFewNodes) {
  auto nts = ParseReplication({{"class", "NetworkTopologyStrategy"}, {"dc1", "2"}, {"dc2", "1"}});
  ASSERT_TRUE(nts.ok());
  const auto nodes = Nodes({{"dc1", "r1"}, {"dc1", "r1"}, {"dc2", "r1"}, {"dc2", "r1"}});
  auto replicas = PlaceReplicas(*nts, nodes, 1, "dc1");
  ASSERT_TRUE(replicas.ok());
  ASSERT_EQ(replicas->size(), 3u);
  int in_dc2 = 0;
  for (const auto& r : *replicas) in_dc2 += r == Host('c') || r == Host('d');
  EXPECT_EQ(in_dc2, 1);
  ReplicationFactors rf4;
  rf4.simple_factor = 4;
  auto refused = PlaceReplicas(rf4, Nodes({{"dc1", "r1"}, {"dc1", "r1"}, {"dc1", "r1"}}), 0, "dc1");
  ASSERT_TRUE(refused.status().IsInvalidArgument());
  EXPECT_EQ(refused.status().message(), "Replication factor 4 exceeds the number of nodes 3 in dc1");
}

class HintStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera_hints_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::shared_ptr<HintStore> Open(HintLimits limits = {}) {
    auto store = HintStore::Open(dir_.string(), limits, [this] { return now_; });
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? *store : nullptr;
  }
  static WriteSet Writes(const std::string& key, const std::string& value) {
    WriteSet ws;
    ws.Merge(key, value);
    return ws;
  }

  std::filesystem::path dir_;
  int64_t now_ = 1'000'000;
};

TEST_F(HintStoreTest, KeepsHintsPerReplicaOldestFirstAcrossReopen) {
  const std::string table(16, 'T');
  {
    auto store = Open();
    ASSERT_TRUE(store->Store(Host('a'), table, Writes("k1", "v1")).ok());
    now_ += 10;
    ASSERT_TRUE(store->Store(Host('b'), table, Writes("k2", "v2")).ok());
    now_ += 10;
    WriteSet two = Writes("k3", "v3");
    two.DeleteRange("r1", "r2");
    ASSERT_TRUE(store->Store(Host('a'), table, two).ok());
    EXPECT_EQ(store->pending(), 3u);
    EXPECT_EQ(store->stored(), 3u);
    EXPECT_EQ(store->Targets(), (std::vector<std::string>{Host('a'), Host('b')}));
  }
  auto store = Open();  // what a restarted node finds
  EXPECT_EQ(store->pending(), 3u);
  auto hints = store->Oldest(Host('a'), 10);
  ASSERT_TRUE(hints.ok());
  ASSERT_EQ(hints->size(), 2u);
  EXPECT_EQ((*hints)[0].table_uuid, table);
  EXPECT_EQ((*hints)[0].writes.ops()[0].key, "k1");
  EXPECT_EQ((*hints)[0].created_micros, 1'000'000);
  ASSERT_EQ((*hints)[1].writes.size(), 2u);
  EXPECT_EQ((*hints)[1].writes.ops()[1].kind, WriteSet::Op::kDeleteRange);
  EXPECT_EQ((*hints)[1].writes.ops()[1].value, "r2");
  ASSERT_TRUE(store->Remove(Host('a'), (*hints)[0], /*delivered=*/true).ok());
  EXPECT_EQ(store->pending(), 2u);
  EXPECT_EQ(store->delivered(), 1u);
  EXPECT_EQ(store->Oldest(Host('a'), 10)->size(), 1u);
  EXPECT_EQ(store->Oldest(Host('c'), 10)->size(), 0u);
}

TEST_F(HintStoreTest, BoundsSizePerReplicaAndAge) {
  HintLimits limits;
  limits.max_bytes_per_node = 100;
  limits.max_age_micros = 1000;
  auto store = Open(limits);
  const std::string table(16, 'T');
  ASSERT_TRUE(store->Store(Host('a'), table, Writes("k", std::string(50, 'x'))).ok());
  Status over = store->Store(Host('a'), table, Writes("k", std::string(50, 'y')));
  EXPECT_EQ(over.code(), Status::Code::kBusy);
  EXPECT_EQ(store->dropped(), 1u);
  EXPECT_TRUE(store->Store(Host('b'), table, Writes("k", std::string(50, 'z'))).ok());  // its own bound
  auto hints = store->Oldest(Host('a'), 10);
  ASSERT_EQ(hints->size(), 1u);
  EXPECT_FALSE(store->Expired((*hints)[0]));
  now_ += 1001;
  EXPECT_TRUE(store->Expired((*hints)[0]));
}

}  // namespace
}  // namespace tessera::cluster
