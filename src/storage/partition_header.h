// The partition header: the stored value under a partition's header key
// (KeyKind::kPartitionHeader), holding the partition deletion and the
// clustering-range tombstones of that partition. It sorts before every row of
// the partition, so a forward scan or a compaction meets it first.
//
// A range tombstone covers the encoded clustering keys c with
// start <= c < end (end_unbounded: no upper limit), in storage byte order; the
// writer turns inclusive/exclusive clustering bounds into this half-open form
// (see MakeRangeTombstone).
//
// Value encoding (FROZEN ON DISK, format 1):
//   u8 value type = 0x02, u8 flags (0x01 has partition deletion),
//   [i64 timestamp, u32 local deletion time],
//   varint range-tombstone count, then per tombstone:
//   varint len + start bytes, u8 end_unbounded, [varint len + end bytes],
//   i64 timestamp, u32 local deletion time.
// Merge: the later partition deletion wins; range tombstones are unioned
// (identical ranges keep the later deletion) and those the partition
// deletion shadows are dropped. Commutative and associative.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "storage/row_fragment.h"

namespace tessera {

struct RangeTombstone {
  std::string start;
  std::string end;
  bool end_unbounded = false;
  DeletionTime deletion;
  bool Covers(std::string_view encoded_clustering) const {
    return start <= encoded_clustering && (end_unbounded || encoded_clustering < end);
  }
  bool operator==(const RangeTombstone&) const = default;
};

struct PartitionHeader {
  DeletionTime partition_deletion;
  std::vector<RangeTombstone> range_tombstones;  // sorted by (start, end_unbounded, end)
  bool IsEmpty() const { return partition_deletion.IsLive() && range_tombstones.empty(); }
  // The strongest deletion covering a row with this encoded clustering key.
  DeletionTime DeletionFor(std::string_view encoded_clustering, bool is_static) const;
  bool operator==(const PartitionHeader&) const = default;
};

// A range tombstone from clustering bounds given as encoded prefixes: an
// empty prefix means unbounded on that side.
RangeTombstone MakeRangeTombstone(std::string_view start_prefix, bool start_inclusive,
                                  std::string_view end_prefix, bool end_inclusive, DeletionTime deletion);

void EncodePartitionHeader(const PartitionHeader& header, std::string* out);
Status DecodePartitionHeader(std::string_view in, PartitionHeader* header);
void ReconcileHeader(PartitionHeader* header, const PartitionHeader& other);
// Drops deletions whose local deletion time + gc_grace_seconds <= now.
bool PurgeHeader(PartitionHeader* header, uint32_t now_seconds, int32_t gc_grace_seconds);

}  // namespace tessera
