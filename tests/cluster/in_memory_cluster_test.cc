// Three real nodes (server::Node: CQL, etcd membership, replicated tablets,
// the failure detector) in one process, their internode traffic on an
// InMemoryNetwork (cluster/in_memory_network.h) that injects partitions,
// delay and loss (issue 28 item 7), with a real etcd. Clients talk CQL to
// each node through the front door (client::CqlConnection).
#include "cluster/in_memory_network.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "client/cql_connection.h"
#include "common/bytes.h"
#include "cluster/etcd_client.h"
#include "cluster/node_load.h"
#include "common/uuid.h"
#include "server/node.h"
#include "tests/cluster/local_etcd.h"

namespace tessera::cluster {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kNodes = 3;
constexpr uint16_t kInternodePort = 7000;  // on 127.0.0.N, as in the node records; no socket is opened

std::string Address(int node) { return "127.0.0." + std::to_string(node); }
std::string Endpoint(int node) { return Address(node) + ":" + std::to_string(kInternodePort); }

class InMemoryClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera_in_memory_cluster_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    ASSERT_TRUE(etcd_.Start(dir_ / "etcd"));
    network_ = std::make_unique<InMemoryNetwork>();
    // One CQL port on every loopback address; a port taken meanwhile: new ports, three tries.
    for (int attempt = 0; attempt < 3 && nodes_.size() < kNodes; ++attempt) {
      for (auto& n : nodes_) n->Stop();
      nodes_.clear();
      cql_port_ = static_cast<uint16_t>(tessera::testing::FreeLoopbackPorts().first);
      for (int n = 1; n <= kNodes; ++n) {
        auto node = server::Node::Start(Options(n));
        if (!node.ok()) {
          std::fprintf(stderr, "node %d: %s\n", n, node.status().ToString().c_str());
          break;
        }
        nodes_.push_back(std::move(*node));
      }
    }
    ASSERT_EQ(nodes_.size(), static_cast<size_t>(kNodes));
    for (int n = 1; n <= kNodes; ++n) {
      auto c = client::CqlConnection::Connect(ClientFor(n));
      ASSERT_TRUE(c.ok()) << c.status().ToString();
      conns_.push_back(std::move(*c));
    }
    // Every node lists the other two.
    for (int n = 1; n <= kNodes; ++n) {
      WaitFor([&] {
        auto r = conns_[n - 1]->Query("SELECT peer FROM system.peers");
        return r.ok() && r->rows.rows.size() == kNodes - 1;
      }, "node " + std::to_string(n) + " lists its peers");
    }
  }

  void TearDown() override {
    conns_.clear();
    for (auto& n : nodes_) n->Stop();
    nodes_.clear();
    if (network_) network_->Stop();
    network_.reset();
    etcd_.Stop();
    std::filesystem::remove_all(dir_);
  }

  server::NodeOptions Options(int n) {
    server::NodeOptions o;
    o.database.data_dir = (dir_ / ("node" + std::to_string(n))).string();
    o.cql_address = Address(n);
    o.cql_port = cql_port_;
    o.admin_port = -1;
    o.cluster.etcd_endpoint = etcd_.endpoint();
    o.cluster.node_address = Address(n);
    o.cluster.internode_port = kInternodePort;
    o.cluster.in_memory_network = network_.get();
    o.cluster.failure_detector_timeout_ms = 1000;
    o.cluster.write_timeout_micros = 1'000'000;
    o.cluster.read_timeout_micros = 1'000'000;
    o.cluster.load_report_interval_ms = load_report_interval_ms_;
    o.cluster.max_hints_bytes_per_node = max_hints_bytes_per_node_;
    return o;
  }

  client::ClientOptions ClientFor(int n) const {
    client::ClientOptions c;
    c.host = Address(n);
    c.port = cql_port_;
    return c;
  }

  static void WaitFor(const std::function<bool()>& condition, const std::string& what) {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (!condition()) {
      ASSERT_LT(Clock::now(), deadline) << "not within 30 s: " << what;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // A statement at `consistency` through node `n`: the server's answer (an ERROR is not a Status error).
  Result<cql::DecodedResponse> Run(int n, const std::string& statement, cql::Consistency consistency) {
    cql::QueryParameters p;
    p.consistency = consistency;
    return conns_[n - 1]->Call(cql::QueryRequest{statement, std::move(p)});
  }

  // A replicated table every node knows.
  void CreateTable() {
    ASSERT_TRUE(conns_[0]->Query("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
                                 "'replication_factor': 3}").ok());
    ASSERT_TRUE(conns_[0]->Query("CREATE TABLE ks.t (k int PRIMARY KEY, v int)").ok());
    for (int n = 1; n <= kNodes; ++n) {
      WaitFor([&] { return conns_[n - 1]->Query("SELECT k FROM ks.t LIMIT 1").ok(); },
              "node " + std::to_string(n) + " knows ks.t");
    }
  }

  int64_t load_report_interval_ms_ = server::NodeClusterOptions().load_report_interval_ms;
  uint64_t max_hints_bytes_per_node_ = server::NodeClusterOptions().max_hints_bytes_per_node;
  std::filesystem::path dir_;
  tessera::testing::LocalEtcd etcd_;
  std::unique_ptr<InMemoryNetwork> network_;
  uint16_t cql_port_ = 0;
  std::vector<std::unique_ptr<server::Node>> nodes_;
  std::vector<std::unique_ptr<client::CqlConnection>> conns_;
};

TEST_F(InMemoryClusterTest, AReplicaCutOffCostsTheOthersNothingAndCatchesUpAfterTheHeal) {
  CreateTable();
  network_->Cut(Endpoint(1), Endpoint(3));
  network_->Cut(Endpoint(2), Endpoint(3));
  // Nodes 1 and 2 hold a quorum between them: every QUORUM write through node 1 and read through
  // node 2 succeeds (the partition test's bar, must-show 3: at least 99%).
  int ok = 0;
  constexpr int kKeys = 100;
  for (int k = 0; k < kKeys; ++k) {
    auto w = Run(1, "INSERT INTO ks.t (k, v) VALUES (" + std::to_string(k) + ", " + std::to_string(k * 10) + ")",
                 cql::Consistency::kQuorum);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    auto r = Run(2, "SELECT v FROM ks.t WHERE k = " + std::to_string(k), cql::Consistency::kQuorum);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (!w->is_error() && !r->is_error() && r->rows.rows.size() == 1) ++ok;
  }
  EXPECT_GE(ok, kKeys * 99 / 100);
  EXPECT_GT(network_->messages_lost(), 0u);
  // Node 3 reaches no other replica: a QUORUM write through it fails, Unavailable once its failure
  // detector holds the others down, WriteTimeout before.
  auto lonely = Run(3, "INSERT INTO ks.t (k, v) VALUES (1000, 1)", cql::Consistency::kQuorum);
  ASSERT_TRUE(lonely.ok()) << lonely.status().ToString();
  ASSERT_TRUE(lonely->is_error());
  EXPECT_TRUE(lonely->error_code == 0x1000 || lonely->error_code == 0x1100) << lonely->error_message;
  WaitFor([&] {
    auto r = Run(3, "INSERT INTO ks.t (k, v) VALUES (1001, 1)", cql::Consistency::kQuorum);
    return r.ok() && r->is_error() && r->error_code == 0x1000;
  }, "node 3 holds its peers down (Unavailable)");

  network_->HealAll();
  // Node 3's failure detector finds each peer up at its own next ping: wait
  // for both (CI of f797945 read at ALL when node 2 was up again and node 1
  // not yet: Unavailable).
  WaitFor([&] {
    auto r = Run(3, "SELECT v FROM ks.t WHERE k = 0", cql::Consistency::kAll);
    return r.ok() && !r->is_error();
  }, "node 3 coordinates ALL again after the heal");
  // Every acknowledged write is there through node 3 at ALL (hints, or read repair).
  for (int k = 0; k < kKeys; ++k) {
    auto r = Run(3, "SELECT v FROM ks.t WHERE k = " + std::to_string(k), cql::Consistency::kAll);
    ASSERT_TRUE(r.ok() && !r->is_error()) << (r.ok() ? r->error_message : r.status().ToString());
    ASSERT_EQ(r->rows.rows.size(), 1u) << k;
  }
  // Pages through `cql` at QUORUM on node 3 and collects each row's (k, v),
  // every key once; with `full_pages`, every page but the last holds
  // `page_size` rows.
  auto scan_pages = [&](const std::string& cql, int32_t page_size, bool full_pages, std::map<int32_t, int32_t>* out) {
    std::string paging_state;
    for (int page = 0; page < 100; ++page) {
      cql::QueryParameters p;
      p.consistency = cql::Consistency::kQuorum;
      p.page_size = page_size;
      if (!paging_state.empty()) p.paging_state = paging_state;
      auto r = conns_[2]->Call(cql::QueryRequest{cql, std::move(p)});
      ASSERT_TRUE(r.ok() && !r->is_error()) << (r.ok() ? r->error_message : r.status().ToString());
      if (full_pages && r->rows.paging_state) {
        EXPECT_EQ(r->rows.rows.size(), static_cast<size_t>(page_size)) << "a page short of its rows";
      }
      for (const auto& row : r->rows.rows) {
        ASSERT_TRUE(row[0] && row[1] && row[0]->size() == 4 && row[1]->size() == 4);
        const int32_t k = static_cast<int32_t>(GetBigEndian32(row[0]->data()));
        EXPECT_TRUE(out->emplace(k, static_cast<int32_t>(GetBigEndian32(row[1]->data()))).second) << "twice: " << k;
      }
      if (!r->rows.paging_state) break;
      paging_state = *r->rows.paging_state;
    }
  };
  // A scan through node 3 at QUORUM, in pages: each page reads every tablet
  // it reaches through a coordinator made for that read (no tablet map
  // holds one), kept alive while its iterator reads windows from the
  // replicas. Every key comes back once, with the value written.
  std::map<int32_t, int32_t> scanned;
  scan_pages("SELECT k, v FROM ks.t", 16, false, &scanned);
  ASSERT_FALSE(HasFatalFailure());
  for (int k = 0; k < kKeys; ++k) {
    auto it = scanned.find(k);
    ASSERT_NE(it, scanned.end()) << "the scan missed " << k;
    EXPECT_EQ(it->second, k * 10);
  }
  // A filtered scan through node 3, in pages of 7: a read its filter leaves
  // short is followed by another, each step answered from the replicas'
  // answers (DeferredRead::paused), and every key it keeps comes back once.
  std::map<int32_t, int32_t> filtered;
  scan_pages("SELECT k, v FROM ks.t WHERE v > 505 ALLOW FILTERING", 7, true, &filtered);
  ASSERT_FALSE(HasFatalFailure());
  EXPECT_EQ(filtered.size(), static_cast<size_t>(kKeys - 51));
  for (int k = 51; k < kKeys; ++k) EXPECT_EQ(filtered[k], k * 10) << k;
  // A secondary-index query reads its backing table's slice through a
  // replicated tablet's iterator (Database::ReadSlice), which must keep the
  // coordinator made for it alive while it reads.
  ASSERT_TRUE(conns_[0]->Query("CREATE INDEX by_v ON ks.t (v)").ok());
  auto indexed = Run(1, "INSERT INTO ks.t (k, v) VALUES (500, 12345)", cql::Consistency::kQuorum);
  ASSERT_TRUE(indexed.ok() && !indexed->is_error());
  WaitFor([&] {
    auto r = Run(3, "SELECT k FROM ks.t WHERE v = 12345", cql::Consistency::kQuorum);
    return r.ok() && !r->is_error() && r->rows.rows.size() == 1 && r->rows.rows[0][0] &&
           GetBigEndian32(r->rows.rows[0][0]->data()) == 500;
  }, "node 3 finds k = 500 by its indexed value at QUORUM");
  // A partition-bucketed table's slice merges iterators over its
  // sub-partitions' tablets (db/sub_partition_read.h), each from a
  // coordinator made for it and held by nothing but that iterator.
  ASSERT_TRUE(conns_[0]->Query("CREATE TABLE ks.b (k int, c int, v int, PRIMARY KEY (k, c)) "
                               "WITH partition_buckets = 4").ok());
  WaitFor([&] { return conns_[2]->Query("SELECT k FROM ks.b LIMIT 1").ok(); }, "node 3 knows ks.b");
  constexpr int kRows = 40;
  for (int c = 0; c < kRows; ++c) {
    auto w = Run(1, "INSERT INTO ks.b (k, c, v) VALUES (1, " + std::to_string(c) + ", " + std::to_string(c + 7) + ")",
                 cql::Consistency::kQuorum);
    ASSERT_TRUE(w.ok() && !w->is_error()) << (w.ok() ? w->error_message : w.status().ToString());
  }
  auto slice = Run(3, "SELECT c, v FROM ks.b WHERE k = 1", cql::Consistency::kQuorum);
  ASSERT_TRUE(slice.ok() && !slice->is_error()) << (slice.ok() ? slice->error_message : slice.status().ToString());
  ASSERT_EQ(slice->rows.rows.size(), static_cast<size_t>(kRows));
  for (int c = 0; c < kRows; ++c) {
    const auto& row = slice->rows.rows[static_cast<size_t>(c)];
    ASSERT_TRUE(row[0] && row[1]);
    EXPECT_EQ(GetBigEndian32(row[0]->data()), static_cast<uint32_t>(c));
    EXPECT_EQ(GetBigEndian32(row[1]->data()), static_cast<uint32_t>(c + 7));
  }
}

// A slice read asks one replica for its window's data and the others for
// digests of the same window (ReplicatedTablet::ReadWindowAsync): a replica
// that missed rows disagrees, so the read asks again in full, answers every
// row and repairs that replica's copy.
class InMemoryClusterNoHintsTest : public InMemoryClusterTest {
 protected:
  void SetUp() override {
    max_hints_bytes_per_node_ = 0;  // every hint dropped: a cut-off replica stays behind until read repair
    InMemoryClusterTest::SetUp();
  }
};

TEST_F(InMemoryClusterNoHintsTest, ASliceWhoseReplicasDisagreeIsReadAgainInFullAndRepaired) {
  ASSERT_TRUE(conns_[0]->Query("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', "
                               "'replication_factor': 3}").ok());
  ASSERT_TRUE(conns_[0]->Query("CREATE TABLE ks.w (k int, c int, v int, PRIMARY KEY (k, c))").ok());
  for (int n = 1; n <= kNodes; ++n) {
    WaitFor([&] { return conns_[n - 1]->Query("SELECT k FROM ks.w LIMIT 1").ok(); },
            "node " + std::to_string(n) + " knows ks.w");
  }
  auto rows_of = [&](int n, cql::Consistency consistency) -> int {
    auto r = Run(n, "SELECT c, v FROM ks.w WHERE k = 1", consistency);
    EXPECT_TRUE(r.ok() && !r->is_error()) << (r.ok() ? r->error_message : r.status().ToString());
    return r.ok() && !r->is_error() ? static_cast<int>(r->rows.rows.size()) : -1;
  };
  network_->Cut(Endpoint(1), Endpoint(2));
  network_->Cut(Endpoint(1), Endpoint(3));
  constexpr int kRows = 10;
  for (int c = 0; c < kRows; ++c) {
    auto w = Run(2, "INSERT INTO ks.w (k, c, v) VALUES (1, " + std::to_string(c) + ", " + std::to_string(c) + ")",
                 cql::Consistency::kQuorum);
    ASSERT_TRUE(w.ok() && !w->is_error()) << (w.ok() ? w->error_message : w.status().ToString());
  }
  network_->HealAll();
  WaitFor([&] {
    auto r = Run(1, "SELECT k FROM ks.w WHERE k = 0", cql::Consistency::kAll);
    return r.ok() && !r->is_error();
  }, "node 1 coordinates ALL again after the heal");
  // Node 1's own copy (a read at ONE asks this node first) missed every row.
  EXPECT_EQ(rows_of(1, cql::Consistency::kOne), 0);
  // At QUORUM node 1 answers data (none) and node 2 a digest of its rows: they disagree.
  EXPECT_EQ(rows_of(1, cql::Consistency::kQuorum), kRows);
  // The full round repaired node 1's copy before it answered.
  EXPECT_EQ(rows_of(1, cql::Consistency::kOne), kRows);
}

// Issue 30: conditional statements run Paxos over the partition's replicas,
// whichever node coordinates, and need a quorum of them.
TEST_F(InMemoryClusterTest, ConditionalWritesRunPaxosAcrossTheReplicasAndNeedAQuorum) {
  CreateTable();
  auto applied = [&](int n, const std::string& statement) -> std::optional<bool> {
    auto r = Run(n, statement, cql::Consistency::kQuorum);
    if (!r.ok() || r->is_error() || r->rows.rows.empty() || !r->rows.rows[0][0]) return std::nullopt;
    return *r->rows.rows[0][0] == std::string(1, '\x01');
  };
  EXPECT_EQ(applied(1, "INSERT INTO ks.t (k, v) VALUES (1, 0) IF NOT EXISTS"), true);
  EXPECT_EQ(applied(2, "INSERT INTO ks.t (k, v) VALUES (1, 5) IF NOT EXISTS"), false);
  // A chain of compare-and-sets, each through the next node: each sees the last.
  for (int i = 0; i < 30; ++i) {
    const std::string set = "UPDATE ks.t SET v = " + std::to_string(i + 1) + " WHERE k = 1 IF v = " + std::to_string(i);
    ASSERT_EQ(applied(i % kNodes + 1, set), true) << i;
    ASSERT_EQ(applied((i + 1) % kNodes + 1, set), false) << i;
  }
  // Node 3 cut off: nodes 1 and 2 are a quorum and go on; node 3 reaches no quorum.
  network_->Cut(Endpoint(1), Endpoint(3));
  network_->Cut(Endpoint(2), Endpoint(3));
  EXPECT_EQ(applied(1, "UPDATE ks.t SET v = 31 WHERE k = 1 IF v = 30"), true);
  EXPECT_EQ(applied(2, "UPDATE ks.t SET v = 32 WHERE k = 1 IF v = 31"), true);
  auto lonely = Run(3, "UPDATE ks.t SET v = 99 WHERE k = 1 IF v = 32", cql::Consistency::kQuorum);
  ASSERT_TRUE(lonely.ok()) << lonely.status().ToString();
  ASSERT_TRUE(lonely->is_error());
  EXPECT_TRUE(lonely->error_code == 0x1000 || lonely->error_code == 0x1100) << lonely->error_message;
  network_->HealAll();
  // After the heal a SERIAL read through node 3 sees the last commit (node 3 missed it).
  WaitFor([&] {
    auto r = Run(3, "SELECT v FROM ks.t WHERE k = 1", cql::Consistency::kSerial);
    return r.ok() && !r->is_error() && r->rows.rows.size() == 1 && r->rows.rows[0][0] &&
           *r->rows.rows[0][0] == std::string("\0\0\0\x20", 4);
  }, "node 3 reads v = 32 at SERIAL");
}

// Compare-and-set increments of one row through every node at once contend for its Paxos rounds:
// a prepare refused by a later ballot backs off on the coordinator's timer and tries again, a
// proposal every replica refused runs the statement again from a new round
// (cluster/paxos_coordinator.h, cql/executor/conditional_writes.h: chains that hold no thread).
// Each applied statement moves the value by exactly one, so the final value is their count.
TEST_F(InMemoryClusterTest, ContendingCompareAndSetsThroughEveryNodeApplyExactlyOnceEach) {
  CreateTable();
  auto int_of = [](const std::optional<std::string>& cell) {
    return cell && cell->size() == 4 ? static_cast<int>(GetBigEndian32(cell->data())) : -1;
  };
  auto first = Run(1, "INSERT INTO ks.t (k, v) VALUES (7, 0) IF NOT EXISTS", cql::Consistency::kQuorum);
  ASSERT_TRUE(first.ok() && !first->is_error());
  constexpr int kTries = 20;
  std::vector<int> applied(kNodes, 0), refused(kNodes, 0), timed_out(kNodes, 0), reads_lost(kNodes, 0);
  std::vector<std::string> failures(kNodes);
  std::vector<std::thread> clients;
  for (int n = 1; n <= kNodes; ++n) {
    clients.emplace_back([&, n] {  // each client on its own node's connection
      for (int i = 0; i < kTries; ++i) {
        auto now = Run(n, "SELECT v FROM ks.t WHERE k = 7", cql::Consistency::kSerial);
        if (!now.ok() || now->is_error() || now->rows.rows.size() != 1) {
          ++reads_lost[n - 1];  // a SERIAL read's prepare lost to contention too: no CAS sent
          continue;
        }
        const int v = int_of(now->rows.rows[0][0]);
        auto r = Run(n, "UPDATE ks.t SET v = " + std::to_string(v + 1) + " WHERE k = 7 IF v = " + std::to_string(v),
                     cql::Consistency::kQuorum);
        if (!r.ok()) {
          failures[n - 1] = r.status().ToString();
          return;
        }
        if (r->is_error()) {
          // WriteTimeout CAS: lost its rounds to contention, or an outcome unknown; counted
          // neither way, so the check below allows it only as a shortfall of `applied`.
          if (r->error_code != 0x1100) failures[n - 1] = r->error_message;
          std::printf("node %d: a compare-and-set timed out: %s\n", n, r->error_message.c_str());
          ++timed_out[n - 1];
          continue;
        }
        const bool ok = !r->rows.rows.empty() && r->rows.rows[0][0] && *r->rows.rows[0][0] == std::string(1, '\x01');
        ++(ok ? applied : refused)[n - 1];
      }
    });
  }
  for (auto& c : clients) c.join();
  int total_applied = 0, total_timed_out = 0;
  for (int n = 0; n < kNodes; ++n) {
    EXPECT_EQ(failures[n], "") << "node " << n + 1;
    total_applied += applied[n];
    total_timed_out += timed_out[n];
  }
  auto last = Run(2, "SELECT v FROM ks.t WHERE k = 7", cql::Consistency::kSerial);
  ASSERT_TRUE(last.ok() && !last->is_error() && last->rows.rows.size() == 1);
  const int final_value = int_of(last->rows.rows[0][0]);
  // Every applied CAS moved the value once; a timed-out one may or may not have applied.
  EXPECT_GE(final_value, total_applied);
  EXPECT_LE(final_value, total_applied + total_timed_out);
  EXPECT_GT(total_applied, 0);
  std::printf("%d compare-and-sets applied, %d refused, %d timed out, %d SERIAL reads lost; final value %d\n",
              total_applied, refused[0] + refused[1] + refused[2], total_timed_out,
              reads_lost[0] + reads_lost[1] + reads_lost[2], final_value);
}

// Writes to a table with a view and a secondary index read the rows they touch before and after
// and write the difference (coordinator/derived_writes.cc); two writes of one partition through
// one coordinator take turns (PartitionLocks). Write A (QUORUM, the later timestamp) is held with
// its partition locked (failpoint coordinator.derived_write.ks.t on node 1); write B (ONE) of
// the same partition comes meanwhile and must queue behind it, holding no thread, and the view
// and the index end with one row each.
TEST_F(InMemoryClusterTest, ADerivedWriteOfAPartitionWaitsForTheOneInFlightWithoutAThread) {
  CreateTable();
  ASSERT_TRUE(conns_[0]->Query("CREATE INDEX t_v ON ks.t (v)").ok());
  ASSERT_TRUE(conns_[0]->Query("CREATE MATERIALIZED VIEW ks.t_by_v AS SELECT * FROM ks.t "
                               "WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k)").ok());
  for (int n = 1; n <= kNodes; ++n) {
    WaitFor([&] { return conns_[n - 1]->Query("SELECT k FROM ks.t_by_v LIMIT 1").ok(); },
            "node " + std::to_string(n) + " knows ks.t_by_v");
  }
  auto w = Run(1, "INSERT INTO ks.t (k, v) VALUES (0, 0)", cql::Consistency::kAll);
  ASSERT_TRUE(w.ok() && !w->is_error());
  const std::string failpoint = "coordinator.derived_write.ks.t";
  Failpoints& failpoints = nodes_[0]->failpoints();
  ASSERT_TRUE(failpoints.Set(failpoint, "pause").ok());
  const PartitionLocks& locks = nodes_[0]->coordinator().partition_locks();
  auto send = [&](const std::string& statement, cql::Consistency consistency) {
    cql::QueryParameters p;
    p.consistency = consistency;
    ASSERT_TRUE(conns_[0]->Send(cql::QueryRequest{statement, std::move(p)}).ok());
    ASSERT_TRUE(conns_[0]->Flush().ok());
  };
  send("INSERT INTO ks.t (k, v) VALUES (0, 1) USING TIMESTAMP 4000000000000000", cql::Consistency::kQuorum);
  WaitFor([&] { return !failpoints.Paused().empty(); }, "write A held with its partition locked");
  EXPECT_EQ(locks.keys_in_use(), 1u);
  send("INSERT INTO ks.t (k, v) VALUES (0, 2)", cql::Consistency::kOne);
  // B queues on the lock A holds: its request thread went on (it waits as a continuation).
  WaitFor([&] { return locks.waiting() == 1; }, "write B waits for write A");
  ASSERT_TRUE(failpoints.Set(failpoint, "off").ok());
  for (int i = 0; i < 2; ++i) {
    auto r = conns_[0]->Receive();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->decoded.is_error()) << r->decoded.error_message;
  }
  WaitFor([&] { return locks.keys_in_use() == 0; }, "both writes released their partition");  // after their answers
  auto row = Run(1, "SELECT v FROM ks.t WHERE k = 0", cql::Consistency::kAll);
  ASSERT_TRUE(row.ok() && !row->is_error() && row->rows.rows.size() == 1);
  EXPECT_EQ(*row->rows.rows[0][0], std::string("\0\0\0\x01", 4));  // A's value: the later timestamp
  auto view = Run(1, "SELECT k, v FROM ks.t_by_v", cql::Consistency::kAll);
  ASSERT_TRUE(view.ok() && !view->is_error());
  ASSERT_EQ(view->rows.rows.size(), 1u) << "the view holds a row its base does not";
  EXPECT_EQ(*view->rows.rows[0][1], std::string("\0\0\0\x01", 4));
  // The index's entries (its backing table, read as a table): one, A's value.
  auto entries = Run(1, "SELECT * FROM ks.t_v_index", cql::Consistency::kAll);
  ASSERT_TRUE(entries.ok() && !entries->is_error()) << (entries.ok() ? entries->error_message : "");
  EXPECT_EQ(entries->rows.rows.size(), 1u);
}

TEST_F(InMemoryClusterTest, WritesSurviveALossyReplicaAndItCatchesUpOnceTheLossEnds) {
  CreateTable();
  // Node 2's links lose 40% of the messages both ways; node 3's arrive 20 ms late, every one.
  for (int other : {1, 3}) {
    network_->SetLink(Endpoint(2), Endpoint(other), {.delay_micros = 0, .loss = 0.4, .cut = false});
    network_->SetLink(Endpoint(other), Endpoint(2), {.delay_micros = 0, .loss = 0.4, .cut = false});
  }
  for (int other : {1, 2}) {
    network_->SetLink(Endpoint(other), Endpoint(3), {.delay_micros = 20'000, .loss = 0, .cut = false});
    network_->SetLink(Endpoint(3), Endpoint(other), {.delay_micros = 20'000, .loss = 0, .cut = false});
  }
  // QUORUM through node 1: itself and node 3 (40 ms a round trip, well inside the 1 s time-out)
  // acknowledge every write, whatever node 2's link loses.
  constexpr int kKeys = 100;
  for (int k = 0; k < kKeys; ++k) {
    auto w = Run(1, "INSERT INTO ks.t (k, v) VALUES (" + std::to_string(k) + ", " + std::to_string(k) + ")",
                 cql::Consistency::kQuorum);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_FALSE(w->is_error()) << k << ": " << w->error_message;
  }
  EXPECT_GT(network_->messages_lost(), 0u);  // the loss was real: node 2 missed writes
  // Once the loss ends, node 2 answers every key at ALL (hints replayed, or read repair).
  network_->HealAll();
  for (int k = 0; k < kKeys; ++k) {
    WaitFor([&] {
      auto r = Run(2, "SELECT v FROM ks.t WHERE k = " + std::to_string(k), cql::Consistency::kAll);
      return r.ok() && !r->is_error() && r->rows.rows.size() == 1;
    }, "node 2 reads key " + std::to_string(k) + " at ALL");
  }
}

// Counter shards make an increment idempotent on the way to a replica: node 2's links lose 40%
// of the messages, so some shards reach it and lose their reply, get hinted and arrive again.
// Each increment still counts once on every replica (as deltas, those would count twice).
TEST_F(InMemoryClusterTest, CounterIncrementsCountOnceThroughLossHintsAndRepair) {
  CreateTable();
  ASSERT_TRUE(conns_[0]->Query("CREATE TABLE ks.c (k int PRIMARY KEY, n counter)").ok());
  for (int n = 1; n <= kNodes; ++n) {
    WaitFor([&] { return conns_[n - 1]->Query("SELECT k FROM ks.c LIMIT 1").ok(); }, "node knows ks.c");
  }
  for (int other : {1, 3}) {
    network_->SetLink(Endpoint(2), Endpoint(other), {.delay_micros = 0, .loss = 0.4, .cut = false});
    network_->SetLink(Endpoint(other), Endpoint(2), {.delay_micros = 0, .loss = 0.4, .cut = false});
  }
  // Through nodes 1 and 3 (each leads its own increments: both are replicas), at QUORUM.
  constexpr int kIncrements = 120;
  for (int i = 0; i < kIncrements; ++i) {
    auto w = Run(i % 2 == 0 ? 1 : 3, "UPDATE ks.c SET n = n + 1 WHERE k = 7", cql::Consistency::kQuorum);
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_FALSE(w->is_error()) << i << ": " << w->error_message;
  }
  EXPECT_GT(network_->messages_lost(), 0u);
  network_->HealAll();
  // Through node 2 (it leads from now on), at ALL: every replica answers, read repair reconciles.
  auto w = Run(2, "UPDATE ks.c SET n = n + 1000 WHERE k = 7", cql::Consistency::kAll);
  ASSERT_TRUE(w.ok() && !w->is_error());
  const std::string expected = [] {
    std::string v;
    for (int i = 7; i >= 0; --i) v.push_back(static_cast<char>(static_cast<uint64_t>(kIncrements + 1000) >> (8 * i)));
    return v;
  }();
  for (int n = 1; n <= kNodes; ++n) {
    WaitFor([&] {
      auto r = Run(n, "SELECT n FROM ks.c WHERE k = 7", cql::Consistency::kAll);
      return r.ok() && !r->is_error() && r->rows.rows.size() == 1 && r->rows.rows[0][0] &&
             *r->rows.rows[0][0] == expected;
    }, "node " + std::to_string(n) + " reads n = 1120 at ALL");
  }
  // And each replica holds exactly that on its own, once the hints are in: a read at ONE.
  for (int n = 1; n <= kNodes; ++n) {
    auto r = Run(n, "SELECT n FROM ks.c WHERE k = 7", cql::Consistency::kOne);
    ASSERT_TRUE(r.ok() && !r->is_error() && r->rows.rows.size() == 1 && r->rows.rows[0][0]);
    EXPECT_EQ(*r->rows.rows[0][0], expected) << "node " << n;
  }
}

// The load reports carry the key sample of the requests a node coordinated
// (cluster/node_load.h "sample"), which the balancer leader joins to its own
// when it cuts a load split: with token-aware drivers, the leader coordinates
// few of a tablet's requests. Here node 2 coordinates every write; only its
// report samples ks.t, and its sample covers the keys written.
class InMemoryClusterLoadTest : public InMemoryClusterTest {
 protected:
  InMemoryClusterLoadTest() { load_report_interval_ms_ = 300; }
};

TEST_F(InMemoryClusterLoadTest, LoadReportsCarryTheKeySampleOfTheRequestsANodeCoordinated) {
  CreateTable();
  for (int k = 0; k < 300; ++k) {
    auto w = Run(2, "INSERT INTO ks.t (k, v) VALUES (" + std::to_string(k) + ", 1)", cql::Consistency::kQuorum);
    ASSERT_TRUE(w.ok() && !w->is_error()) << (w.ok() ? w->error_message : w.status().ToString());
  }
  EtcdClient etcd(etcd_.endpoint());
  struct Sampled {
    size_t keys = 0;
    double weight = 0;
    uint64_t writes = 0;
    int64_t at_micros = 0;  // when the report was measured; 0: none yet
  };
  auto sampled = [&](int n) {  // the keys, weight and writes node n's last report samples in ks.t
    Sampled out;
    auto r = etcd.Range(std::string(kLoadPrefix) + UuidText(nodes_[n - 1]->host_id()));
    if (!r.ok() || r->kvs.empty()) return out;
    auto load = DecodeNodeLoad(r->kvs.front().value);
    if (!load.ok()) return out;
    out.at_micros = load->at_micros;
    for (const auto& t : load->tablet_loads) {
      out.keys += t.sample.size();
      for (const auto& k : t.sample) out.weight += k.second;
      out.writes += t.sampled_writes;
    }
    return out;
  };
  // A report measured while the writes went on samples only some of them:
  // the second report to come after the last write began after it.
  const int64_t during = sampled(2).at_micros;
  WaitFor([&] { return sampled(2).at_micros != during; }, "node 2's next load report");
  const int64_t next = sampled(2).at_micros;
  WaitFor([&] { return sampled(2).at_micros != next && sampled(2).keys >= 8; }, "node 2 reports a key sample of ks.t");
  const Sampled two = sampled(2);
  EXPECT_LE(two.keys, kMaxSampledTablets * kMaxReportedSampleKeys);
  EXPECT_GE(two.weight, 300 * 0.5) << "the sample's weight stands for the rows written";
  EXPECT_LE(two.weight, 300 * 2.0);
  // The writes it saw: all 300, unless the older of its two windows ran out meanwhile.
  EXPECT_GE(two.writes, 150u);
  EXPECT_LE(two.writes, 300u);
  EXPECT_EQ(sampled(1).keys, 0u);
  EXPECT_EQ(sampled(3).keys, 0u);
}

}  // namespace
}  // namespace tessera::cluster
