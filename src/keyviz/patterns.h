// Names the shape a table's load draws in the Key Visualizer, from the
// history alone (keyviz/history.h). Live detection may add corroboration
// through PatternHints. Bigtable's diagnoses, made explicit:
//
//  - monotonic_tail ("diagonal"): on a range table, the last tablet (the
//    greatest keys) takes most of the load while the table has several
//    tablets. Inserts follow the key order, so each split only moves the
//    hot spot to the new last tablet, and over time the hot cell walks down
//    the key space.
//  - hot_band ("horizontal band"): one key range keeps most of the load,
//    column after column. Its share is at least kBandShare, at least 3x a
//    fair share (1 / rows), and the range is the hottest in most consecutive
//    columns. It is a hot partition when the hints name one partition with
//    at least half of the operations, else a hot range.
//  - moving_hotspot: one range at a time takes most of the load, but the
//    range changes, as with a bulk load in key order.
//  - even: the load is spread over the tablets; no fix is needed.
//  - single_tablet: the table had one tablet throughout, so the picture
//    cannot show a spread yet.
//  - idle: fewer than kMinOperations operations in the history.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "keyviz/history.h"

namespace tessera::keyviz {

enum class Metric { kWrites, kReads };
const char* MetricName(Metric m);

inline constexpr double kTailShare = 0.8;     // the last tablet's share that makes a tail
inline constexpr double kBandShare = 0.5;     // the hottest range's share that makes a band
inline constexpr double kMinOperations = 100; // over the history, before a pattern is named

struct PatternHints {
  bool range_table = false;
  // The table's hottest partition by this metric (Space-Saving lower bound)
  // and its share of the table's operations; 0 when unknown.
  double hot_partition_share = 0;
};

struct Pattern {
  std::string kind;    // monotonic_tail, hot_band, moving_hotspot, even, single_tablet, idle
  std::string shape;   // diagonal, horizontal band, moving spot, even, one row, none
  Metric metric = Metric::kWrites;
  double operations = 0;  // of this metric over the history
  double share = 0;       // the tail's, band's or busiest range's share (0..1)
  size_t columns = 0;     // columns with operations
  size_t max_rows = 0;    // the most rows the table had in one column
  std::string evidence;   // what was measured, in a sentence
};

// REQUIRES: the history's columns hold the table's rows in key order.
Pattern ClassifyTable(const KeyVizHistory& history, uint32_t table_id, Metric metric, const PatternHints& hints);

}  // namespace tessera::keyviz
