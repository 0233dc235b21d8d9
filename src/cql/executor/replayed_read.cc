#include "cql/executor/replayed_read.h"

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

}  // namespace tessera::cql
