// The request's consistency level and write type travel as parameters from
// the CQL request (QueryProcessor) through Database to every tablet replica
// a statement reads or writes (tablets/request_consistency.h): each tablet
// here gets a replica that records what it was asked with, and each request
// is checked for the level it carried and no other.
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cql/executor/query_processor.h"
#include "tablets/replica.h"
#include "tests/db/test_util.h"
#include "types/serialization.h"

namespace tessera::cql {
namespace {

using Seen = std::pair<ConsistencyLevel, WriteType>;

// What every replica of the test was asked with, in order.
struct Recorder {
  std::mutex mu;
  std::vector<Seen> reads, writes;
  std::vector<std::string> applied_to;  // the tablet (its start) of each write, in order
  void Read(const RequestConsistency& c) {
    std::lock_guard<std::mutex> lock(mu);
    reads.emplace_back(c.level, c.write_type);
  }
  void Write(const RequestConsistency& c, const std::string& tablet_start) {
    std::lock_guard<std::mutex> lock(mu);
    writes.emplace_back(c.level, c.write_type);
    applied_to.push_back(tablet_start);
  }
  std::vector<std::string> TakeAppliedTo() {
    std::lock_guard<std::mutex> lock(mu);
    return std::exchange(applied_to, {});
  }
  // The distinct levels seen since the last Take, and forgets them.
  std::set<ConsistencyLevel> TakeReadLevels() {
    std::lock_guard<std::mutex> lock(mu);
    std::set<ConsistencyLevel> out;
    for (const auto& [level, type] : reads) out.insert(level);
    reads.clear();
    return out;
  }
  std::set<Seen> TakeWrites() {
    std::lock_guard<std::mutex> lock(mu);
    std::set<Seen> out(writes.begin(), writes.end());
    writes.clear();
    return out;
  }
};

class RecordingReplica : public LocalReplica {
 public:
  RecordingReplica(StorageEngine* engine, Recorder* recorder, const Tablet& tablet)
      : LocalReplica(engine), recorder_(recorder), tablet_start_(tablet.start), tablet_end_(tablet.end) {}
  Status Apply(const WriteSet& writes, const RequestConsistency& c) override {
    for (const auto& op : writes.ops()) {
      EXPECT_TRUE(op.key >= tablet_start_ && op.key < tablet_end_) << "a write reached another tablet's replica";
    }
    recorder_->Write(c, tablet_start_);
    return LocalReplica::Apply(writes, c);
  }
  Status Get(std::string_view key, std::string* value, const RequestConsistency& c) override {
    recorder_->Read(c);
    return LocalReplica::Get(key, value, c);
  }
  void MultiGet(const std::vector<std::string_view>& keys, std::vector<std::string>* values,
                std::vector<Status>* statuses, const RequestConsistency& c) override {
    recorder_->Read(c);
    LocalReplica::MultiGet(keys, values, statuses, c);
  }
  std::unique_ptr<KvIterator> NewIterator(std::string lower, std::string upper, const RequestConsistency& c) override {
    recorder_->Read(c);
    return LocalReplica::NewIterator(std::move(lower), std::move(upper), c);
  }

 private:
  Recorder* recorder_;
  const std::string tablet_start_, tablet_end_;
};

class RecordingResolver : public ReplicaResolver {
 public:
  RecordingResolver(StorageEngine* engine, Recorder* recorder) : engine_(engine), recorder_(recorder) {}
  std::shared_ptr<Replica> ReplicaFor(const std::shared_ptr<const TableSchema>&, const Tablet& tablet) override {
    return std::make_shared<RecordingReplica>(engine_, recorder_, tablet);
  }

 private:
  StorageEngine* engine_;
  Recorder* recorder_;
};

class RequestConsistencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tdb_ = std::make_unique<testing::TestDatabase>("cql_request_consistency");
    resolver_ = std::make_unique<RecordingResolver>(tdb_->db().engine(), &recorder_);
    processor_ = std::make_unique<QueryProcessor>(&tdb_->coordinator(), NodeInfo{});
    ASSERT_EQ(Query("CREATE KEYSPACE ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}"),
              Opcode::kResult);
    ASSERT_EQ(Query("CREATE TABLE ks.t (k int, c int, v text, l list<text>, PRIMARY KEY (k, c))"), Opcode::kResult);
    ASSERT_EQ(Query("CREATE TABLE ks.plain (k int PRIMARY KEY, v text)"), Opcode::kResult);
    tdb_->coordinator().AttachReplicaResolver(resolver_.get());
    recorder_.TakeReadLevels();
    recorder_.TakeWrites();
  }
  void TearDown() override {
    tdb_->coordinator().AttachReplicaResolver(nullptr);
    processor_.reset();
  }

  Opcode Query(const std::string& cql, Consistency level = Consistency::kOne) {
    QueryRequest q;
    q.query = cql;
    q.params.consistency = level;
    Reply r = processor_->Process(conn_, Request{q}, {});
    EXPECT_EQ(r.opcode, Opcode::kResult) << cql;
    return r.opcode;
  }

  Opcode Batch(BatchRequest::Type type, Consistency level, const std::vector<std::string>& statements) {
    BatchRequest b;
    b.type = type;
    b.consistency = level;
    for (const auto& s : statements) b.statements.push_back(BatchEntry{false, s, {}, {}});
    Reply r = processor_->Process(conn_, Request{b}, {});
    EXPECT_EQ(r.opcode, Opcode::kResult);
    return r.opcode;
  }

  std::unique_ptr<testing::TestDatabase> tdb_;
  Recorder recorder_;
  std::unique_ptr<RecordingResolver> resolver_;
  std::unique_ptr<QueryProcessor> processor_;
  ConnectionState conn_;
};

TEST_F(RequestConsistencyTest, WritesCarryTheRequestLevelAndWriteType) {
  Query("INSERT INTO ks.t (k, c, v) VALUES (1, 1, 'a')", Consistency::kQuorum);
  EXPECT_EQ(recorder_.TakeWrites(), (std::set<Seen>{{ConsistencyLevel::kQuorum, WriteType::kSimple}}));

  Query("UPDATE ks.plain SET v = 'b' WHERE k = 2", Consistency::kAll);
  EXPECT_EQ(recorder_.TakeWrites(), (std::set<Seen>{{ConsistencyLevel::kAll, WriteType::kSimple}}));

  Batch(BatchRequest::kUnlogged, Consistency::kTwo,
        {"INSERT INTO ks.t (k, c, v) VALUES (3, 1, 'c')", "INSERT INTO ks.plain (k, v) VALUES (3, 'c')"});
  EXPECT_EQ(recorder_.TakeWrites(), (std::set<Seen>{{ConsistencyLevel::kTwo, WriteType::kUnloggedBatch}}));

  Batch(BatchRequest::kLogged, Consistency::kLocalQuorum, {"DELETE FROM ks.plain WHERE k = 3"});
  EXPECT_EQ(recorder_.TakeWrites(), (std::set<Seen>{{ConsistencyLevel::kLocalQuorum, WriteType::kBatch}}));

  // A BATCH statement sent as a QUERY names its batch type too, as Cassandra's WriteTimeout does.
  Query("BEGIN UNLOGGED BATCH INSERT INTO ks.plain (k, v) VALUES (4, 'd'); APPLY BATCH", Consistency::kThree);
  EXPECT_EQ(recorder_.TakeWrites(), (std::set<Seen>{{ConsistencyLevel::kThree, WriteType::kUnloggedBatch}}));

  // A conditional write reads the current row and commits at the request's
  // level, the commit with write type CAS.
  recorder_.TakeReadLevels();
  Query("INSERT INTO ks.plain (k, v) VALUES (9, 'x') IF NOT EXISTS", Consistency::kQuorum);
  EXPECT_EQ(recorder_.TakeReadLevels(), std::set<ConsistencyLevel>{ConsistencyLevel::kQuorum});
  EXPECT_EQ(recorder_.TakeWrites(), (std::set<Seen>{{ConsistencyLevel::kQuorum, WriteType::kCas}}));

  // TRUNCATE reaches every replica or fails, whatever the request's level.
  Query("TRUNCATE ks.plain", Consistency::kOne);
  EXPECT_EQ(recorder_.TakeWrites(), (std::set<Seen>{{ConsistencyLevel::kAll, WriteType::kSimple}}));
}

// The replica serving a tablet is chosen per request (tablet maps hold
// none), and a write's ops are grouped by the tablet they fall in: one
// write per tablet reached, with every op of that tablet and no other.
TEST_F(RequestConsistencyTest, AWriteReachesEachTabletItTouchesOnceWithAllItsOps) {
  recorder_.TakeAppliedTo();
  std::vector<std::string> one_partition;
  for (int c = 0; c < 10; ++c) {
    one_partition.push_back("INSERT INTO ks.t (k, c, v) VALUES (1, " + std::to_string(c) + ", 'x')");
  }
  Batch(BatchRequest::kUnlogged, Consistency::kQuorum, one_partition);
  EXPECT_EQ(recorder_.TakeAppliedTo().size(), 1u);

  std::vector<std::string> spread;
  for (int k = 0; k < 32; ++k) spread.push_back("INSERT INTO ks.plain (k, v) VALUES (" + std::to_string(k) + ", 'y')");
  Batch(BatchRequest::kUnlogged, Consistency::kQuorum, spread);
  const std::vector<std::string> applied = recorder_.TakeAppliedTo();
  const std::set<std::string> distinct(applied.begin(), applied.end());
  EXPECT_EQ(distinct.size(), applied.size()) << "a tablet was written twice by one batch";
  auto plain = tdb_->db().GetTable("ks", "plain");
  ASSERT_TRUE(plain.ok());
  const auto tablets = tdb_->db().TabletRanges(**plain);
  ASSERT_EQ(tablets.size(), 4u);  // a hash table's initial tablets
  EXPECT_EQ(applied.size(), tablets.size()) << "32 partitions reach every tablet of 4";
  for (const auto& t : tablets) EXPECT_EQ(distinct.count(t.start), 1u);
}

TEST_F(RequestConsistencyTest, ReadsCarryTheRequestLevel) {
  for (int c = 0; c < 20; ++c) {
    Query("INSERT INTO ks.t (k, c, v) VALUES (1, " + std::to_string(c) + ", 'x')", Consistency::kOne);
  }
  recorder_.TakeWrites();
  recorder_.TakeReadLevels();

  Query("SELECT * FROM ks.t WHERE k = 1 AND c = 3", Consistency::kQuorum);  // one row
  EXPECT_EQ(recorder_.TakeReadLevels(), std::set<ConsistencyLevel>{ConsistencyLevel::kQuorum});

  Query("SELECT * FROM ks.t WHERE k = 1 AND c > 3 LIMIT 5", Consistency::kAll);  // a slice
  EXPECT_EQ(recorder_.TakeReadLevels(), std::set<ConsistencyLevel>{ConsistencyLevel::kAll});

  Query("SELECT * FROM ks.t", Consistency::kTwo);  // a range
  EXPECT_EQ(recorder_.TakeReadLevels(), std::set<ConsistencyLevel>{ConsistencyLevel::kTwo});

  // Paging: each page's reads at the level of the request that asked for it.
  QueryRequest q;
  q.query = "SELECT * FROM ks.t WHERE k = 1";
  q.params.consistency = Consistency::kLocalOne;
  q.params.page_size = 7;
  Reply first = processor_->Process(conn_, Request{q}, {});
  ASSERT_EQ(first.opcode, Opcode::kResult);
  EXPECT_EQ(recorder_.TakeReadLevels(), std::set<ConsistencyLevel>{ConsistencyLevel::kLocalOne});
}

TEST_F(RequestConsistencyTest, ListReadBeforeWriteUsesTheRequestLevel) {
  Query("INSERT INTO ks.t (k, c, l) VALUES (5, 1, ['a', 'b'])", Consistency::kOne);
  recorder_.TakeWrites();
  recorder_.TakeReadLevels();
  // l[i] = v reads the current list first (as Cassandra), at the write's level.
  Query("UPDATE ks.t SET l[1] = 'z' WHERE k = 5 AND c = 1", Consistency::kQuorum);
  EXPECT_EQ(recorder_.TakeReadLevels(), std::set<ConsistencyLevel>{ConsistencyLevel::kQuorum});
  EXPECT_EQ(recorder_.TakeWrites(), (std::set<Seen>{{ConsistencyLevel::kQuorum, WriteType::kSimple}}));
}

}  // namespace
}  // namespace tessera::cql
