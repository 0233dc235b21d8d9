// Mutation: one write to one partition, as the CQL layer (INSERT, UPDATE,
// DELETE, one BATCH member) produces it. Values are serialized in native
// protocol v4 §6 form; clustering keys are full keys in key order.
//
// Everything in a Mutation carries one write timestamp (CQL's USING
// TIMESTAMP, microseconds) and one TTL (USING TTL, seconds), as in Cassandra.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "storage/row_fragment.h"
#include "types/schema.h"

namespace tessera {

struct CellWrite {
  uint32_t column_id = 0;
  std::optional<std::string> value;  // nullopt: a cell tombstone (DELETE col / SET col = null)
  // One element of a non-frozen collection: list -> 16-byte element id
  // (8 bytes big-endian time ticks, so that element order is time order,
  // then 8 distinguishing bytes) and element value; set -> element as path,
  // empty value; map -> key as path; user type -> the field index
  // (UserTypeFieldPath) as path, the field's value.
  bool has_path = false;
  std::string path;
  // Deletes the whole collection (written before its new elements when a
  // collection is overwritten, as Cassandra does). value and path are ignored.
  bool delete_collection = false;
  // An increment of a counter column: `value` is the delta as a serialized
  // bigint (8 bytes); increments add up (storage/row_fragment.h).
  bool counter = false;
};

struct RowWrite {
  std::vector<std::string> clustering;  // full clustering key; empty for the static row
  bool is_static = false;
  bool insert = false;      // write the row marker that keeps the row alive (INSERT)
  bool delete_row = false;  // a row tombstone
  std::vector<CellWrite> cells;
};

// A clustering bound in clustering order; an empty prefix is unbounded.
struct ClusteringBound {
  std::vector<std::string> prefix;
  bool inclusive = true;
};

struct RangeDeletion {
  ClusteringBound start;
  ClusteringBound end;
};

struct Mutation {
  std::shared_ptr<const TableSchema> table;
  std::vector<std::string> partition_key;   // serialized, key order
  int64_t timestamp_micros = kNoTimestamp;  // kNoTimestamp: the database's clock
  int32_t ttl_seconds = -1;                 // -1: the table's default_time_to_live; 0: none
  bool delete_partition = false;
  std::vector<RangeDeletion> range_deletions;
  std::vector<RowWrite> rows;
};

}  // namespace tessera
