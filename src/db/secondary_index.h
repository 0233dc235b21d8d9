// Secondary indexes as ScyllaDB builds them (docs/dev "secondary indexes":
// a global index is a materialized view keyed by the indexed value): each
// IndexDef (types/schema.h) has a backing table in the same keyspace whose
//   partition key = the indexed value ("$value"; for ENTRIES(m) the map key
//                   "$key" and the value "$value"),
//   clustering    = the base row's partition key columns, then its clustering
//                   columns (only the partition key for a static column),
// and no other column: an index row's presence is the entry. The backing
// table is an ordinary hash table, so its tablets split, merge and move like
// any other; a value shared by many rows is one wide index partition.
//
// This file holds the pure parts: the backing table's schema and the entries
// of one base row. Keeping the entries right on every write is the
// coordinator's job (coordinator/index_maintenance.cc); reading through an
// index is the CQL layer's (cql/executor/index_scan.h).
//
// Thread safety: pure functions.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "db/reader.h"
#include "types/schema.h"

namespace tessera {

// Names of the backing table's partition-key columns. A base table with a key
// column of one of these names cannot be indexed (BackingTableSchema says so).
inline constexpr const char* kIndexValueColumn = "$value";
inline constexpr const char* kIndexKeyColumn = "$key";

// The schema of `index`'s backing table (name index.backing_table, index_of
// set; id and uuid left for the catalog, except the uuid: derived from the
// base table's uuid and the index name, so every node of a cluster that runs
// the CREATE INDEX gets the same one).
// Errors: InvalidArgument in Cassandra 4.1's words when the column cannot be
// indexed this way (the only partition key column, a counter, a duration, a
// non-frozen UDT, keys()/values()/entries() of a frozen collection, full() of
// a non-frozen one, keys()/entries() of a non-map, ...).
Result<TableSchema> BackingTableSchema(const TableSchema& base, const IndexDef& index);

// The value type an index on `column` with `target` is keyed by (the element
// type for VALUES of a list or set, the map's key or value type ...).
CqlType IndexedValueType(const ColumnDef& column, IndexDef::Target target);

// One index entry: an index row.
struct IndexEntry {
  std::vector<std::string> value;     // the backing table's partition key (serialized)
  std::vector<std::string> base_key;  // base partition key components, then clustering
  uint32_t expiry = 0;                // seconds since the epoch when the indexed cell expires; 0: never
  auto operator<=>(const IndexEntry&) const = default;
};

// Appends the entries `index` has for one base row: `row` (live cells only, as
// reads return them) of the partition `partition_key`. For an index on a
// static column, call with row == nullptr and the partition's static row.
// A row that is absent (nullptr) gives no entry for non-static indexes.
void CollectIndexEntries(const TableSchema& base, const IndexDef& index, const std::vector<std::string>& partition_key,
                         const RowResult* row, const RowResult* static_row, std::vector<IndexEntry>* out);

// A 16-byte uuid (version 4 form) derived from a base table's uuid and a
// name, so that every node of a cluster gives an index's backing table (or a
// view: name "view/<view name>") the same one.
std::string DerivedUuid(const std::string& base_uuid, const std::string& name);

// Whether `index` is on a static column (its entries are per partition).
bool IsStaticIndex(const TableSchema& base, const IndexDef& index);

}  // namespace tessera
