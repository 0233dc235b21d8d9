#include "keyviz/history.h"

#include "common/bytes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace tessera::keyviz {
namespace {

TabletCounterSample Tablet(TabletId id, std::string start, uint64_t writes, uint64_t reads = 0) {
  TabletCounterSample t;
  t.tablet = id;
  t.start = std::move(start);
  t.label = "'" + t.start + "'";
  t.writes = writes;
  t.reads = reads;
  t.bytes_written = writes * 100;
  return t;
}

TEST(KeyVizHistoryTest, AColumnHoldsEachTabletsGrowthPerSecondSinceThePreviousSample) {
  KeyVizHistory h({});
  TableCounterSample t{7, 10, 20, 3000, {Tablet(1, "", 100), Tablet(2, "m", 40, 8)}};
  h.AddSample(1'000'000, {t});
  EXPECT_EQ(h.size(), 0u);  // the baseline
  t.read_ops = 20;
  t.write_ops = 40;
  t.latency_sum_micros = 3000 + 30 * 200;  // 30 calls of 200 us
  t.tablets = {Tablet(1, "", 300), Tablet(3, "m", 10), Tablet(4, "t", 6, 2)};  // 2 split into 3 and 4
  h.AddSample(3'000'000, {t});
  ASSERT_EQ(h.size(), 1u);
  const KeyVizColumn& c = h.column(0);
  EXPECT_EQ(c.start_micros, 1'000'000);
  EXPECT_EQ(c.end_micros, 3'000'000);
  ASSERT_EQ(c.rows.size(), 3u);
  EXPECT_FLOAT_EQ(c.rows[0].writes, 100);  // (300 - 100) / 2 s
  EXPECT_FLOAT_EQ(c.rows[0].bytes, 10000);
  EXPECT_FLOAT_EQ(c.rows[1].writes, 5);    // a new tablet counts from zero
  EXPECT_FLOAT_EQ(c.rows[2].reads, 1);
  EXPECT_EQ(c.rows[2].Key(), "t");
  EXPECT_EQ(c.rows[2].Label(), "'t'");
  for (const auto& r : c.rows) EXPECT_FLOAT_EQ(r.latency_micros, 200);
  // Counters that went backwards (a restart) count as no growth, never as a huge number.
  t.tablets = {Tablet(1, "", 5), Tablet(3, "m", 10), Tablet(4, "t", 6, 2)};
  h.AddSample(4'000'000, {t});
  EXPECT_FLOAT_EQ(h.column(1).rows[0].writes, 0);
}

// Tablet ids are per table: table 1's tablet 1 and table 2's tablet 1 are two tablets.
TEST(KeyVizHistoryTest, TabletsOfDifferentTablesWithTheSameIdKeepTheirOwnCounters) {
  KeyVizHistory h({});
  auto sample = [](uint64_t a, uint64_t b) {
    return std::vector<TableCounterSample>{{1, 0, 0, 0, {Tablet(1, "", a)}}, {2, 0, 0, 0, {Tablet(1, "", b)}}};
  };
  h.AddSample(1'000'000, sample(1000, 50));
  h.AddSample(2'000'000, sample(1000, 50));  // nothing written
  h.AddSample(3'000'000, sample(1010, 70));
  ASSERT_EQ(h.size(), 2u);
  for (const auto& r : h.column(0).rows) EXPECT_FLOAT_EQ(r.writes, 0) << "table " << r.table_id;
  EXPECT_FLOAT_EQ(h.column(1).rows[0].writes, 10);
  EXPECT_FLOAT_EQ(h.column(1).rows[1].writes, 20);
}

// A tablet split between two samples: what it took since the previous sample
// goes to its halves in proportion to their own growth, so a tail's writes
// stay at the tail and the total is kept.
TEST(KeyVizHistoryTest, WhatASplitTabletTookSinceThePreviousSampleGoesToItsHalves) {
  KeyVizHistory h({});
  h.AddSample(1'000'000, {{1, 0, 0, 0, {Tablet(1, "", 0), Tablet(2, "m", 100)}}});
  // Tablet 2 took 300 more writes, then split at "t" into 3 and 4; 4 (the tail) took 50 since.
  TableCounterSample t{1, 0, 0, 0, {Tablet(1, "", 0), Tablet(3, "m", 0), Tablet(4, "t", 50)}, {}};
  t.retired.push_back({2, "m", "", 0, 400, 0, 0});
  h.AddSample(2'000'000, {t});
  const auto& rows = h.column(0).rows;
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_FLOAT_EQ(rows[0].writes, 0);    // outside the split range
  EXPECT_FLOAT_EQ(rows[1].writes, 0);
  EXPECT_FLOAT_EQ(rows[2].writes, 350);  // 50 of its own + the parent's 300
  // Born and replaced within one column: all of its counters count; merged into one: both parents.
  TableCounterSample m{1, 0, 0, 0, {Tablet(1, "", 0), Tablet(6, "m", 10)}, {}};
  m.retired.push_back({3, "m", "t", 0, 20, 0, 0});
  m.retired.push_back({4, "t", "", 0, 90, 0, 0});
  m.retired.push_back({5, "x", "", 0, 7, 0, 0});  // a tablet born after the previous sample
  h.AddSample(3'000'000, {m});
  EXPECT_FLOAT_EQ(h.column(1).rows[1].writes, 10 + 20 + 40 + 7);
  // A tablet that vanished without its retirement waits one sample for it.
  h.AddSample(4'000'000, {{1, 0, 0, 0, {Tablet(1, "", 0), Tablet(7, "m", 1), Tablet(8, "p", 1)}, {}}});
  TableCounterSample late{1, 0, 0, 0, {Tablet(1, "", 0), Tablet(7, "m", 1), Tablet(8, "p", 1)}, {}};
  late.retired.push_back({6, "m", "", 0, 60, 0, 0});  // 50 more than at the third sample
  h.AddSample(5'000'000, {late});
  EXPECT_FLOAT_EQ(h.column(3).rows[1].writes + h.column(3).rows[2].writes, 50);
}

TEST(KeyVizHistoryTest, KeysAndLabelsAreKeptUpToTheirFixedSize) {
  KeyVizHistory h({});
  const std::string long_key(100, 'k');
  h.AddSample(1, {{1, 0, 0, 0, {Tablet(1, long_key, 0)}}});
  h.AddSample(2, {{1, 0, 0, 0, {Tablet(1, long_key, 1)}}});
  const KeyVizRow& r = h.column(0).rows[0];
  EXPECT_EQ(r.Key(), long_key.substr(0, kKeyBytes));
  EXPECT_TRUE(r.key_truncated);
  EXPECT_EQ(r.Label().size(), kLabelBytes);
  // A label is cut between characters, never inside one (it is sent as JSON, which is UTF-8).
  TabletCounterSample accented = Tablet(2, "k", 0);
  accented.label = "'";
  for (int i = 0; i < 30; ++i) accented.label += "\xc3\xa9";  // é, 2 bytes
  h.AddSample(3, {{1, 0, 0, 0, {accented}}});
  h.AddSample(4, {{1, 0, 0, 0, {accented}}});
  const std::string_view label = h.column(h.size() - 1).rows[0].Label();
  EXPECT_EQ(label.size(), kLabelBytes - 1);  // 1 + 19 x 2 bytes
  EXPECT_TRUE(IsValidUtf8(label));
}

TEST(KeyVizHistoryTest, ColdRunsCoalesceWhileHotRowsKeepTheirOwnAndNoRowSpansTwoTables) {
  std::vector<KeyVizRow> rows;
  auto add = [&](uint32_t table, TabletId id, float writes) {
    KeyVizRow r;
    r.table_id = table;
    r.tablet = id;
    r.writes = writes;
    rows.push_back(r);
  };
  for (TabletId i = 0; i < 10; ++i) add(1, i, i == 4 ? 1000 : 1);
  for (TabletId i = 10; i < 15; ++i) add(2, i, 2);
  ASSERT_EQ(CoalesceColdRows(&rows, 6), 0u);
  ASSERT_EQ(rows.size(), 6u);
  float total = 0;
  uint32_t tablets = 0;
  bool hot_alone = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    total += rows[i].writes;
    tablets += rows[i].tablets;
    if (rows[i].tablet == 4) hot_alone = rows[i].tablets == 1;
    if (i > 0 && rows[i].table_id == rows[i - 1].table_id) {
      EXPECT_LT(rows[i - 1].tablet, rows[i].tablet);
    }
  }
  EXPECT_TRUE(hot_alone);
  EXPECT_FLOAT_EQ(total, 1000 + 9 + 10);
  EXPECT_EQ(tablets, 15u);
  // Table 2 starts its own row: the first row of table 2 begins at tablet 10.
  auto first2 = std::find_if(rows.begin(), rows.end(), [](const KeyVizRow& r) { return r.table_id == 2; });
  ASSERT_NE(first2, rows.end());
  EXPECT_EQ(first2->tablet, 10u);
}

TEST(KeyVizHistoryTest, MoreTablesThanRowsKeepsTheBusiestTables) {
  std::vector<KeyVizRow> rows;
  for (uint32_t t = 1; t <= 5; ++t) {
    KeyVizRow r;
    r.table_id = t;
    r.writes = static_cast<float>(t * 10);
    rows.push_back(r);
  }
  EXPECT_EQ(CoalesceColdRows(&rows, 3), 2u);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].table_id, 3u);
  EXPECT_EQ(rows[2].table_id, 5u);
}

// Must-show 2 of the Key Visualizer issue: an hour of samples with a manual
// clock, far more tablets than rows, tablets splitting all the time and long
// keys; memory never passes the documented bound and stops growing once the
// ring is full.
TEST(KeyVizHistoryTest, AnHourOfSamplesStaysWithinTheDocumentedMemoryBound) {
  KeyVizOptions options;
  options.column_micros = 1'000'000;  // one sample a second: 3,600 columns offered, 360 kept
  KeyVizHistory h(options);
  const size_t kTables = 3, kTabletsPerTable = 450;  // 1,350 tablets > 1,000 rows
  std::vector<std::vector<TabletCounterSample>> tablets(kTables);
  TabletId next_id = 1;
  for (auto& t : tablets) {
    for (size_t i = 0; i < kTabletsPerTable; ++i) {
      t.push_back(Tablet(next_id++, std::string(60, 'a') + std::to_string(1000 + i), 0));
    }
  }
  int64_t now = 1'700'000'000'000'000;
  size_t memory_at_half = 0, peak = 0;
  for (int second = 0; second < 3600; ++second) {
    std::vector<TableCounterSample> sample;
    for (size_t t = 0; t < kTables; ++t) {
      auto& list = tablets[t];
      // A split every 10 s: one tablet gets a new id (counters from zero).
      if (second % 10 == 0) list[(second / 10) % list.size()].tablet = next_id++;
      for (size_t i = 0; i < list.size(); ++i) list[i].writes += (i == list.size() - 1) ? 500 : i % 3;
      sample.push_back({static_cast<uint32_t>(t + 1), static_cast<uint64_t>(second), static_cast<uint64_t>(second),
                        static_cast<uint64_t>(second) * 50, list});
    }
    now += options.column_micros;
    h.AddSample(now, sample);
    const size_t used = h.MemoryBytes();
    // Live tablets, and the ones replaced at this sample (kept one sample for their retirement).
    ASSERT_LE(used, KeyVizHistory::MemoryBound(options, kTables * kTabletsPerTable + kTables)) << "at second " << second;
    peak = std::max(peak, used);
    if (second == 1800) memory_at_half = used;
  }
  EXPECT_EQ(h.size(), options.max_columns);
  for (size_t c = 0; c < h.size(); ++c) {
    ASSERT_EQ(h.column(c).rows.size(), options.max_rows);
    ASSERT_EQ(h.column(c).end_micros - h.column(c).start_micros, options.column_micros);
  }
  EXPECT_EQ(h.column(h.size() - 1).end_micros, now);  // the newest columns are kept
  // A full ring does not grow (the vanished tablets kept for one sample vary by a few entries).
  EXPECT_NEAR(static_cast<double>(h.MemoryBytes()), static_cast<double>(memory_at_half), 1024);
  const size_t bound = KeyVizHistory::MemoryBound(options, kTables * kTabletsPerTable + kTables);
  EXPECT_LE(peak, bound);
  // The documented worst case with the defaults (keyviz/history.h, ARCHITECTURE.md).
  EXPECT_LE(KeyVizHistory::MemoryBound(KeyVizOptions{}, 0), 40u << 20);
  std::printf("history after an hour: %zu bytes; bound %zu bytes; row %zu bytes\n", h.MemoryBytes(), bound,
              sizeof(KeyVizRow));
}

}  // namespace
}  // namespace tessera::keyviz
