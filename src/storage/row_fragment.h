// Row fragments: the stored value of a static or clustering row, and the
// last-write-wins reconciliation of two fragments (Cassandra's cell model).
//
// Every write of a row is a fragment appended as a RocksDB merge operand; the
// merge operator reconciles fragments on read and in compaction, so a write
// never reads first. Reconcile is commutative and associative: for each
// (column, path) it keeps the greatest cell under a total order:
//   higher timestamp > tombstone over live > later local deletion / expiry
//   > greater value bytes.
// Deletions then shadow what they cover: the row deletion every cell and the
// row marker with timestamp <= its timestamp; a collection's complex deletion
// the elements of that column with timestamp <= its timestamp.
// Counter cells (kCounter, a counter column's increments) do not compete but
// add up: two live counter cells of one key reconcile into one whose value is
// the sum of their 8-byte big-endian deltas (wrapping, as Java's long) and
// whose timestamp is the greater; a cell tombstone of a counter wins over its
// increments whatever their timestamps (Cassandra: deleting a counter is
// final), and so does a row, range or partition deletion. Sums and the
// absorbing deletions keep reconciliation commutative and associative, so
// RocksDB may merge operands in any grouping; every increment is one merge
// operand and is counted once.
//
// Counter shards (kCounterShards; Cassandra's counter context, issue 30):
// on a cluster an increment is turned by a leader replica into the leader's
// new shard (host id, clock, count; storage/counter_shards.h), and that
// shard is what every replica stores. Two cells' shards reconcile per host
// id by keeping the higher (clock, count), which is idempotent: the same
// shard delivered twice (a hint replayed after the write arrived, a read
// repair) counts once. A cell's value stays its 8-byte total: the sum of its
// shards plus its unsharded part (value - sum of shards), the plain deltas
// of a single node, which add up as above.
//
// Value encoding (FROZEN ON DISK, format 1):
//   u8 value type = 0x01 (row fragment)   [0x02 is the partition header]
//   u8 flags: 0x01 has row marker, 0x02 has row deletion
//   row marker:   i64 timestamp, i32 ttl, u32 expiry (all big-endian)
//   row deletion: i64 timestamp, u32 local deletion time
//   varint cell count, then per cell:
//     varint column id, u8 cell flags (0x01 tombstone, 0x02 expiring,
//     0x04 has path, 0x08 complex deletion, 0x10 counter, 0x20 counter
//     shards), i64 timestamp,
//     [expiring: i32 ttl, u32 expiry] [tombstone or complex deletion: u32 local deletion time]
//     [has path: varint length, bytes] [live value: varint length, bytes]
//     [counter shards: varint count, per shard (host ids strictly increasing):
//      varint length + host id bytes, i64 clock, i64 count]   (0x20: added in
//      issue 30; only on a live counter cell, whose value is its 8-byte total)
// Times: timestamps in microseconds since the epoch; ttl in seconds; expiry
// and local deletion times in seconds since the epoch.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tessera {

constexpr uint8_t kValueTypeRowFragment = 0x01;     // FROZEN ON DISK
constexpr uint8_t kValueTypePartitionHeader = 0x02; // FROZEN ON DISK
constexpr int64_t kNoTimestamp = INT64_MIN;

struct DeletionTime {
  int64_t timestamp = kNoTimestamp;   // microseconds; kNoTimestamp = no deletion
  uint32_t local_deletion_time = 0;   // seconds since the epoch, when it was deleted
  bool IsLive() const { return timestamp == kNoTimestamp; }
  // Does this deletion shadow data written at `ts`?
  bool Deletes(int64_t ts) const { return !IsLive() && ts <= timestamp; }
  bool Supersedes(const DeletionTime& o) const {
    return timestamp != o.timestamp ? timestamp > o.timestamp : local_deletion_time > o.local_deletion_time;
  }
  bool operator==(const DeletionTime&) const = default;
};

// The row marker written by INSERT: keeps a row alive without any cell.
struct LivenessInfo {
  int64_t timestamp = kNoTimestamp;
  int32_t ttl = 0;       // seconds; 0 = no TTL
  uint32_t expiry = 0;   // seconds since the epoch; meaningful when ttl > 0
  bool IsEmpty() const { return timestamp == kNoTimestamp; }
  bool IsLive(uint32_t now_seconds) const { return !IsEmpty() && (ttl == 0 || expiry > now_seconds); }
  bool operator==(const LivenessInfo&) const = default;
};

// One replica's share of a counter cell (Cassandra's counter shard): the
// replica's host id, how many increments it has led (its clock), and the
// sum of their deltas.
struct CounterShard {
  std::string host_id;  // 16 bytes on a cluster
  int64_t clock = 0;    // >= 1; grows by one per increment the replica leads
  int64_t count = 0;    // the shard's value (wrapping, as Java's long)
  bool operator==(const CounterShard&) const = default;
};

struct Cell {
  enum Flags : uint8_t {
    kTombstone = 0x01,
    kExpiring = 0x02,
    kHasPath = 0x04,
    kComplexDeletion = 0x08,
    kCounter = 0x10,
    kCounterShards = 0x20,  // FROZEN ON DISK; with kCounter, `shards` is set
  };
  uint32_t column_id = 0;
  uint8_t flags = 0;
  int64_t timestamp = 0;             // microseconds
  int32_t ttl = 0;                   // seconds, kExpiring only
  uint32_t local_deletion_time = 0;  // kTombstone / kComplexDeletion: deletion time; kExpiring: expiry
  std::string path;                  // element key of a non-frozen collection (kHasPath)
  std::string value;                 // serialized value; empty for tombstones
  std::vector<CounterShard> shards;  // kCounterShards: sorted by host id, one per host

  bool IsTombstone() const { return flags & kTombstone; }
  bool IsExpiring() const { return flags & kExpiring; }
  bool IsComplexDeletion() const { return flags & kComplexDeletion; }
  bool HasPath() const { return flags & kHasPath; }
  bool IsCounter() const { return flags & kCounter; }
  // A live counter cell: an increment (8-byte delta) or shards with their total.
  bool IsLiveCounter() const { return IsCounter() && !IsTombstone() && value.size() == 8; }
  bool IsLive(uint32_t now_seconds) const {
    return !IsTombstone() && !IsComplexDeletion() && (!IsExpiring() || local_deletion_time > now_seconds);
  }
  bool operator==(const Cell&) const = default;
};

struct RowFragment {
  LivenessInfo liveness;
  DeletionTime deletion;
  std::vector<Cell> cells;  // sorted by (column_id, complex deletion first, path); one per key

  bool IsEmpty() const { return liveness.IsEmpty() && deletion.IsLive() && cells.empty(); }
  // A row is live when its marker or any cell is live.
  bool IsLive(uint32_t now_seconds) const;
  bool operator==(const RowFragment&) const = default;
};

// Appends the encoded fragment (with its value-type byte) to *out.
void EncodeRowFragment(const RowFragment& row, std::string* out);
// Errors: Corruption when the bytes are not a format-1 row fragment.
Status DecodeRowFragment(std::string_view in, RowFragment* row);

// Reconciles `other` into *row (see the file comment). Both must be sorted.
void ReconcileRow(RowFragment* row, const RowFragment& other);

// Sorts cells into the canonical order and reconciles duplicates; used by
// writers that build fragments in arbitrary order.
void NormalizeRow(RowFragment* row);

// Removes what `deletion` shadows from *row (used for partition and range
// tombstones stored in the partition header). Returns true if anything changed.
bool ApplyDeletion(const DeletionTime& deletion, RowFragment* row);

// Turns expired TTL cells and row markers into tombstones (local deletion
// time = expiry - ttl, i.e. the write time, as Cassandra does) and, when
// `purge` is set, drops tombstones whose local deletion time + gc_grace_seconds
// <= now. Returns true if anything changed.
bool CollectGarbage(RowFragment* row, uint32_t now_seconds, int32_t gc_grace_seconds, bool purge);

}  // namespace tessera
