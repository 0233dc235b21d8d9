#include "cql/executor/replayed_read.h"

#include <atomic>

#include "coordinator/coordinator.h"

namespace tessera::cql {
namespace {

bool SameBound(const ClusteringBound& a, const ClusteringBound& b) {
  return a.prefix == b.prefix && a.inclusive == b.inclusive;
}

}  // namespace

bool ReplayedRead::SameRead(const ReplayedRead& other) const {
  if (kind != other.kind || table != other.table || partition_key != other.partition_key) return false;
  switch (kind) {
    case Kind::kRow: return clustering == other.clustering;
    case Kind::kSlice:
      return SameBound(slice.lower, other.slice.lower) && SameBound(slice.upper, other.slice.upper) &&
             slice.reversed == other.slice.reversed && slice.limit == other.slice.limit &&
             slice.cursor == other.slice.cursor;
    case Kind::kRange:
      return range.range.begin == other.range.range.begin && range.range.end == other.range.range.end &&
             range.limit == other.range.limit && range.per_partition_limit == other.range.per_partition_limit &&
             range.cursor == other.range.cursor;
    case Kind::kPaxos: return serial == other.serial;
  }
  return false;
}

const ReplayedRead* FindOrRecordRead(std::vector<ReplayedRead>* reads, ReplayedRead wanted) {
  for (const ReplayedRead& read : *reads) {
    if (!read.SameRead(wanted)) continue;
    if (read.answered()) return &read;
    return nullptr;  // recorded already, still to be read
  }
  reads->push_back(std::move(wanted));
  return nullptr;
}

bool ReadReplayedAsync(Coordinator& coordinator, std::vector<ReplayedRead>* reads,
                       const RequestConsistency& consistency, std::function<void()> answered) {
  std::vector<size_t> unanswered;
  std::vector<ReplayedRead> requests;  // copied before the first goes out
  for (size_t i = 0; i < reads->size(); ++i) {
    if ((*reads)[i].answered()) continue;
    unanswered.push_back(i);
    requests.push_back((*reads)[i]);
  }
  if (requests.empty()) return false;
  auto remaining = std::make_shared<std::atomic<size_t>>(requests.size());
  // acq_rel: the last answer sees every other read's outcome.
  auto one_answered = [remaining, answered = std::move(answered)] {
    if (remaining->fetch_sub(1, std::memory_order_acq_rel) == 1) answered();
  };
  for (size_t j = 0; j < requests.size(); ++j) {
    const ReplayedRead& read = requests[j];
    const size_t i = unanswered[j];
    switch (read.kind) {
      case ReplayedRead::Kind::kRow:
        coordinator.ReadRowAsync(read.table, read.partition_key, read.clustering, consistency,
                                 [reads, i, one_answered](Result<std::optional<RowResult>> row) {
                                   (*reads)[i].row = std::move(row);
                                   one_answered();
                                 });
        break;
      case ReplayedRead::Kind::kSlice:
        coordinator.ReadSliceAsync(read.table, read.partition_key, read.slice, consistency,
                                   [reads, i, one_answered](Result<SliceResult> slice) {
                                     (*reads)[i].slice_result = std::move(slice);
                                     one_answered();
                                   });
        break;
      case ReplayedRead::Kind::kRange:
        coordinator.ScanRangeAsync(read.table, read.range, consistency,
                                   [reads, i, one_answered](Result<RangeResult> page) {
                                     (*reads)[i].range_result = std::move(page);
                                     one_answered();
                                   });
        break;
      case ReplayedRead::Kind::kPaxos:
        coordinator.BeginPaxosAsync(read.table, read.partition_key, read.serial, /*for_read=*/true,
                                    [reads, i, one_answered](Result<std::optional<PaxosRound>> round) {
                                      (*reads)[i].paxos_result = round.status();
                                      one_answered();
                                    });
        break;
    }
  }
  return true;
}

}  // namespace tessera::cql
