// Paxos pieces on their own (issue 30): ballots (cluster/paxos_ballot.h) and
// a replica's Paxos state over a real storage engine (cluster/paxos_state.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>
#include <vector>

#include "cluster/paxos_ballot.h"
#include "cluster/paxos_state.h"
#include "cluster/replica_reads.h"

namespace tessera::cluster {
namespace {

std::string HostId(char last) { return std::string(15, '\x01') + last; }

TEST(PaxosBallotTest, BallotsOfOneClockOnlyGrowAndStayAboveWhatWasSeen) {
  BallotClock clock(HostId('a'));
  std::string last;
  for (int i = 0; i < 1000; ++i) {
    std::string b = clock.Next();
    ASSERT_EQ(b.size(), 16u);
    EXPECT_EQ(static_cast<uint8_t>(b[6]) >> 4, 1) << "version 1";
    EXPECT_EQ(static_cast<uint8_t>(b[8]) >> 6, 2) << "RFC 4122 variant";
    EXPECT_GT(CompareBallots(b, last), 0) << i;
    last = b;
  }
  // A ballot seen from a clock ahead: the next one is later still.
  const int64_t ahead = BallotMicros(last) + 5'000'000;
  const std::string next = clock.Next(ahead);
  EXPECT_GT(BallotMicros(next), ahead);
  EXPECT_GT(CompareBallots(clock.Next(), next), 0);
}

TEST(PaxosBallotTest, BallotsOrderByTimeThenNodeAndNoneIsBelowAll) {
  BallotClock a(HostId('a')), b(HostId('b'));
  const std::string x = a.Next(), y = b.Next(BallotMicros(x));
  EXPECT_LT(CompareBallots(x, y), 0);
  EXPECT_GT(CompareBallots(y, x), 0);
  EXPECT_EQ(CompareBallots(x, x), 0);
  EXPECT_LT(CompareBallots("", x), 0);
  EXPECT_EQ(CompareBallots("", ""), 0);
  EXPECT_EQ(MaxBallot(x, y), y);
  // The same time on two nodes: ordered by the node bytes, never equal.
  std::string same = x;
  same[15] = static_cast<char>(same[15] + 1);
  EXPECT_NE(CompareBallots(x, same), 0);
  // Concurrent callers of one clock never get the same ballot.
  std::set<std::string> seen;
  std::mutex mu;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        std::string ballot = a.Next();
        std::lock_guard<std::mutex> lock(mu);
        seen.insert(ballot);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(seen.size(), 2000u);
}

class PaxosStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("tessera_paxos_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    Open();
  }
  void TearDown() override {
    engine_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Open() {
    engine_.reset();
    StorageOptions o;
    o.path = dir_.string();
    auto e = StorageEngine::Open(o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    engine_ = std::move(*e);
  }
  PaxosResponse Run(PaxosStore& store, PaxosRequest::Phase phase, const std::string& ballot, WriteSet update = {},
                    const std::string& partition = "p1") {
    PaxosRequest r;
    r.phase = phase;
    r.table_uuid = std::string(16, 'u');
    r.partition = partition;
    r.ballot = ballot;
    r.update = std::move(update);
    auto response = store.Handle(kTable, r);
    EXPECT_TRUE(response.ok()) << response.status().ToString();
    return response.ok() ? *response : PaxosResponse{};
  }
  static WriteSet Update(const std::string& value) {
    WriteSet ws;
    ws.Merge("p1row", value);
    return ws;
  }

  static constexpr uint32_t kTable = 7;
  std::filesystem::path dir_;
  std::unique_ptr<StorageEngine> engine_;
};

TEST_F(PaxosStateTest, PromisesAcceptsAndCommitsAsPaxosRequires) {
  BallotClock clock(HostId('a'));
  const std::string b1 = clock.Next(), b2 = clock.Next(), b3 = clock.Next(), b4 = clock.Next();
  PaxosStore store(engine_.get());
  using P = PaxosRequest::Phase;

  EXPECT_TRUE(Run(store, P::kPrepare, b2).ok);
  // An older ballot is refused, and told which one won.
  PaxosResponse refused = Run(store, P::kPrepare, b1);
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.promised, b2);
  EXPECT_FALSE(Run(store, P::kPropose, b1, Update("old")).ok);
  EXPECT_TRUE(Run(store, P::kPropose, b2, Update("v2")).ok);

  // A later prepare sees the accepted proposal, not committed yet.
  PaxosResponse promise = Run(store, P::kPrepare, b3);
  ASSERT_TRUE(promise.ok);
  EXPECT_EQ(promise.accepted_ballot, b2);
  ASSERT_EQ(promise.accepted_update.size(), 1u);
  EXPECT_EQ(promise.accepted_update.ops()[0].value, "v2");
  EXPECT_TRUE(promise.committed_ballot.empty());
  // The proposal of the overtaken ballot is refused now.
  EXPECT_FALSE(Run(store, P::kPropose, b2, Update("v2 again")).ok);

  // Committing (under the later ballot) writes the data and ends the proposal.
  EXPECT_TRUE(Run(store, P::kCommit, b3, Update("v2")).ok);
  std::string stored;
  ASSERT_TRUE(engine_->Get(AbsoluteKey(kTable, "p1row"), &stored).ok());
  EXPECT_EQ(stored, "v2");

  // The state is durable: a reopened engine answers the same.
  Open();
  PaxosStore reopened(engine_.get());
  PaxosResponse after = Run(reopened, P::kPrepare, b4);
  ASSERT_TRUE(after.ok);
  EXPECT_TRUE(after.accepted_ballot.empty()) << "committed: no longer in progress";
  EXPECT_EQ(after.committed_ballot, b3);
  ASSERT_EQ(after.committed_update.size(), 1u);
  EXPECT_EQ(after.committed_update.ops()[0].key, "p1row");
  EXPECT_FALSE(Run(reopened, P::kPrepare, b3).ok);
  // An older commit arriving late (a repair of a replica behind) keeps the newest as the last one.
  EXPECT_TRUE(Run(reopened, P::kCommit, b1, Update("old")).ok);
  EXPECT_EQ(Run(reopened, P::kPrepare, clock.Next()).committed_ballot, b3);
}

// What a tablet migration carries: the rows of a range, exported by an old
// replica and merged into the new one's, keeping the later of each part.
TEST_F(PaxosStateTest, AMigrationCarriesTheStateOfItsRangeAndMergesIt) {
  BallotClock clock(HostId('a'));
  const std::string b1 = clock.Next(), b2 = clock.Next(), b3 = clock.Next(), b4 = clock.Next(), b5 = clock.Next();
  using P = PaxosRequest::Phase;
  const std::string uuid(16, 'u');
  PaxosStore source(engine_.get());
  // p1: accepted at b2, not committed (the state a leaving replica must not take with it);
  // p2: committed at b1; q9: outside the moved range [p, q).
  ASSERT_TRUE(Run(source, P::kPrepare, b2, {}, "p1").ok);
  ASSERT_TRUE(Run(source, P::kPropose, b2, Update("v2"), "p1").ok);
  ASSERT_TRUE(Run(source, P::kPrepare, b1, {}, "p2").ok);
  ASSERT_TRUE(Run(source, P::kCommit, b1, Update("v1"), "p2").ok);
  ASSERT_TRUE(Run(source, P::kPrepare, b1, {}, "q9").ok);
  auto rows = source.Export(uuid, "p", "q");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].first, "p1");
  EXPECT_EQ((*rows)[1].first, "p2");
  EXPECT_EQ(source.Export(std::string(16, 'x'), "", "")->size(), 0u);  // another table's

  // The new replica (another store) already promised b3 on p1 as a pending replica.
  const auto target_dir = dir_.string() + "_target";
  std::filesystem::remove_all(target_dir);
  StorageOptions o;
  o.path = target_dir;
  auto target_engine = StorageEngine::Open(o);
  ASSERT_TRUE(target_engine.ok());
  PaxosStore target(target_engine->get());
  ASSERT_TRUE(Run(target, P::kPrepare, b3, {}, "p1").ok);
  ASSERT_TRUE(target.Import(uuid, *rows).ok());
  ASSERT_TRUE(target.Import(uuid, *rows).ok());  // twice changes nothing
  // p1: its promise stays b3 (b2 refused), and the accepted proposal is there for the next round to finish.
  EXPECT_FALSE(Run(target, P::kPrepare, b2, {}, "p1").ok);
  PaxosResponse p1 = Run(target, P::kPrepare, b4, {}, "p1");
  ASSERT_TRUE(p1.ok);
  EXPECT_EQ(p1.accepted_ballot, b2);
  ASSERT_EQ(p1.accepted_update.size(), 1u);
  EXPECT_EQ(p1.accepted_update.ops()[0].value, "v2");
  // p2: the last commit came along.
  PaxosResponse p2 = Run(target, P::kPrepare, b4, {}, "p2");
  EXPECT_EQ(p2.committed_ballot, b1);
  EXPECT_TRUE(p2.accepted_ballot.empty());
  // A proposal the target has since seen committed later is no longer in progress after a merge.
  ASSERT_TRUE(Run(target, P::kCommit, b5, Update("v5"), "p1").ok);
  ASSERT_TRUE(target.Import(uuid, *rows).ok());
  PaxosResponse after = Run(target, P::kPrepare, clock.Next(), {}, "p1");
  EXPECT_TRUE(after.accepted_ballot.empty());
  EXPECT_EQ(after.committed_ballot, b5);
  // Rows that do not decode are refused (another node sent them: InvalidArgument).
  EXPECT_EQ(target.Import(uuid, {{"p1", "garbage"}}).code(), Status::Code::kInvalidArgument);
  target_engine->reset();
  std::filesystem::remove_all(target_dir);
}

// Rows go once nothing is in progress and their last ballot is older than
// max(3 hours, gc_grace_seconds), or once their table is gone.
TEST_F(PaxosStateTest, PruningDropsSettledRowsAfterTheGraceAndThoseOfDroppedTables) {
  BallotClock clock(HostId('a'));
  using P = PaxosRequest::Phase;
  PaxosStore store(engine_.get());
  const std::string b1 = clock.Next(), b2 = clock.Next();
  ASSERT_TRUE(Run(store, P::kPrepare, b1, {}, "settled").ok);
  ASSERT_TRUE(Run(store, P::kCommit, b1, Update("v"), "settled").ok);
  ASSERT_TRUE(Run(store, P::kPrepare, b2, {}, "in progress").ok);
  ASSERT_TRUE(Run(store, P::kPropose, b2, Update("w"), "in progress").ok);
  const int64_t at = BallotMicros(b2);
  const int64_t hour = int64_t{3600} * 1'000'000;
  int32_t gc_grace = 0;
  bool table_exists = true;
  auto gc_grace_of = [&](const std::string& uuid) -> std::optional<int32_t> {
    EXPECT_EQ(uuid, std::string(16, 'u'));
    if (!table_exists) return std::nullopt;
    return gc_grace;
  };
  auto count = [&] { return store.Rows()->size(); };
  ASSERT_EQ(count(), 2u);
  EXPECT_EQ(*store.Prune(gc_grace_of, at + 2 * hour), 0u);  // gc_grace 0: still the 3-hour floor
  gc_grace = 864000;                                           // 10 days
  EXPECT_EQ(*store.Prune(gc_grace_of, at + 4 * hour), 0u);
  EXPECT_EQ(*store.Prune(gc_grace_of, at + 241 * hour), 1u);  // the settled row; the proposal in progress stays
  ASSERT_EQ(count(), 1u);
  EXPECT_EQ(store.Rows()->front().partition, "in progress");
  EXPECT_EQ(store.Rows()->front().accepted_ballot, b2);
  table_exists = false;  // dropped: everything goes
  EXPECT_EQ(*store.Prune(gc_grace_of, at), 1u);
  EXPECT_EQ(count(), 0u);
}

TEST(PaxosUpdateTest, UpdatesRoundTripAndTruncatedBytesAreCorruption) {
  WriteSet ws;
  ws.Merge("k1", "v1");
  ws.DeleteRange("a", "b");
  ws.Merge(std::string("k\0\x02", 3), "");
  WriteSet back;
  ASSERT_TRUE(DecodePaxosUpdate(EncodePaxosUpdate(ws), &back).ok());
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back.ops()[1].kind, WriteSet::Op::kDeleteRange);
  EXPECT_EQ(back.ops()[2].key, std::string("k\0\x02", 3));
  // Cut within the last operation (kind, key "k\0\2", empty value: 1 + 1 + 3 + 1 bytes).
  const std::string bytes = EncodePaxosUpdate(ws);
  for (size_t cut = bytes.size() - 5; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(DecodePaxosUpdate(bytes.substr(0, cut), &back).ok()) << cut;
  }
  EXPECT_FALSE(DecodePaxosUpdate(std::string("\x07", 1), &back).ok()) << "an unknown kind";
}

}  // namespace
}  // namespace tessera::cluster
