// Database::ChangeBucketCount and CurrentLayout: the online change of a
// bucketed table's bucket count (TableSchema::buckets, keys/storage_key.h).
#include <algorithm>

#include "db/database.h"
#include "keys/storage_key.h"

namespace tessera {
namespace {

// The greatest encoded partition key stored in the last bucket version, or
// nullopt when that version holds nothing. Every bucket's last key is looked up.
Result<std::optional<std::string>> GreatestKeyOfLastVersion(const TableSchema& t, Replica* replica) {
  const BucketVersion& last = t.buckets.versions.back();
  const std::string begin = TablePrefix(t.id) + last.start, end = TablePrefix(t.id + 1);
  std::optional<std::string> greatest;
  for (uint32_t b = 0; b < last.count; ++b) {
    auto it = replica->NewIterator(PhysicalKey(t.id, b, begin), PhysicalKey(t.id, b, end), kHousekeepingConsistency);
    it->SeekToLast();
    if (!it->Valid()) {
      TESSERA_RETURN_IF_ERROR(it->status());
      continue;
    }
    TESSERA_ASSIGN_OR_RETURN(size_t n, PartitionPositionSize(t, it->key()));
    std::string encoded(it->key().substr(6, n - 6));
    if (!greatest || *greatest < encoded) greatest = std::move(encoded);
  }
  return greatest;
}

}  // namespace

std::shared_ptr<const TableSchema> Database::CurrentLayout(const std::shared_ptr<const TableSchema>& table) const {
  if (!table->HasOnlineLayout()) return table;
  auto current = catalog_.GetTableById(table->id);
  return current ? current : table;
}

Result<std::shared_ptr<const TableSchema>> Database::ChangeBucketCount(const TableSchema& table, uint32_t count,
                                                                       const std::string& reason) {
  if (cluster_tablets()) {
    return Status::InvalidArgument("bucket counts of a cluster node's tables do not change online yet: the new "
                                   "count would have to reach every replica through the cluster's metadata");
  }
  if (count < 1 || count > BucketLayout::kMaxBuckets) {
    return Status::InvalidArgument("buckets must be between 1 and " + std::to_string(BucketLayout::kMaxBuckets));
  }
  std::shared_ptr<const TableSchema> changed;
  uint32_t previous = 0;
  {
    std::unique_lock<std::shared_mutex> layout(bucket_layout_mu_);  // no write is routed meanwhile
    auto current = catalog_.GetTableById(table.id);
    if (!current) return Status::NotFound("table " + table.keyspace + "." + table.name + " does not exist");
    if (!current->buckets.enabled()) {
      return Status::InvalidArgument("table " + table.name + " was created without buckets; its keys hold no bucket");
    }
    previous = current->buckets.current_count();
    if (previous == count) return current;
    TableSchema next = *current;
    TESSERA_ASSIGN_OR_RETURN(auto greatest, GreatestKeyOfLastVersion(next, local_replica_.get()));
    if (greatest && next.buckets.versions.size() >= BucketLayout::kMaxVersions) {
      return Status::InvalidArgument("table " + table.name + " already has " +
                                     std::to_string(BucketLayout::kMaxVersions) +
                                     " bucket counts in use; a range scan reads every bucket of each");
    }
    if (greatest) {
      // Every encoded key above `greatest` sorts at or above greatest + 0x00: no
      // encoding is a prefix of another (keys/key_encoding.h).
      next.buckets.versions.push_back({*greatest + '\0', count});
    } else {
      next.buckets.versions.back().count = count;  // nothing was written under the last count
    }
    TESSERA_ASSIGN_OR_RETURN(changed, catalog_.AlterTable(std::move(next), /*layout_change=*/true));
  }
  const int64_t now = NowMicros();
  RecordTabletEvent({now, table.id, "buckets", {}, {},
                     "buckets " + std::to_string(previous) + " -> " + std::to_string(count) + ": " + reason});
  // One tablet per new bucket, so that the spread shows at once.
  for (uint32_t b = 1; b < count; ++b) {
    auto map = TabletsOf(table.id);
    if (!map) break;
    const std::string start = BucketPrefix(table.id, b);
    const Tablet& owner = map->Find(start);
    if (owner.start == start) continue;
    auto split = SplitTablet(*changed, owner.id, start, "bucket " + std::to_string(b) + " of " + std::to_string(count));
    if (!split.ok() && !split.status().IsInvalidArgument()) return split.status();
  }
  return changed;
}

}  // namespace tessera
