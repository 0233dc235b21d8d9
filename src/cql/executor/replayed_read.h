// Reads of a SELECT that is run again until it reads nothing new
// (DeferredRead::replay, select_statement.h): GROUP BY on a cluster node,
// whose page reads chunk after chunk, each sized from the rows before it
// (select_statement.cc PageGroups), so that its reads cannot be known
// before it runs. Each run takes every read it makes from the reads already
// answered; the first one that is not there is recorded, unanswered, and
// the run stops. The caller reads it (Coordinator::ReadRowAsync,
// ReadSliceAsync, ScanRangeAsync), holding no thread, and runs the
// statement again. A page of n dependent reads costs n runs, each of them
// CPU only up to its one new read.
//
// Thread safety: none; one run at a time uses the list, and the caller
// fills in an outcome only while no run is going.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "db/database.h"

namespace tessera::cql {

struct ReplayedRead {
  enum class Kind { kRow, kSlice, kRange };
  Kind kind = Kind::kRow;
  std::shared_ptr<const TableSchema> table;
  std::vector<std::string> partition_key;  // kRow, kSlice
  std::vector<std::string> clustering;     // kRow
  SliceRequest slice;                      // kSlice
  RangeRequest range;                      // kRange
  // The outcome (of `kind`), once the caller has read it.
  std::optional<Result<std::optional<RowResult>>> row;
  std::optional<Result<SliceResult>> slice_result;
  std::optional<Result<RangeResult>> range_result;

  bool answered() const { return row.has_value() || slice_result.has_value() || range_result.has_value(); }
  // Whether `other` asks for the same read (same table object, keys and request).
  bool SameRead(const ReplayedRead& other) const;
};

// The answered read in `reads` that is `wanted`; nullptr when there is none,
// after recording `wanted` in `reads` unless it is there unanswered already.
const ReplayedRead* FindOrRecordRead(std::vector<ReplayedRead>* reads, ReplayedRead wanted);

}  // namespace tessera::cql
