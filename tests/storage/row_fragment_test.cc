#include "storage/row_fragment.h"

#include <gtest/gtest.h>

#include <random>

#include "storage/counter_shards.h"
#include "storage/merge_operator.h"

namespace tessera {
namespace {

Cell Live(uint32_t col, int64_t ts, std::string v, std::string path = "") {
  Cell c;
  c.column_id = col;
  c.timestamp = ts;
  c.value = std::move(v);
  if (!path.empty()) {
    c.flags |= Cell::kHasPath;
    c.path = std::move(path);
  }
  return c;
}

Cell Dead(uint32_t col, int64_t ts, uint32_t ldt = 100) {
  Cell c;
  c.column_id = col;
  c.timestamp = ts;
  c.flags = Cell::kTombstone;
  c.local_deletion_time = ldt;
  return c;
}

RowFragment Row(std::vector<Cell> cells) {
  RowFragment r;
  r.cells = std::move(cells);
  NormalizeRow(&r);
  return r;
}

// Reconciling a, b and c is commutative (ab == ba) and associative ((ab)c == a(bc)), and the
// merge operator's byte-level path gives (ab)c. *abc receives (ab)c.
::testing::AssertionResult ReconcileLawsHold(const RowFragment& a, const RowFragment& b, const RowFragment& c,
                                             RowFragment* abc) {
  RowFragment ab = a, ba = b;
  ReconcileRow(&ab, b);
  ReconcileRow(&ba, a);
  if (!(ab == ba)) return ::testing::AssertionFailure() << "not commutative";
  RowFragment ab_c = ab, bc = b;
  ReconcileRow(&ab_c, c);
  ReconcileRow(&bc, c);
  RowFragment a_bc = a;
  ReconcileRow(&a_bc, bc);
  if (!(ab_c == a_bc)) return ::testing::AssertionFailure() << "not associative";
  std::string ea, eb, ec, merged, expect;
  EncodeRowFragment(a, &ea);
  EncodeRowFragment(b, &eb);
  EncodeRowFragment(c, &ec);
  if (!MergeStoredValues(ea, {eb, ec}, &merged).ok()) return ::testing::AssertionFailure() << "merge failed";
  EncodeRowFragment(ab_c, &expect);
  if (merged != expect) return ::testing::AssertionFailure() << "the merge operator disagrees";
  *abc = std::move(ab_c);
  return ::testing::AssertionSuccess();
}

TEST(RowFragmentTest, LastWriteWinsRegardlessOfArrivalOrder) {
  RowFragment newer = Row({Live(1, 20, "new")}), older = Row({Live(1, 10, "old")});
  RowFragment a = older;
  ReconcileRow(&a, newer);
  RowFragment b = newer;
  ReconcileRow(&b, older);
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.cells.size(), 1u);
  EXPECT_EQ(a.cells[0].value, "new");
}

TEST(RowFragmentTest, TombstoneWinsTiesAndRowDeletionShadowsOlderCells) {
  RowFragment r = Row({Live(1, 10, "x")});
  ReconcileRow(&r, Row({Dead(1, 10)}));
  ASSERT_EQ(r.cells.size(), 1u);
  EXPECT_TRUE(r.cells[0].IsTombstone());

  RowFragment row = Row({Live(1, 10, "a"), Live(2, 30, "b")});
  row.liveness = LivenessInfo{10, 0, 0};
  RowFragment del;
  del.deletion = DeletionTime{20, 100};
  ReconcileRow(&row, del);
  EXPECT_TRUE(row.liveness.IsEmpty());
  ASSERT_EQ(row.cells.size(), 1u);
  EXPECT_EQ(row.cells[0].column_id, 2u);  // written after the deletion
}

TEST(RowFragmentTest, ComplexDeletionShadowsOlderCollectionElements) {
  Cell cd;
  cd.column_id = 3;
  cd.flags = Cell::kComplexDeletion;
  cd.timestamp = 49;
  cd.local_deletion_time = 100;
  RowFragment r = Row({Live(3, 10, "", "a"), Live(3, 10, "", "b")});
  ReconcileRow(&r, Row({cd, Live(3, 50, "", "c")}));
  std::vector<std::string> paths;
  for (const auto& c : r.cells) {
    if (c.IsLive(0)) paths.push_back(c.path);
  }
  EXPECT_EQ(paths, std::vector<std::string>{"c"});
}

// Random fragments: reconciliation is commutative and associative, so the
// order in which RocksDB merges operands cannot change the result.
TEST(RowFragmentTest, ReconcileIsCommutativeAndAssociative) {
  std::mt19937_64 rng(3);
  auto rnd = [&](int lo, int hi) { return static_cast<int>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  auto random_row = [&] {
    std::vector<Cell> cells;
    for (int i = 0, n = rnd(0, 4); i < n; ++i) {
      int kind = rnd(0, 3);
      uint32_t col = static_cast<uint32_t>(rnd(0, 2));
      int64_t ts = rnd(1, 5);
      if (kind == 0) cells.push_back(Dead(col, ts, static_cast<uint32_t>(rnd(0, 3))));
      else if (kind == 1) cells.push_back(Live(col, ts, std::string(1, static_cast<char>('a' + rnd(0, 2))), rnd(0, 1) ? "p" : ""));
      else cells.push_back(Live(col, ts, std::string(1, static_cast<char>('a' + rnd(0, 2)))));
    }
    RowFragment r = Row(cells);
    if (rnd(0, 3) == 0) r.deletion = DeletionTime{rnd(1, 5), static_cast<uint32_t>(rnd(0, 3))};
    if (rnd(0, 2) == 0) r.liveness = LivenessInfo{rnd(1, 5), 0, 0};
    NormalizeRow(&r);
    return r;
  };
  for (int i = 0; i < 5000; ++i) {
    RowFragment a = random_row(), b = random_row(), c = random_row(), abc;
    ASSERT_TRUE(ReconcileLawsHold(a, b, c, &abc));
  }
}

Cell Counter(uint32_t col, int64_t ts, int64_t delta) {
  Cell c;
  c.column_id = col;
  c.timestamp = ts;
  c.flags = Cell::kCounter;
  for (int i = 7; i >= 0; --i) c.value.push_back(static_cast<char>(static_cast<uint64_t>(delta) >> (8 * i)));
  return c;
}

TEST(RowFragmentTest, CounterIncrementsAddUpAndDeletionsAreFinal) {
  RowFragment a = Row({Counter(3, 1, 5)}), b = Row({Counter(3, 9, -2)}), c = Row({Counter(3, 4, 10)});
  ReconcileRow(&a, b);
  ReconcileRow(&a, c);
  ASSERT_EQ(a.cells.size(), 1u);
  EXPECT_EQ(a.cells[0], Counter(3, 9, 13));  // the sum, the greatest timestamp
  RowFragment dead = Row({Dead(3, 2)});      // a tombstone older than the increments still wins
  ReconcileRow(&a, dead);
  EXPECT_EQ(a.cells, (std::vector<Cell>{Dead(3, 2)}));
  RowFragment later = Row({Counter(3, 50, 1)});
  ReconcileRow(&later, a);
  EXPECT_EQ(later.cells, (std::vector<Cell>{Dead(3, 2)}));
  // Reconciled in every order and grouping, with row deletions among them, through the merge operator.
  std::mt19937_64 rng(5);
  auto rnd = [&](int lo, int hi) { return static_cast<int>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  auto random_row = [&] {
    std::vector<Cell> cells;
    for (int i = 0, n = rnd(0, 3); i < n; ++i) {
      const uint32_t col = static_cast<uint32_t>(rnd(3, 4));
      if (rnd(0, 5) == 0) cells.push_back(Dead(col, rnd(1, 9)));
      else cells.push_back(Counter(col, rnd(1, 9), rnd(-3, 3)));
    }
    RowFragment r = Row(cells);
    if (rnd(0, 6) == 0) r.deletion = DeletionTime{rnd(1, 9), 0};
    NormalizeRow(&r);
    return r;
  };
  for (int i = 0; i < 5000; ++i) {
    RowFragment x = random_row(), y = random_row(), z = random_row(), xyz;
    ASSERT_TRUE(ReconcileLawsHold(x, y, z, &xyz));
    RowFragment xz = x;  // and the grouping that leaves y last, where a deletion may come between increments
    ReconcileRow(&xz, z);
    ReconcileRow(&xz, y);
    ASSERT_EQ(xyz, xz);
  }
}

int64_t CounterValue(const Cell& c) {
  int64_t v = 0;
  for (char ch : c.value) v = static_cast<int64_t>((static_cast<uint64_t>(v) << 8) | static_cast<uint8_t>(ch));
  return v;
}

// What a leader replica `host` stores for an increment of `delta` given its row.
RowFragment Lead(const RowFragment& current, const std::string& host, int64_t delta, int64_t ts = 1) {
  return LeadCounterIncrements(current, Row({Counter(3, ts, delta)}), host);
}

TEST(RowFragmentTest, CounterShardsCountEachIncrementOnceWhateverIsDeliveredTwice) {
  // Leader A leads +5 then +2 (each after storing the last), leader B +10.
  RowFragment a_held;
  RowFragment a1 = Lead(a_held, "A", 5);
  ASSERT_EQ(a1.cells.size(), 1u);
  EXPECT_EQ(a1.cells[0].shards, (std::vector<CounterShard>{{"A", 1, 5}}));
  EXPECT_EQ(CounterValue(a1.cells[0]), 5);
  ReconcileRow(&a_held, a1);
  RowFragment a2 = Lead(a_held, "A", 2);
  EXPECT_EQ(a2.cells[0].shards, (std::vector<CounterShard>{{"A", 2, 7}}));
  ReconcileRow(&a_held, a2);
  RowFragment b1 = Lead(RowFragment{}, "B", 10);
  // A replica that gets A's shards late, twice and out of order, and B's twice (a hint after the write).
  RowFragment replica = b1;
  for (const RowFragment* f : {&a2, &a1, &b1, &a2, &a1}) ReconcileRow(&replica, *f);
  ASSERT_EQ(replica.cells.size(), 1u);
  EXPECT_EQ(CounterValue(replica.cells[0]), 17);
  EXPECT_EQ(replica.cells[0].shards, (std::vector<CounterShard>{{"A", 2, 7}, {"B", 1, 10}}));
  // A read reconciling replicas that hold different subsets, and a repair writing the result back.
  RowFragment behind = a1, repaired = replica;
  ReconcileRow(&repaired, behind);
  ReconcileRow(&behind, replica);
  EXPECT_EQ(behind, repaired);
  EXPECT_EQ(CounterValue(behind.cells[0]), 17);
  // The unsharded part (a single node's plain deltas) still adds up beside the shards.
  RowFragment mixed = Row({Counter(3, 1, 100)});
  ReconcileRow(&mixed, replica);
  ReconcileRow(&mixed, a2);  // a shard again: counted once
  EXPECT_EQ(CounterValue(mixed.cells[0]), 117);
  // A later increment led on the mixed row keeps the unsharded part.
  RowFragment a3 = LeadCounterIncrements(mixed, Row({Counter(3, 2, -4)}), "A");
  EXPECT_EQ(a3.cells[0].shards, (std::vector<CounterShard>{{"A", 3, 3}}));
  ReconcileRow(&mixed, a3);
  EXPECT_EQ(CounterValue(mixed.cells[0]), 113);
  // A tombstone is still final, and passes through a leader unchanged.
  RowFragment dead = Row({Dead(3, 1)});
  EXPECT_FALSE(HasCounterIncrements(dead));
  EXPECT_EQ(LeadCounterIncrements(mixed, dead, "A"), dead);
  ReconcileRow(&mixed, dead);
  EXPECT_EQ(mixed.cells, (std::vector<Cell>{Dead(3, 1)}));
  // Shards encode and decode (flag 0x20).
  std::string enc;
  EncodeRowFragment(replica, &enc);
  RowFragment back;
  ASSERT_TRUE(DecodeRowFragment(enc, &back).ok());
  EXPECT_EQ(back, replica);
  for (size_t cut = 0; cut < enc.size(); ++cut) EXPECT_FALSE(DecodeRowFragment(enc.substr(0, cut), &back).ok());
}

TEST(RowFragmentTest, CounterShardReconciliationIsCommutativeAssociativeAndIdempotent) {
  std::mt19937_64 rng(11);
  auto rnd = [&](int lo, int hi) { return static_cast<int>(std::uniform_int_distribution<int>(lo, hi)(rng)); };
  auto random_row = [&] {
    std::vector<Cell> cells;
    for (int i = 0, n = rnd(0, 3); i < n; ++i) {
      const uint32_t col = static_cast<uint32_t>(rnd(3, 4));
      if (rnd(0, 8) == 0) {
        cells.push_back(Dead(col, rnd(1, 9)));
        continue;
      }
      Cell c = Counter(col, rnd(1, 9), 0);
      RowFragment r = LeadCounterIncrements(RowFragment{}, Row({c}), std::string(1, static_cast<char>('A' + rnd(0, 2))));
      Cell shard = r.cells[0];
      shard.shards[0].clock = rnd(1, 4);
      shard.shards[0].count = rnd(-5, 5);
      shard.value.clear();
      for (int b = 7; b >= 0; --b) shard.value.push_back(static_cast<char>(static_cast<uint64_t>(shard.shards[0].count) >> (8 * b)));
      cells.push_back(shard);
    }
    return Row(cells);
  };
  for (int i = 0; i < 5000; ++i) {
    RowFragment x = random_row(), y = random_row(), z = random_row(), xyz;
    ASSERT_TRUE(ReconcileLawsHold(x, y, z, &xyz));
    RowFragment twice = xyz;
    ReconcileRow(&twice, y);  // a shard delivered again changes nothing
    ASSERT_EQ(twice, xyz);
  }
}

TEST(RowFragmentTest, EncodingRoundTripsAndRejectsGarbage) {
  RowFragment r = Row({Live(1, 5, "v"), Dead(2, 6), Live(7, 8, "e", "path")});
  r.liveness = LivenessInfo{5, 60, 1000};
  r.cells[0].flags |= Cell::kExpiring;
  r.cells[0].ttl = 60;
  r.cells[0].local_deletion_time = 1000;
  std::string enc;
  EncodeRowFragment(r, &enc);
  RowFragment back;
  ASSERT_TRUE(DecodeRowFragment(enc, &back).ok());
  EXPECT_EQ(back, r);
  for (size_t cut = 0; cut < enc.size(); ++cut) EXPECT_FALSE(DecodeRowFragment(enc.substr(0, cut), &back).ok());
  EXPECT_FALSE(DecodeRowFragment(enc + "x", &back).ok());
}

TEST(RowFragmentTest, GarbageCollectionExpiresTtlAndPurgesAfterGcGrace) {
  Cell ttl = Live(1, 5, "v");
  ttl.flags |= Cell::kExpiring;
  ttl.ttl = 10;
  ttl.local_deletion_time = 1010;  // written at 1000
  RowFragment r = Row({ttl, Dead(2, 5, 1000)});
  EXPECT_FALSE(CollectGarbage(&r, 1005, 100, true));  // nothing expired yet, tombstone too young
  EXPECT_TRUE(CollectGarbage(&r, 1010, 100, false));  // the TTL cell becomes a tombstone
  EXPECT_TRUE(r.cells[0].IsTombstone());
  EXPECT_EQ(r.cells[0].local_deletion_time, 1000u);
  EXPECT_EQ(r.cells.size(), 2u);                       // no purge without `purge`
  EXPECT_TRUE(CollectGarbage(&r, 1100, 100, true));
  EXPECT_TRUE(r.IsEmpty());
}

}  // namespace
}  // namespace tessera
