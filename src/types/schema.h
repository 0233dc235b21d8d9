// Schema objects: keyspaces, tables, columns (Cassandra's data model).
//
// A TableSchema is an immutable snapshot once registered in the catalog;
// ALTER produces a new snapshot. Column ids are assigned once and never
// reused within a table: stored cells refer to columns by id, so ids are
// FROZEN ON DISK for the life of a table.
//
// Thread safety: plain values; share immutable snapshots via shared_ptr<const>.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "types/cql_type.h"

namespace tessera {

enum class ColumnKind : uint8_t { kPartitionKey, kClustering, kStatic, kRegular };
enum class SortOrder : uint8_t { kAsc, kDesc };

// How a table's partitions are spread over tablets.
//  kHash:  partitions ordered by Murmur3 token (Cassandra's order); tablets are
//          token ranges. The default.
//  kRange: partitions ordered by partition-key value; tablets are key ranges,
//          and range scans over partition keys are meaningful.
enum class Distribution : uint8_t { kHash, kRange };

struct ColumnDef {
  uint32_t id = 0;  // stable within the table; FROZEN ON DISK
  std::string name;
  CqlType type = CqlType::Scalar(TypeKind::kInt);
  ColumnKind kind = ColumnKind::kRegular;
  SortOrder order = SortOrder::kAsc;  // clustering columns only
};

struct TableOptions {
  int32_t default_time_to_live = 0;     // seconds; 0 = none
  int32_t gc_grace_seconds = 864000;    // 10 days, Cassandra's default
  std::string comment;
  // Hash tables start with this many token-range tablets (a power of two).
  uint32_t initial_tablets = 4;
  // Options Tessera stores but does not interpret (compaction, caching, ...).
  std::map<std::string, std::string> extra;
};

// Hidden buckets of a range table (`WITH buckets = N | 'auto'`; DESIGN
// "Key-design primitives"): storage puts bucket = token(partition key) mod N in
// front of every key, so a monotonic key's writes spread over N key ranges.
//
// Counts are versioned by key: version i applies to the partitions whose
// encoded partition key (ASC components, keys/key_encoding.h) is >= start_i and
// < start_{i+1}. A new count is added with a start above every partition key
// written so far (db/bucket_layout_change), so the hot tail of a monotonic key
// moves to the new count at once, every partition still lives in exactly one
// bucket, and nothing is rewritten. FROZEN ON DISK (schema JSON "buckets").
struct BucketVersion {
  std::string start;   // encoded partition key from which `count` applies; "" for the first version
  uint32_t count = 1;  // in [1, kMaxBuckets]
};

struct BucketLayout {
  static constexpr uint32_t kMaxBuckets = 1024;
  static constexpr size_t kMaxVersions = 32;  // a scan opens a stream per bucket of every version it meets
  bool automatic = false;              // buckets = 'auto': the balancer raises the count under a tail hotspot
  std::vector<BucketVersion> versions; // ascending start, the first with start ""; empty: no buckets
  bool enabled() const { return !versions.empty(); }
  // The version a partition key (encoded) falls into. REQUIRES: enabled().
  size_t VersionIndexFor(std::string_view encoded_partition_key) const;
  uint32_t current_count() const { return versions.empty() ? 0 : versions.back().count; }
  uint32_t max_count() const;
};

// Partition buckets (`WITH partition_buckets = N | 'auto'`; DESIGN "Key-design
// primitives", GeminiDB's random suffix done by the database): the rows of one
// partition spread over sub-partitions, sub = Murmur3(encoded clustering key)
// mod count, each a partition position of its own (keys/storage_key.h) that a
// tablet boundary may separate. The partition header (partition and range
// deletions) and the static row live in sub-partition 0, so they keep
// whole-partition meaning; reads merge the sub-partitions in clustering order.
//
// Counts are a history, oldest first: a new count applies to new writes, a row
// written earlier stays where it is, reads cover sub-partitions [0, the
// greatest count) and reconcile a row found in two, and a row deletion is
// written to the sub-partition of every count in the history. Fixed N (and
// ALTER) keeps one table-wide history; 'auto' starts every partition at 1 and
// the balancer raises a hot or large partition's own count, kept in
// `partitions`. FROZEN ON DISK (schema JSON "partition_buckets").
struct SplitPartition {
  std::string partition_key;     // encoded partition key (ASC components, keys/key_encoding.h)
  std::vector<uint32_t> counts;  // the partition's history; replaces the table-wide one
};

struct PartitionBucketLayout {
  static constexpr uint32_t kMaxCount = 256;
  static constexpr size_t kMaxCounts = 8;          // a row deletion writes to one sub-partition per count
  static constexpr size_t kMaxSplitPartitions = 64; // 'auto' raises kept per table
  bool automatic = false;                 // partition_buckets = 'auto'
  std::vector<uint32_t> counts;           // table-wide history, oldest first; empty: no partition buckets
  std::vector<SplitPartition> partitions; // sorted by partition_key, unique
  bool enabled() const { return !counts.empty(); }
  // The history that applies to a partition (its own when it was raised). REQUIRES: enabled().
  const std::vector<uint32_t>& CountsFor(std::string_view encoded_partition_key) const;
  // The sub-partitions a read of the partition covers: [0, the greatest count of its history).
  uint32_t SpanFor(std::string_view encoded_partition_key) const;
};

// A secondary index (Cassandra 4.1 CQL: CREATE INDEX), built as ScyllaDB's
// global index: an internal table (`backing_table`, same keyspace) whose
// partition key is the indexed value and whose clustering key is the base
// row's primary key, so its tablets split and move like any other table's
// (db/secondary_index.h). FROZEN ON DISK (schema JSON "indexes").
struct IndexDef {
  // What of the column is indexed; the spellings of IndexTargetName are the
  // target option Cassandra shows in system_schema.indexes.
  enum class Target : uint8_t { kValues, kKeys, kEntries, kFull };
  std::string name;           // unique within the keyspace
  uint32_t column_id = 0;     // the indexed column
  Target target = Target::kValues;
  std::string backing_table;  // name of the table holding the entries (global indexes)

  // kGlobal: the backing table above. kVector: a storage-attached ANN index
  // (Cassandra 5.0's SAI on a vector<float, n> column, ScyllaDB's
  // vector_index), kept in memory beside each replica's own rows
  // (db/vector_index.h); no backing table. FROZEN ON DISK as "kind":
  // absent or "global", "vector".
  enum class Kind : uint8_t { kGlobal, kVector };
  // How ANN OF ranks rows, Cassandra's similarity_function option.
  enum class Similarity : uint8_t { kCosine, kEuclidean, kDotProduct };
  Kind kind = Kind::kGlobal;
  std::string class_name;  // kVector: the USING class as written ('StorageAttachedIndex', 'vector_index', ...)
  Similarity similarity = Similarity::kCosine;
  bool is_vector() const { return kind == Kind::kVector; }
};

// "cosine", "euclidean", "dot_product" (the option's values, lower-case).
const char* SimilarityName(IndexDef::Similarity similarity);
// Case-insensitive; nullopt for any other name.
std::optional<IndexDef::Similarity> ParseSimilarity(std::string_view name);

// "v", "keys(m)", "values(s)", "entries(m)" or "full(f)": the index's target
// as Cassandra writes it (values() only for collections).
std::string IndexTargetText(const IndexDef& index, const std::string& column_name, bool collection);

// What a materialized view's table is a view of (Cassandra 4.1's and
// ScyllaDB's CREATE MATERIALIZED VIEW; db/materialized_view.h). The view is an
// ordinary table with tablets of its own; its columns carry the names of the
// base columns they copy. FROZEN ON DISK (schema JSON "view").
struct ViewDef {
  std::string base_table;            // the base table's name, same keyspace
  std::string base_uuid;             // the base table's uuid (16 bytes): system_schema.views base_table_id
  bool include_all_columns = false;  // SELECT *: columns added to the base later join the view
  std::string where_clause;          // "a IS NOT NULL AND b IS NOT NULL", as system_schema.views shows it
};

class TableSchema {
 public:
  std::string keyspace;
  std::string name;
  uint32_t id = 0;          // storage-key prefix; FROZEN ON DISK; assigned by the catalog
  std::string uuid;         // 16 bytes, random (v4); what system_schema shows as id
  Distribution distribution = Distribution::kHash;
  TableOptions options;
  std::vector<ColumnDef> columns;  // partition key, clustering (in key order), then others
  BucketLayout buckets;            // range tables only; see BucketLayout
  PartitionBucketLayout partition_buckets;  // tables with clustering columns; see PartitionBucketLayout
  std::vector<IndexDef> indexes;   // secondary indexes on this table
  // Non-empty on the backing table of a secondary index: the index's name.
  // Such tables are internal: hidden from system_schema and DESCRIBE.
  std::string index_of;
  // Set on a materialized view's table: what it is a view of.
  std::optional<ViewDef> view;
  // On a base table: the names of its materialized views (same keyspace).
  std::vector<std::string> views;
  bool is_view() const { return view.has_value(); }

  // Columns of a kind, in key order for key columns.
  std::vector<const ColumnDef*> PartitionKey() const { return OfKind(ColumnKind::kPartitionKey); }
  std::vector<const ColumnDef*> Clustering() const { return OfKind(ColumnKind::kClustering); }
  std::vector<const ColumnDef*> OfKind(ColumnKind kind) const;
  const ColumnDef* FindColumn(std::string_view name) const;
  const ColumnDef* FindColumnById(uint32_t id) const;
  const IndexDef* FindIndex(std::string_view index_name) const;
  bool HasStatic() const { return !OfKind(ColumnKind::kStatic).empty(); }
  // A counter table: its regular columns are counters (Validate refuses a mix).
  bool HasCounters() const;
  // Whether the key layout changes online (buckets or partition buckets): writes and reads
  // then use the catalog's current schema, not the one a statement was bound to.
  bool HasOnlineLayout() const { return buckets.enabled() || partition_buckets.enabled(); }
  uint32_t NextColumnId() const;

  // Checks the invariants: a non-empty partition key; key columns of keyable
  // types; unique column names; static columns only with clustering columns;
  // no counter mixed with non-counter regular columns; initial_tablets a
  // power of two in [1, 65536]; non-negative TTL and gc_grace; buckets only
  // on range tables, counts in [1, kMaxBuckets], version starts ascending;
  // partition_buckets only with clustering columns and without buckets, at
  // most kMaxCounts counts in [1, kMaxCount] per history.
  // Errors: InvalidArgument naming the offending column or option.
  Status Validate() const;

 private:
  Status ValidatePartitionBuckets() const;
};

struct KeyspaceMetadata {
  std::string name;
  // Replication options as given, e.g. {"class": "SimpleStrategy", "replication_factor": "1"}.
  std::map<std::string, std::string> replication{{"class", "SimpleStrategy"}, {"replication_factor", "1"}};
  bool durable_writes = true;
};

const char* ToString(Distribution d);
// `name` as a CQL identifier: as is when it is a lowercase unquoted
// identifier, else double-quoted with quotes doubled (CQL 3 §identifiers).
std::string QuoteIdentifier(const std::string& name);
Result<Distribution> ParseDistribution(std::string_view name);  // "hash" | "range"

}  // namespace tessera
