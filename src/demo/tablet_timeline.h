// TabletTimeline: how a table's writes spread over its tablets while data
// is loaded — sampled from Database::Tablets every interval, for the demo's
// report (the write distribution and the heatmap of load over key space and
// time).
//
// Each sample lists the tablets in key order with their write counters. The
// writes of an interval are, per tablet, the growth of its counter since the
// previous sample (a tablet created in between counts from zero). Writes a
// tablet took between the previous sample and being split or merged away are
// not seen, so interval totals may fall slightly short of the rows written.
//
// Thread safety: Sample from one thread; the accessors after sampling stops.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "db/database.h"

namespace tessera::demo {

struct TabletSample {
  TabletId id = 0;
  uint64_t writes = 0;           // counter value at the sample
  uint64_t interval_writes = 0;  // writes since the previous sample
};

struct TimelineSample {
  double seconds = 0;                 // since the timeline started
  std::vector<TabletSample> tablets;  // key order
};

struct WriteDistribution {
  uint64_t writes = 0;             // writes seen over all intervals
  double last_tablet_share = 0;    // share that went to the table's last tablet (at the time)
  double busiest_tablet_share = 0; // per interval, the busiest tablet's share; averaged, weighted by writes
  size_t max_tablets = 0;
};

class TabletTimeline {
 public:
  TabletTimeline(Database* db, std::shared_ptr<const TableSchema> table) : db_(db), table_(std::move(table)) {}
  void Sample(double seconds);
  const std::vector<TimelineSample>& samples() const { return samples_; }
  // Over the samples taken after `from_seconds` (all of them by default).
  WriteDistribution Distribution(double from_seconds = -1) const;
  const TableSchema& table() const { return *table_; }

 private:
  Database* db_;
  std::shared_ptr<const TableSchema> table_;
  std::map<TabletId, uint64_t> last_writes_;
  std::vector<TimelineSample> samples_;
};

}  // namespace tessera::demo
