#include "storage/compaction_filter.h"

#include <rocksdb/compaction_filter.h>

#include "common/bytes.h"
#include "keys/storage_key.h"
#include "storage/partition_header.h"
#include "storage/row_fragment.h"
#include "storage/table_registry.h"

namespace tessera {
namespace {

class GarbageCollectingFilter : public rocksdb::CompactionFilter {
 public:
  GarbageCollectingFilter(const TableRegistry* registry, uint32_t now, bool full)
      : registry_(registry), now_(now), full_(full) {}

  Decision FilterV2(int level, const rocksdb::Slice& key, ValueType type, const rocksdb::Slice& value,
                    std::string* new_value, std::string* skip_until) const override {
    if (type == ValueType::kBlobIndex || key.size() < 4 || value.empty()) return Decision::kKeep;
    auto table = registry_->Find(GetBigEndian32(key.data()));
    if (!table) return Decision::kKeep;
    std::string_view k(key.data(), key.size()), v(value.data(), value.size());
    bool merged = type == ValueType::kValue;  // a full value, not an operand
    const bool held = registry_->PurgeHeld(k);  // tombstones outlive gc_grace here for now
    auto vtype = static_cast<uint8_t>(v[0]);
    if (vtype == kValueTypePartitionHeader) return FilterHeader(*table, k, v, merged && !held, new_value);
    if (vtype == kValueTypeRowFragment) return FilterRow(*table, k, v, merged, held, new_value);
    return Decision::kKeep;
  }

  const char* Name() const override { return "tessera.GarbageCollectingFilter.v1"; }

 private:
  Decision FilterHeader(const TableSchema& table, std::string_view key, std::string_view value, bool merged,
                        std::string* new_value) const {
    PartitionHeader h;
    if (!DecodePartitionHeader(value, &h).ok()) return Decision::kKeep;
    std::string_view position = key.substr(0, key.size() - 1);
    // A partition-bucketed table's header (in sub-partition 0) covers every
    // sub-partition: remember the logical position, a prefix of all of them.
    if (table.partition_buckets.enabled() && position.size() >= kSubPartitionBytes) {
      position.remove_suffix(kSubPartitionBytes);
    }
    if (position != header_position_) {
      header_position_.assign(position);
      header_ = h;
    } else {
      ReconcileHeader(&header_, h);  // several operands of one header key
    }
    if (!merged || !full_ || !PurgeHeader(&h, now_, table.options.gc_grace_seconds)) return Decision::kKeep;
    if (h.IsEmpty()) return Decision::kRemove;
    EncodePartitionHeader(h, new_value);
    return Decision::kChangeValue;
  }

  Decision FilterRow(const TableSchema& table, std::string_view key, std::string_view value, bool merged, bool held,
                     std::string* new_value) const {
    RowFragment row;
    if (!DecodeRowFragment(value, &row).ok()) return Decision::kKeep;
    bool changed = false;
    const size_t sub = table.partition_buckets.enabled() ? kSubPartitionBytes : 0;
    if (!header_position_.empty() && key.size() > header_position_.size() + sub && key.starts_with(header_position_)) {
      auto kind = static_cast<KeyKind>(key[header_position_.size() + sub]);
      std::string_view ck = key.substr(header_position_.size() + sub + 1);
      changed |= ApplyDeletion(header_.DeletionFor(ck, kind == KeyKind::kStaticRow), &row);
    }
    changed |= CollectGarbage(&row, now_, table.options.gc_grace_seconds, /*purge=*/merged && !held);
    if (!changed) return Decision::kKeep;
    if (row.IsEmpty()) return Decision::kRemove;
    EncodeRowFragment(row, new_value);
    return Decision::kChangeValue;
  }

  const TableRegistry* registry_;
  uint32_t now_;
  bool full_;
  // The last partition header seen in this compaction (keys arrive in order),
  // by its logical position (keys/storage_key.h).
  mutable std::string header_position_;
  mutable PartitionHeader header_;
};

class GarbageCollectingFilterFactory : public rocksdb::CompactionFilterFactory {
 public:
  GarbageCollectingFilterFactory(const TableRegistry* registry, std::function<uint32_t()> now)
      : registry_(registry), now_(std::move(now)) {}

  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override {
    return std::make_unique<GarbageCollectingFilter>(registry_, now_(), context.is_full_compaction);
  }
  const char* Name() const override { return "tessera.GarbageCollectingFilterFactory.v1"; }

 private:
  const TableRegistry* registry_;
  std::function<uint32_t()> now_;
};

}  // namespace

std::shared_ptr<rocksdb::CompactionFilterFactory> NewGarbageCollectingFilterFactory(
    const TableRegistry* registry, std::function<uint32_t()> now_seconds) {
  return std::make_shared<GarbageCollectingFilterFactory>(registry, std::move(now_seconds));
}

}  // namespace tessera
