// The operations a replica serves for a coordinator, on this node's storage,
// in table-relative keys (cluster/proto/internode.proto): applying writes,
// reading a batch of a key range, reading keys. The internode service runs
// them for remote coordinators; a coordinator that is itself a replica runs
// them directly, so both paths return the same bytes.
//
// Thread safety: functions are thread-safe (StorageEngine is).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "storage/storage_engine.h"
#include "types/schema.h"

namespace tessera::cluster {

// A storage key of table `table_id` without its 4-byte table id, and back.
// An absolute key outside the table maps to "" (below) or nullopt (at or
// past its end).
std::optional<std::string> RelativeKey(uint32_t table_id, std::string_view key);
std::string AbsoluteKey(uint32_t table_id, std::string_view relative);
// The absolute end of a range whose table-relative end is `relative_end`
// (empty: the table's end, the next table's prefix).
std::string AbsoluteEnd(uint32_t table_id, const std::string& relative_end);

struct RangeQuery {
  std::string table_uuid;       // 16 bytes
  std::string lower, upper;     // table-relative; empty upper: the table's end
  std::string from;             // where to start, within [lower, upper)
  bool from_inclusive = true;
  bool reverse = false;         // descending from `from`
  bool from_end = false;        // reverse only: from `upper` down (`from` ignored)
  uint32_t limit = 512;
  // A node's own read, not a client's (a migration streaming the tablet's
  // data, a split finding its median, an index or view build): the replica
  // does not count it as served load (system.tablets
  // replica_reads_per_second, what the placement balancer weighs).
  bool internal = false;
  // Point keys read with the range from the same snapshot (KeyWindowRead::
  // keys: a slice's partition header and static row), ascending, each below `lower`;
  // their values come back in RangeBatch::key_values.
  std::vector<std::string> keys;  // table-relative
  // Answer the window's WindowDigest instead of its entries and key values
  // (Cassandra's digest read, for a window).
  bool digest = false;
};

// A replica's vector index search (internode.proto VectorSearchRequest).
struct VectorSearchQuery {
  std::string table_uuid;  // 16 bytes
  std::string index;       // the vector index's name
  std::vector<float> query;
  uint32_t k = 10;
  std::vector<std::pair<std::string, std::string>> ranges;  // table-relative; empty upper: the table's end
};

struct RangeBatch {
  std::vector<std::pair<std::string, std::string>> entries;  // relative keys, in the query's direction
  bool more = false;  // the limit cut the range short
  // One per RangeQuery::keys (nullopt: none stored); empty when the replica
  // did not read them (a node of an older release ignores them).
  std::vector<std::optional<std::string>> key_values;
  // A digest answer (RangeQuery::digest): the window's WindowDigest, and no
  // entries or key values. nullopt: a data answer (also a node of an older
  // release asked for a digest).
  std::optional<std::string> digest;
};

// Stored values of the keys the query selects, reconciled (merge operands
// folded) as this node holds them.
Result<RangeBatch> ReadRangeLocal(StorageEngine* engine, uint32_t table_id, const RangeQuery& query);
// A window's digest for digest reads: 8 bytes, the big-endian XXH3-64 over,
// per entry in order, varint key length, key (relative), varint value
// length, value; then per key value a byte 1, varint length and value, or a
// byte 0; then a byte 1 or 0 for `more`. Replicas that hold the same window
// answer the same digest. FROZEN ON THE WIRE (ReadRangeRequest.digest).
std::string WindowDigest(const RangeBatch& batch);
// One value per key (nullopt: no value).
Result<std::vector<std::optional<std::string>>> ReadKeysLocal(StorageEngine* engine, uint32_t table_id,
                                                              const std::vector<std::string>& relative_keys);
// A stored value's digest for digest reads (Cassandra's): 8 bytes, the
// big-endian XXH3-64 of the value. FROZEN ON THE WIRE (ReadKeysRequest.digest).
std::string ValueDigest(std::string_view value);
// A replica's digest of a key range (repair): XXH3-64 over every key of
// [lower, upper) in order and its stored value (the format in
// internode.proto's DigestRequest), and how many keys it covered.
struct RangeDigest {
  uint64_t digest = 0;
  uint64_t keys = 0;
};
Result<RangeDigest> DigestLocal(StorageEngine* engine, uint32_t table_id, const std::string& lower,
                                const std::string& upper);
// Applies writes given in relative keys (a range delete's empty end: the table's end).
Status ApplyLocal(StorageEngine* engine, uint32_t table_id, const WriteSet& relative_writes);
// What a replica checks of the writes another node sends it, before it
// applies any: each merge's key is a storage key of `table`
// (keys/storage_key.h) and its value decodes as what that key holds, a
// partition header or a row fragment. A write that failed this would make
// every later read of its key fail (the merge operator's Corruption), so it
// is refused with InvalidArgument, naming the op. A coordinator may delete
// any range of the table (the storage engine refuses one that ends before
// it starts).
[[nodiscard]] Status CheckWrites(const TableSchema& table, const WriteSet& relative_writes);

// The same write set with keys made relative to `table_id`, and back.
WriteSet ToRelative(uint32_t table_id, const WriteSet& absolute);
WriteSet ToAbsolute(uint32_t table_id, const WriteSet& relative);

}  // namespace tessera::cluster
