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

  // Columns of a kind, in key order for key columns.
  std::vector<const ColumnDef*> PartitionKey() const { return OfKind(ColumnKind::kPartitionKey); }
  std::vector<const ColumnDef*> Clustering() const { return OfKind(ColumnKind::kClustering); }
  std::vector<const ColumnDef*> OfKind(ColumnKind kind) const;
  const ColumnDef* FindColumn(std::string_view name) const;
  const ColumnDef* FindColumnById(uint32_t id) const;
  bool HasStatic() const { return !OfKind(ColumnKind::kStatic).empty(); }
  uint32_t NextColumnId() const;

  // Checks the invariants: a non-empty partition key; key columns of keyable
  // types; unique column names; static columns only with clustering columns;
  // no counter mixed with non-counter regular columns; initial_tablets a
  // power of two in [1, 65536]; non-negative TTL and gc_grace; buckets only
  // on range tables, counts in [1, kMaxBuckets], version starts ascending.
  // Errors: InvalidArgument naming the offending column or option.
  Status Validate() const;
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
