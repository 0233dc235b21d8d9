#include "storage/merge_operator.h"

#include <rocksdb/merge_operator.h>

#include "storage/partition_header.h"
#include "storage/row_fragment.h"

namespace tessera {
namespace {

// Decodes every value, folds them with `reconcile`, encodes the result.
template <typename T, typename Decode, typename Reconcile, typename Encode>
Status MergeAll(const std::vector<std::string_view>& values, Decode decode, Reconcile reconcile, Encode encode,
                std::string* out) {
  T acc, next;
  TESSERA_RETURN_IF_ERROR(decode(values[0], &acc));
  for (size_t i = 1; i < values.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(decode(values[i], &next));
    reconcile(&acc, next);
  }
  out->clear();
  encode(acc, out);
  return Status::OK();
}

}  // namespace

Status MergeStoredValues(std::optional<std::string_view> existing, const std::vector<std::string_view>& operands,
                         std::string* out) {
  std::vector<std::string_view> all;
  if (existing) all.push_back(*existing);
  all.insert(all.end(), operands.begin(), operands.end());
  if (all.empty()) return Status::Corruption("merge of nothing");
  if (all.size() == 1) {
    out->assign(all[0]);
    return Status::OK();
  }
  const uint8_t type = all[0].empty() ? 0 : static_cast<uint8_t>(all[0][0]);
  if (type == kValueTypeRowFragment) {
    return MergeAll<RowFragment>(all, DecodeRowFragment, ReconcileRow, EncodeRowFragment, out);
  }
  if (type == kValueTypePartitionHeader) {
    return MergeAll<PartitionHeader>(all, DecodePartitionHeader, ReconcileHeader, EncodePartitionHeader, out);
  }
  return Status::Corruption("unknown stored value type");
}

namespace {

class ReconcilingMergeOperator : public rocksdb::MergeOperator {
 public:
  explicit ReconcilingMergeOperator(MergeOperandStats* stats) : stats_(stats) {}

  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    if (stats_ != nullptr) stats_->Record(in.operand_list.size());
    std::vector<std::string_view> ops;
    ops.reserve(in.operand_list.size());
    for (const auto& s : in.operand_list) ops.emplace_back(s.data(), s.size());
    std::optional<std::string_view> existing;
    if (in.existing_value) existing.emplace(in.existing_value->data(), in.existing_value->size());
    if (!existing && ops.size() == 1) {  // the common case: one write, nothing older
      out->existing_operand = in.operand_list[0];
      return true;
    }
    return MergeStoredValues(existing, ops, &out->new_value).ok();
  }

  bool PartialMergeMulti(const rocksdb::Slice& key, const std::deque<rocksdb::Slice>& operands,
                         std::string* new_value, rocksdb::Logger* logger) const override {
    std::vector<std::string_view> ops;
    for (const auto& s : operands) ops.emplace_back(s.data(), s.size());
    return MergeStoredValues(std::nullopt, ops, new_value).ok();
  }

  // FROZEN ON DISK: RocksDB records the name in each SST file's properties.
  const char* Name() const override { return "tessera.ReconcilingMergeOperator.v1"; }

 private:
  MergeOperandStats* stats_;
};

}  // namespace

void MergeOperandStats::Record(uint64_t count) {
  full_merges.fetch_add(1, std::memory_order_relaxed);
  operands.fetch_add(count, std::memory_order_relaxed);
  size_t bucket = 0;
  while (bucket < kBuckets - 1 && count > kBucketBounds[bucket]) ++bucket;
  by_operands[bucket].fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<rocksdb::MergeOperator> NewReconcilingMergeOperator(MergeOperandStats* stats) {
  return std::make_shared<ReconcilingMergeOperator>(stats);
}

}  // namespace tessera
