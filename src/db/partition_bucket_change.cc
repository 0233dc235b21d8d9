// Database::ChangePartitionBuckets: a new count in a partition-bucketed
// table's history, for one partition ('auto') or for the table (ALTER).
#include <algorithm>

#include "db/database.h"
#include "keys/storage_key.h"
#include "types/value_literal.h"

namespace tessera {
namespace {

// The history a change appends to: the partition's own (created from the
// table-wide one on its first raise), or the table-wide one.
Result<std::vector<uint32_t>*> HistoryToChange(TableSchema* t, const std::optional<std::string>& partition) {
  PartitionBucketLayout& pb = t->partition_buckets;
  if (!partition) return &pb.counts;
  const std::string key(EncodedPartitionKeyOf(*t, *partition));
  auto it = std::lower_bound(pb.partitions.begin(), pb.partitions.end(), key,
                             [](const SplitPartition& p, const std::string& k) { return p.partition_key < k; });
  if (it != pb.partitions.end() && it->partition_key == key) return &it->counts;
  if (pb.partitions.size() >= PartitionBucketLayout::kMaxSplitPartitions) {
    return Status::InvalidArgument("table " + t->name + " already has " +
                                   std::to_string(PartitionBucketLayout::kMaxSplitPartitions) +
                                   " partitions with partition buckets of their own");
  }
  it = pb.partitions.insert(it, SplitPartition{key, pb.counts});
  return &it->counts;
}

std::string PartitionText(const TableSchema& t, const std::optional<std::string>& partition) {
  if (!partition) return "table " + t.keyspace + "." + t.name;
  auto pk = DecodePartitionPosition(t, *partition);
  return "partition " + (pk.ok() ? PartitionKeyLiteral(t, *pk) : std::string("?"));
}

}  // namespace

Result<std::shared_ptr<const TableSchema>> Database::ChangePartitionBuckets(const TableSchema& table,
                                                                           const std::optional<std::string>& partition,
                                                                           uint32_t count, const std::string& reason) {
  if (cluster_tablets()) {
    return Status::InvalidArgument("bucket counts of a cluster node's tables do not change online yet: the new "
                                   "count would have to reach every replica through the cluster's metadata");
  }
  if (count < 1 || count > PartitionBucketLayout::kMaxCount) {
    return Status::InvalidArgument("partition_buckets must be between 1 and " +
                                   std::to_string(PartitionBucketLayout::kMaxCount));
  }
  std::shared_ptr<const TableSchema> changed;
  uint32_t previous = 0;
  {
    std::unique_lock<std::shared_mutex> layout(bucket_layout_mu_);  // no write is routed meanwhile
    auto current = catalog_.GetTableById(table.id);
    if (!current) return Status::NotFound("table " + table.keyspace + "." + table.name + " does not exist");
    if (!current->partition_buckets.enabled()) {
      return Status::InvalidArgument("table " + table.name +
                                     " was created without partition_buckets; its keys hold no sub-partition");
    }
    TableSchema next = *current;
    TESSERA_ASSIGN_OR_RETURN(std::vector<uint32_t>* history, HistoryToChange(&next, partition));
    previous = history->back();
    if (previous == count) return current;
    if (history->size() >= PartitionBucketLayout::kMaxCounts) {
      return Status::InvalidArgument(PartitionText(table, partition) + " already has " +
                                     std::to_string(PartitionBucketLayout::kMaxCounts) +
                                     " partition_buckets counts in use; a row deletion is written under each");
    }
    history->push_back(count);
    TESSERA_ASSIGN_OR_RETURN(changed, catalog_.AlterTable(std::move(next), /*layout_change=*/true));
  }
  RecordTabletEvent({NowMicros(), table.id, "partition_buckets", {}, {},
                     "partition_buckets of " + PartitionText(table, partition) + " " + std::to_string(previous) +
                         " -> " + std::to_string(count) + ": " + reason});
  return changed;
}

}  // namespace tessera
