// KeyVizHistory: the Key Visualizer's memory of load over key space and
// time, with a fixed memory bound.
//
// Time runs in columns: each sample closes one column that covers the time
// since the previous sample. The sampler takes one sample per column width,
// 1 minute by default, as in Spanner's Key Visualizer. A column holds one row
// per tablet, in key order, with the tablet's reads, writes and bytes per
// second over the column. The counters are cumulative per tablet, so a row
// holds the growth since the previous sample. A tablet created in between
// (a split or merge) counts from zero. What a replaced tablet took between
// the previous sample and its replacement goes to the rows that cover its key
// range, in proportion to their own growth (evenly when they have none). For
// a tail hotspot that is the new last tablet, so totals are kept and the
// shape too.
//
// Rows adapt to traffic, as in TiDB Dashboard's Key Visualizer. A column has
// at most `max_rows` rows over all tables. Past that, the coldest adjacent
// rows of one table are coalesced into one row, so hot ranges keep their own
// row. A row never spans two tables. If there are more tables than
// `max_rows`, the coldest tables are left out of the column and counted in
// `tables_left_out`.
//
// Memory bound: at most `max_columns` columns are kept, and the oldest are
// dropped first. Every row has a fixed size, because the start key and the
// label are truncated to fixed arrays. MemoryBytes() is therefore at most
// MemoryBound(options, live_tablets). With the defaults (360 columns of
// 1,000 rows of 112 bytes) that is 40.4 MB in the worst case. A
// column holds as many rows as there are tablets, so typical use is far
// below that. `live_tablets` counts the previous counters kept for the
// next delta: one entry per tablet that exists now, or that vanished at the
// previous sample and whose retirement has not arrived yet (it waits one
// sample, for a tablet replaced between listing the retired and the live).
//
// Latency is measured per table, inside Database (TableMetrics), not per
// tablet. Every row of a table shows the table's mean read and write latency
// over the column.
//
// Thread safety: not thread-safe; the sampler (keyviz/sampler.h) guards it.
// Sources: Bigtable Key Visualizer (key buckets, per-bucket values),
// Spanner Key Visualizer (1-minute columns over 6 hours), TiDB Dashboard
// Key Visualizer (rows that adapt to traffic, never across a table).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera::keyviz {

using TabletId = uint64_t;

// One tablet at one instant. The counters are cumulative since the tablet
// was created.
struct TabletCounterSample {
  TabletId tablet = 0;
  std::string start;  // storage-key start bound without the 4-byte table id (empty: the table's start)
  std::string label;  // the start bound shown as a partition key, e.g. '1995-08-01 12:00:00' or token -42
  uint64_t reads = 0, writes = 0, bytes_read = 0, bytes_written = 0;  // rows, rows, bytes, bytes
};

// A tablet split or merged away since the previous sample, with its counters
// when it was replaced (db/database.h RetiredTablet).
struct RetiredTabletSample {
  TabletId tablet = 0;
  std::string start, end;  // bounds without the table id, as TabletCounterSample::start; end empty: the table's end
  uint64_t reads = 0, writes = 0, bytes_read = 0, bytes_written = 0;
};

// One table at one instant. The operation counts and latency sums are
// cumulative, from the table's latency histograms.
struct TableCounterSample {
  uint32_t table_id = 0;
  uint64_t read_ops = 0, write_ops = 0;  // database calls
  uint64_t latency_sum_micros = 0;       // over those calls
  std::vector<TabletCounterSample> tablets;  // key order
  // Replaced since the previous sample, each passed to AddSample exactly once,
  // and listed before `tablets` was read, so never in both.
  std::vector<RetiredTabletSample> retired;
};

struct KeyVizOptions {
  int64_t column_micros = 60'000'000;  // the sampler's interval: one column per sample
  size_t max_columns = 360;            // 6 hours of 1-minute columns
  size_t max_rows = 1000;              // rows per column, over all tables
};

inline constexpr size_t kKeyBytes = 32;    // start-key prefix kept per row
inline constexpr size_t kLabelBytes = 40;  // label bytes kept per row

// One key range in one column. Values are per second over the column.
struct KeyVizRow {
  uint32_t table_id = 0;
  uint32_t tablets = 1;   // adjacent tablets this row covers (> 1: a coalesced cold run)
  TabletId tablet = 0;    // the first of them
  float reads = 0, writes = 0, bytes = 0;  // rows/s, rows/s, bytes/s (read + written)
  float latency_micros = 0;                // the table's mean per call in the column; 0 without calls
  uint8_t key_size = 0, label_size = 0;
  bool key_truncated = false;
  std::array<char, kKeyBytes> key{};       // start bound prefix (see TabletCounterSample::start)
  std::array<char, kLabelBytes> label{};

  std::string_view Key() const { return {key.data(), key_size}; }
  std::string_view Label() const { return {label.data(), label_size}; }
  double Ops() const { return static_cast<double>(reads) + writes; }
};

struct KeyVizColumn {
  int64_t start_micros = 0, end_micros = 0;
  uint32_t tables_left_out = 0;  // tables beyond max_rows (see the class comment)
  std::vector<KeyVizRow> rows;   // by table id, then key order
};

class KeyVizHistory {
 public:
  // REQUIRES: options.max_columns >= 1, options.max_rows >= 1.
  explicit KeyVizHistory(KeyVizOptions options);

  // Closes a column covering (previous sample, now_micros]. The first sample
  // only sets the baseline. A sample whose time is not after the previous
  // one's resets the baseline and adds no column. `tables` may come in any
  // order; each table's tablets come in key order.
  void AddSample(int64_t now_micros, const std::vector<TableCounterSample>& tables);

  size_t size() const { return count_; }
  // Column i, oldest first. REQUIRES: i < size().
  const KeyVizColumn& column(size_t i) const;
  const KeyVizOptions& options() const { return options_; }

  // Heap and object bytes held: columns, rows and the previous counters.
  size_t MemoryBytes() const;
  // MemoryBound for the tablets whose counters are kept now.
  size_t MemoryBoundNow() const { return MemoryBound(options_, previous_tablets_.size()); }
  // The most MemoryBytes() can be while at most `live_tablets` tablets exist.
  static size_t MemoryBound(const KeyVizOptions& options, size_t live_tablets);

 private:
  struct PreviousTablet {  // tablet ids are per table
    uint32_t table_id;
    TabletId tablet;
    uint64_t reads, writes, bytes_read, bytes_written;
    bool vanished;  // not in the latest sample; kept one sample for its retirement
  };
  struct PreviousTable {
    uint32_t table_id;
    uint64_t read_ops, write_ops, latency_sum_micros;
  };
  struct Growth {
    double reads = 0, writes = 0, bytes = 0;  // since the previous sample
  };
  Growth GrowthOf(uint32_t table_id, TabletId tablet, uint64_t reads, uint64_t writes, uint64_t bytes_read,
                  uint64_t bytes_written) const;
  // Adds a retired tablet's growth `g` to the current tablets covering its range.
  static void PassOn(const TableCounterSample& table, const RetiredTabletSample& retired, const Growth& g,
                     std::vector<Growth>* growth);
  void Push(KeyVizColumn column);

  KeyVizOptions options_;
  std::vector<KeyVizColumn> ring_;  // capacity max_columns
  size_t head_ = 0, count_ = 0;     // ring_[head_] is the oldest
  bool has_baseline_ = false;
  int64_t last_micros_ = 0;
  std::vector<PreviousTablet> previous_tablets_;  // sorted by (table id, tablet id)
  std::vector<PreviousTable> previous_tables_;    // sorted by table id
};

// Coalesces adjacent rows of one table, coldest pairs first (by reads +
// writes), until at most `max_rows` remain. Then it drops the coldest tables
// while more tables than `max_rows` remain. Returns the number of tables
// dropped. Rows must be grouped by table and in key order.
uint32_t CoalesceColdRows(std::vector<KeyVizRow>* rows, size_t max_rows);

}  // namespace tessera::keyviz
