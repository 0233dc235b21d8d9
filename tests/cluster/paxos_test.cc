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
  PaxosResponse Run(PaxosStore& store, PaxosRequest::Phase phase, const std::string& ballot, WriteSet update = {}) {
    PaxosRequest r;
    r.phase = phase;
    r.table_uuid = std::string(16, 'u');
    r.partition = "p1";
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
