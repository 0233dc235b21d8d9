// EtcdClient, EtcdWatch and TabletPlacements against a real etcd (Debian etcd-server) started
// on free loopback ports for this suite and stopped by its pid.
#include "cluster/etcd_client.h"
#include "auth/auth_service.h"
#include "cluster/etcd_auth_store.h"
#include "cluster/node_record.h"
#include "cluster/tablet_resize.h"
#include "cluster/tablet_placement.h"
#include "common/uuid.h"
#include "keys/storage_key.h"
#include "tests/cluster/local_etcd.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

namespace tessera::cluster {
namespace {

class EtcdClientTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    etcd_ = new tessera::testing::LocalEtcd;
    ASSERT_TRUE(etcd_->Start(std::filesystem::temp_directory_path() /
                             ("tessera_etcd_test_" + std::to_string(::getpid()))));
    endpoint_ = etcd_->endpoint();
  }

  static void TearDownTestSuite() {
    delete etcd_;
    etcd_ = nullptr;
  }

  void SetUp() override {
    client_ = std::make_unique<EtcdClient>(endpoint_);
    prefix_ = std::string("/test/") + ::testing::UnitTest::GetInstance()->current_test_info()->name() + "/";
  }

  static inline tessera::testing::LocalEtcd* etcd_ = nullptr;
  static inline std::string endpoint_;
  std::unique_ptr<EtcdClient> client_;
  std::string prefix_;
};

TEST_F(EtcdClientTest, PutRangeAndDeleteKeepBytesAndKeyOrder) {
  const std::string binary_value("v\0\xff\x01", 4);
  ASSERT_TRUE(client_->Put(prefix_ + "b", "2").ok());
  ASSERT_TRUE(client_->Put(prefix_ + "a", binary_value).ok());
  ASSERT_TRUE(client_->Put(prefix_ + std::string("c\xff", 2), "3").ok());
  auto range = client_->Range(prefix_, EtcdPrefixEnd(prefix_));
  ASSERT_TRUE(range.ok()) << range.status().ToString();
  ASSERT_EQ(range->kvs.size(), 3u);
  EXPECT_EQ(range->kvs[0].key, prefix_ + "a");
  EXPECT_EQ(range->kvs[0].value, binary_value);
  EXPECT_EQ(range->kvs[2].key, prefix_ + std::string("c\xff", 2));
  EXPECT_GT(range->kvs[0].create_revision, 0);
  EXPECT_GE(range->revision, range->kvs[2].mod_revision);
  auto one = client_->Range(prefix_ + "b");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->kvs.size(), 1u);
  EXPECT_EQ(one->kvs[0].value, "2");
  auto deleted = client_->Delete(prefix_, EtcdPrefixEnd(prefix_));
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(*deleted, 3);
  EXPECT_TRUE(client_->Range(prefix_, EtcdPrefixEnd(prefix_))->kvs.empty());
}

TEST_F(EtcdClientTest, TxnCreatesOnlyWhenAbsentAndReadsOnFailure) {
  const std::string key = prefix_ + "lock";
  EtcdCompare absent{key, EtcdCompare::Target::kCreateRevision, EtcdCompare::Result::kEqual, 0, {}};
  auto first = client_->Txn({absent}, {EtcdOp::Put(key, "node-1")}, {EtcdOp::Range(key)});
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(first->succeeded);
  auto second = client_->Txn({absent}, {EtcdOp::Put(key, "node-2")}, {EtcdOp::Range(key)});
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->succeeded);
  ASSERT_EQ(second->ranges.size(), 1u);
  ASSERT_EQ(second->ranges[0].size(), 1u);
  EXPECT_EQ(second->ranges[0][0].value, "node-1");
}

TEST_F(EtcdClientTest, TxnFencedByModRevisionFailsAfterAnotherWrite) {
  const std::string key = prefix_ + "head";
  ASSERT_TRUE(client_->Put(key, "1").ok());
  const int64_t seen = client_->Range(key)->kvs.at(0).mod_revision;
  ASSERT_TRUE(client_->Put(key, "1b").ok());  // someone else moved it
  EtcdCompare unchanged{key, EtcdCompare::Target::kModRevision, EtcdCompare::Result::kEqual, seen, {}};
  auto txn = client_->Txn({unchanged}, {EtcdOp::Put(key, "2")});
  ASSERT_TRUE(txn.ok());
  EXPECT_FALSE(txn->succeeded);
  EXPECT_EQ(client_->Range(key)->kvs.at(0).value, "1b");
}

TEST_F(EtcdClientTest, KeyBoundToALeaseGoesWhenTheLeaseExpires) {
  auto lease = client_->LeaseGrant(2);
  ASSERT_TRUE(lease.ok()) << lease.status().ToString();
  const std::string key = prefix_ + "alive";
  ASSERT_TRUE(client_->Put(key, "", *lease).ok());
  EXPECT_EQ(client_->Range(key)->kvs.at(0).lease, *lease);
  auto ttl = client_->LeaseKeepAlive(*lease);
  ASSERT_TRUE(ttl.ok());
  EXPECT_GT(*ttl, 0);
  const auto start = std::chrono::steady_clock::now();
  while (!client_->Range(key)->kvs.empty() && std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(client_->Range(key)->kvs.empty());
  EXPECT_TRUE(client_->LeaseKeepAlive(*lease).status().IsNotFound());
}

TEST_F(EtcdClientTest, RevokingALeaseDeletesItsKeysAtOnce) {
  auto lease = client_->LeaseGrant(60);
  ASSERT_TRUE(lease.ok());
  ASSERT_TRUE(client_->Put(prefix_ + "k", "v", *lease).ok());
  ASSERT_TRUE(client_->LeaseRevoke(*lease).ok());
  EXPECT_TRUE(client_->Range(prefix_ + "k")->kvs.empty());
}

TEST_F(EtcdClientTest, WatchDeliversEveryChangeFromItsStartRevisionInOrder) {
  auto start = client_->Put(prefix_ + "0", "before");  // before the watch, at its start revision
  ASSERT_TRUE(start.ok());
  std::mutex mu;
  std::condition_variable cv;
  std::vector<EtcdWatchEvent> seen;
  EtcdWatch watch(endpoint_, prefix_, EtcdPrefixEnd(prefix_), *start, [&](const std::vector<EtcdWatchEvent>& batch, int64_t) {
    std::lock_guard<std::mutex> lock(mu);
    seen.insert(seen.end(), batch.begin(), batch.end());
    cv.notify_all();
  });
  watch.Start();
  ASSERT_TRUE(client_->Put(prefix_ + "1", "one").ok());
  ASSERT_TRUE(client_->Delete(prefix_ + "0").ok());
  ASSERT_TRUE(client_->Put("/elsewhere/x", "not watched").ok());
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_for(lock, std::chrono::seconds(10), [&] { return seen.size() >= 3; });
    ASSERT_EQ(seen.size(), 3u);
    EXPECT_EQ(seen[0].kv.value, "before");
    EXPECT_EQ(seen[1].kv.key, prefix_ + "1");
    EXPECT_EQ(seen[1].type, EtcdWatchEvent::Type::kPut);
    EXPECT_EQ(seen[2].kv.key, prefix_ + "0");
    EXPECT_EQ(seen[2].type, EtcdWatchEvent::Type::kDelete);
    EXPECT_LT(seen[0].kv.mod_revision, seen[1].kv.mod_revision);
  }
  const auto stop = std::chrono::steady_clock::now();
  watch.Stop();  // an idle stream: Stop ends it without waiting for data
  EXPECT_LT(std::chrono::steady_clock::now() - stop, std::chrono::seconds(2));
}

TEST_F(EtcdClientTest, AnUnreachableEtcdIsAnIOError) {
  EtcdClient nowhere("http://127.0.0.1:" + std::to_string(tessera::testing::FreeLoopbackPorts().first), 500);
  auto r = nowhere.Put("k", "v");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kIOError) << r.status().ToString();
}

TEST(EtcdPrefixEndTest, IncrementsTheLastByteBelow0xff) {
  EXPECT_EQ(EtcdPrefixEnd("/a/"), "/a0");
  EXPECT_EQ(EtcdPrefixEnd(std::string("a\xff", 2)), "b");
  EXPECT_EQ(EtcdPrefixEnd(std::string("\xff", 1)), std::string(1, '\0'));
}

}  // namespace
}  // namespace tessera::cluster

namespace tessera::cluster {
namespace {

// TabletPlacements against the same etcd: created once whoever asks first,
// split and merged in fenced transactions, a merge across replica sets refused.
std::vector<TabletReplicas> TwoTablets() {
  const std::string a(16, 'a'), b(16, 'b');
  return {{"", "m", {a, b}}, {"m", "", {b, a}}};
}

TEST_F(EtcdClientTest, PlacementIsCreatedOnceAndTheFirstCreatorWins) {
  const std::string uuid(16, '\x01');
  TabletPlacements first(client_.get()), second(client_.get());
  int made = 0;
  auto p1 = first.Get(uuid, [&]() -> Result<std::vector<TabletReplicas>> { ++made; return TwoTablets(); });
  ASSERT_TRUE(p1.ok()) << p1.status().ToString();
  auto p2 = second.Get(uuid, [&]() -> Result<std::vector<TabletReplicas>> {
    ++made;
    return std::vector<TabletReplicas>{{"", "", {std::string(16, 'z')}}};
  });
  ASSERT_TRUE(p2.ok());
  EXPECT_EQ(made, 1);  // the second found the first's in etcd
  ASSERT_EQ((*p2)->size(), 2u);
  EXPECT_EQ((**p2)[1].start, "m");
  EXPECT_EQ((**p2)[1].replicas, TwoTablets()[1].replicas);
}

TEST_F(EtcdClientTest, PlacementSplitsKeepReplicasAndMergesOnlyEqualReplicaSets) {
  const std::string uuid(16, '\x02');
  TabletPlacements node1(client_.get()), node2(client_.get());
  ASSERT_TRUE(node1.Get(uuid, [] { return Result<std::vector<TabletReplicas>>(TwoTablets()); }).ok());
  ASSERT_TRUE(node2.Get(uuid, [] { return Result<std::vector<TabletReplicas>>(TwoTablets()); }).ok());
  // Two nodes split different tablets from stale caches: both land.
  EXPECT_TRUE(*node1.RecordSplit(uuid, "f"));
  EXPECT_TRUE(*node2.RecordSplit(uuid, "t"));
  EXPECT_FALSE(*node2.RecordSplit(uuid, "f"));  // already there
  auto now = node2.Cached(uuid);
  ASSERT_EQ(now->size(), 4u);
  EXPECT_EQ((*now)[1].start, "f");
  EXPECT_EQ((*now)[1].replicas, TwoTablets()[0].replicas);  // a split keeps them
  EXPECT_EQ((*now)[3].start, "t");
  // Joining across the original boundary would move data.
  auto across = node1.RecordMerge(uuid, "m");
  ASSERT_TRUE(across.status().IsInvalidArgument()) << across.status().ToString();
  EXPECT_TRUE(*node1.RecordMerge(uuid, "f"));
  EXPECT_FALSE(*node2.RecordMerge(uuid, "f"));  // already joined
  EXPECT_EQ(node2.Cached(uuid)->size(), 3u);
  // An older version arriving late does not replace a newer one.
  ASSERT_TRUE(node2.Update(uuid, R"({"version": 1, "tablets": [{"start": "", "end": "", "replicas": []}]})", 1).ok());
  EXPECT_EQ(node2.Cached(uuid)->size(), 3u);
}

// A fenced change (the placement balancer's: its leader key still its own)
// lands while the fence holds and is refused, writing nothing, once it fails.
TEST_F(EtcdClientTest, AFencedTabletChangeIsRefusedOnceTheFenceFails) {
  const std::string uuid(16, '\x03');
  TabletPlacements node(client_.get());
  ASSERT_TRUE(node.Get(uuid, [] { return Result<std::vector<TabletReplicas>>(TwoTablets()); }).ok());
  auto put = client_->Put("/test/leader", "me");
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  auto leader = client_->Range("/test/leader");
  ASSERT_TRUE(leader.ok() && leader->kvs.size() == 1);
  EtcdCompare fence;
  fence.key = "/test/leader";
  fence.target = EtcdCompare::Target::kCreateRevision;
  fence.revision = leader->kvs[0].create_revision;
  auto to = [](std::string host) {
    return [host](TabletReplicas t) -> Result<std::optional<TabletReplicas>> {
      t.replicas = {host};
      return std::optional<TabletReplicas>(std::move(t));
    };
  };
  auto landed = node.ChangeTablet(uuid, "m", to(std::string(16, 'c')), {fence});
  ASSERT_TRUE(landed.ok()) << landed.status().ToString();
  EXPECT_GT(*landed, 0);
  // The key is deleted and created again (another leader): a new create_revision.
  ASSERT_TRUE(client_->Delete("/test/leader").ok());
  ASSERT_TRUE(client_->Put("/test/leader", "someone else").ok());
  auto refused = node.ChangeTablet(uuid, "m", to(std::string(16, 'd')), {fence});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("fenced"), std::string::npos) << refused.status().ToString();
  auto stored = client_->Range(kTabletsPrefix + UuidText(uuid));
  ASSERT_TRUE(stored.ok() && stored->kvs.size() == 1);
  auto placement = DecodePlacement(stored->kvs[0].value);
  ASSERT_TRUE(placement.ok());
  EXPECT_EQ((*placement)[1].replicas, std::vector<std::string>{std::string(16, 'c')});
}


// Issue 28 item 4: the balancer leader's splits and merges are fenced by its
// leader key as its moves are: recorded while the key keeps the create
// revision the leader took it at, refused (nothing written) once another
// node holds it.
TEST_F(EtcdClientTest, ALeadersSplitsAndMergesAreRefusedOnceAnotherNodeLeads) {
  const std::string uuid(16, '\x04');
  TabletPlacements node(client_.get());
  ASSERT_TRUE(node.Get(uuid, [] { return Result<std::vector<TabletReplicas>>(TwoTablets()); }).ok());
  EXPECT_TRUE(BalancerLeaderFence(0).empty());
  ASSERT_TRUE(client_->Delete(kBalancerLeaderKey).ok());
  ASSERT_TRUE(client_->Put(kBalancerLeaderKey, "leader one").ok());
  auto key = client_->Range(kBalancerLeaderKey);
  ASSERT_TRUE(key.ok() && key->kvs.size() == 1);
  const std::vector<EtcdCompare> term = BalancerLeaderFence(key->kvs[0].create_revision);
  ASSERT_EQ(term.size(), 1u);
  auto split = node.RecordSplit(uuid, "f", term);
  ASSERT_TRUE(split.ok() && *split) << split.status().ToString();
  auto merge = node.RecordMerge(uuid, "f", term);
  ASSERT_TRUE(merge.ok() && *merge) << merge.status().ToString();
  auto resplit = node.RecordSplit(uuid, "f", term);
  ASSERT_TRUE(resplit.ok() && *resplit) << resplit.status().ToString();

  // The lease ran out and another node took the key: a new create revision.
  ASSERT_TRUE(client_->Delete(kBalancerLeaderKey).ok());
  ASSERT_TRUE(client_->Put(kBalancerLeaderKey, "leader two").ok());
  auto before = client_->Range(kTabletsPrefix + UuidText(uuid));
  ASSERT_TRUE(before.ok() && before->kvs.size() == 1);
  auto late_split = node.RecordSplit(uuid, "t", term);
  ASSERT_TRUE(late_split.status().code() == Status::Code::kBusy) << late_split.status().ToString();
  EXPECT_NE(late_split.status().ToString().find("fenced"), std::string::npos) << late_split.status().ToString();
  auto late_merge = node.RecordMerge(uuid, "f", term);
  ASSERT_TRUE(late_merge.status().code() == Status::Code::kBusy) << late_merge.status().ToString();
  auto after = client_->Range(kTabletsPrefix + UuidText(uuid));
  ASSERT_TRUE(after.ok() && after->kvs.size() == 1);
  EXPECT_EQ(after->kvs[0].mod_revision, before->kvs[0].mod_revision);  // nothing written
  auto placement = DecodePlacement(after->kvs[0].value);
  ASSERT_TRUE(placement.ok());
  ASSERT_EQ(placement->size(), 3u);  // "", "f", "m": neither the split at "t" nor the merge at "f"
  EXPECT_EQ((*placement)[1].start, "f");
  EXPECT_EQ((*placement)[2].start, "m");
  ASSERT_TRUE(client_->Delete(kBalancerLeaderKey).ok());
}


TEST_F(EtcdClientTest, ADecommissionedNodesSplitProposalsAreNotPublishedAgain) {
  const std::string host(16, '\x07');
  const std::string id = UuidText(host);
  ASSERT_TRUE(client_->Put(kNodesPrefix + id, "{}").ok());
  ClusterResizeProposals proposals(client_.get(), host);
  TableSchema table;
  table.id = 9;
  table.uuid = std::string(16, '\x09');
  ResizeProposal split;
  split.start = TablePrefix(9);
  split.end = TablePrefix(10);
  split.reason = "size";
  auto published = [&] {
    auto key = client_->Range(kResizePrefix + id);
    EXPECT_TRUE(key.ok()) << key.status().ToString();
    return key.ok() && key->kvs.size() == 1;
  };
  proposals.Propose(table, {split});
  EXPECT_TRUE(published());
  // Decommission: the node's record and its proposals go in one transaction;
  // its balancer, still running, proposes another cut of the tablet.
  ASSERT_TRUE(client_->Txn({}, {EtcdOp::Delete(kNodesPrefix + id), EtcdOp::Delete(kResizePrefix + id)}).ok());
  split.split_position = TablePrefix(9) + "m";
  proposals.Propose(table, {split});
  EXPECT_FALSE(published());
  // Restarted, it joins again: the standing proposals go out at the next round.
  ASSERT_TRUE(client_->Put(kNodesPrefix + id, "{}").ok());
  proposals.Propose(table, {split});
  EXPECT_TRUE(published());
  ASSERT_TRUE(client_->Txn({}, {EtcdOp::Delete(kNodesPrefix + id), EtcdOp::Delete(kResizePrefix + id)}).ok());
}

// Issue 29 item 1: two nodes' stores over one etcd see the same roles and
// permissions; concurrent grants to one role all land (compare-and-swap).
TEST_F(EtcdClientTest, AuthStoresOfTwoNodesShareRolesAndPermissions) {
  EtcdClient other_client(endpoint_);
  EtcdAuthStore one(client_.get(), prefix_), two(&other_client, prefix_);
  auth::RoleRecord r;
  r.name = "app/writer";  // a '/' in a name stays inside its key
  r.can_login = true;
  r.member_of = {"readers"};
  r.salted_hash = "hash";
  r.options = {{"k", "v"}};
  ASSERT_TRUE(one.PutRole(r).ok());
  auto seen = two.GetRole("app/writer");
  ASSERT_TRUE(seen.ok() && seen->has_value());
  EXPECT_TRUE((*seen)->can_login);
  EXPECT_FALSE((*seen)->is_superuser);
  EXPECT_EQ((*seen)->member_of, std::set<std::string>{"readers"});
  EXPECT_EQ((*seen)->salted_hash, "hash");
  EXPECT_EQ((*seen)->options.at("k"), "v");
  auto missing = two.GetRole("app");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  // Created once: the second node's attempt finds the first's.
  auth::RoleRecord su;
  su.name = "cassandra";
  su.salted_hash = "first";
  auto created = one.PutRoleIfAbsent(su);
  ASSERT_TRUE(created.ok() && *created);
  su.salted_hash = "second";
  created = two.PutRoleIfAbsent(su);
  ASSERT_TRUE(created.ok());
  EXPECT_FALSE(*created);
  EXPECT_EQ((*one.GetRole("cassandra"))->salted_hash, "first");
  auto roles = two.ListRoles();
  ASSERT_TRUE(roles.ok());
  ASSERT_EQ(roles->size(), 2u);
  EXPECT_EQ((*roles)[0].name, "app/writer");
  EXPECT_EQ((*roles)[1].name, "cassandra");

  // 2 nodes x 8 tables granted to one role at once: every grant lands.
  std::vector<std::thread> granters;
  std::atomic<int> failed{0};
  for (int node = 0; node < 2; ++node) {
    granters.emplace_back([&, node] {
      for (int t = 0; t < 8; ++t) {
        auth::PermissionGrant g{"app/writer", auth::Resource::Table("ks", "t" + std::to_string(node * 8 + t)),
                                auth::Bit(auth::Permission::kSelect) | auth::Bit(auth::Permission::kModify)};
        if (!(node == 0 ? one : two).PutPermissions(g).ok()) failed++;
      }
    });
  }
  for (auto& t : granters) t.join();
  EXPECT_EQ(failed.load(), 0);
  auto grants = one.GetPermissions("app/writer");
  ASSERT_TRUE(grants.ok());
  EXPECT_EQ(grants->size(), 16u);
  // Revoking every permission on a resource removes it; the role's other grants stay.
  ASSERT_TRUE(two.PutPermissions({"app/writer", auth::Resource::Table("ks", "t0"), 0}).ok());
  ASSERT_TRUE(two.PutPermissions({"cassandra", auth::Resource::Keyspace("ks"), auth::kAllPermissions}).ok());
  auto all = one.ListPermissions();
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 16u);  // 15 of app/writer, 1 of cassandra
  // Dropping a role takes its permissions with it.
  ASSERT_TRUE(one.DeleteRole("app/writer").ok());
  EXPECT_FALSE(two.GetRole("app/writer")->has_value());
  EXPECT_TRUE(two.GetPermissions("app/writer")->empty());
  EXPECT_EQ(two.ListPermissions()->size(), 1u);
  // A name JSON cannot hold is refused, not mangled.
  auth::RoleRecord bad;
  bad.name = "ok";
  bad.options = {{"k", std::string("\xff")}};
  EXPECT_TRUE(one.PutRole(bad).IsInvalidArgument());
}

// Two nodes' AuthServices over one etcd: the default superuser is made once,
// a role created through one logs in through the other, and a password
// changed through one is refused by the other at once.
TEST_F(EtcdClientTest, AuthServicesOfTwoNodesAgreeOnLogins) {
  EtcdClient other_client(endpoint_);
  EtcdAuthStore one_store(client_.get(), prefix_), two_store(&other_client, prefix_);
  auth::AuthOptions o;
  o.authentication = o.authorization = true;
  o.hash_cost = auth::kFuzzingHashCost;
  auth::AuthService one(&one_store, o), two(&two_store, o);
  ASSERT_TRUE(one.Setup().ok());
  ASSERT_TRUE(two.Setup().ok());
  EXPECT_EQ(one_store.ListRoles()->size(), 1u);
  ASSERT_TRUE(two.Login("cassandra", "cassandra", "10.0.0.1").ok());
  auth::RoleChanges c;
  c.password = "pw";
  c.login = true;
  ASSERT_TRUE(one.CreateRole("cassandra", "alice", c, false).ok());
  auto alice = two.Login("alice", "pw", "10.0.0.1");
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();
  auth::RoleChanges new_password;
  new_password.password = "changed";
  ASSERT_TRUE(one.AlterRole("cassandra", "cassandra", new_password).ok());
  EXPECT_FALSE(two.Login("cassandra", "cassandra", "10.0.0.2").ok());
  EXPECT_TRUE(two.Login("cassandra", "changed", "10.0.0.2").ok());
}

}  // namespace
}  // namespace tessera::cluster
