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
// fills in an outcome only while no run is going (ReadReplayedAsync's
// answers, before the last one runs the next run).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "db/database.h"

namespace tessera {
class Coordinator;
}

namespace tessera::cql {

struct ReplayedRead {
  // kPaxos: not a read but the Paxos prepare a SERIAL read makes first
  // (Coordinator::BeginPaxosAsync with for_read), recorded the same way; a run
  // stops at it, so that its reads come after the prepare.
  enum class Kind { kRow, kSlice, kRange, kPaxos };
  Kind kind = Kind::kRow;
  std::shared_ptr<const TableSchema> table;
  std::vector<std::string> partition_key;  // kRow, kSlice, kPaxos
  std::vector<std::string> clustering;     // kRow
  SliceRequest slice;                      // kSlice
  RangeRequest range;                      // kRange
  ConsistencyLevel serial = ConsistencyLevel::kSerial;  // kPaxos
  // The outcome (of `kind`), once the caller has read it.
  std::optional<Result<std::optional<RowResult>>> row;
  std::optional<Result<SliceResult>> slice_result;
  std::optional<Result<RangeResult>> range_result;
  std::optional<Status> paxos_result;

  bool answered() const {
    return row.has_value() || slice_result.has_value() || range_result.has_value() || paxos_result.has_value();
  }
  // Whether `other` asks for the same read (same table object, keys and request).
  bool SameRead(const ReplayedRead& other) const;
};

// The answered read in `reads` that is `wanted`; nullptr when there is none,
// after recording `wanted` in `reads` unless it is there unanswered already.
const ReplayedRead* FindOrRecordRead(std::vector<ReplayedRead>* reads, ReplayedRead wanted);

// Reads every unanswered read of `*reads` at once (Coordinator::ReadRowAsync,
// ReadSliceAsync, ScanRangeAsync) at `consistency`, holding no thread, and
// fills in each outcome; the last answer runs `answered` on its thread. Each
// read is copied before it goes out, so `answered` (the next run) may add
// reads to the list while the last requests are still being sent.
// Returns false, running nothing, when no read is unanswered.
// REQUIRES: `*reads` lives until `answered` runs (let `answered` own it);
// entries are only appended meanwhile.
bool ReadReplayedAsync(Coordinator& coordinator, std::vector<ReplayedRead>* reads,
                       const RequestConsistency& consistency, std::function<void()> answered);

}  // namespace tessera::cql
