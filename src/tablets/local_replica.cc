#include "tablets/replica.h"

namespace tessera {

// One node: its own store is every replica, so the consistency is met by the write or read itself.
Status LocalReplica::Apply(const WriteSet& writes, const RequestConsistency&) { return engine_->Write(writes); }

Status LocalReplica::Get(std::string_view key, std::string* value, const RequestConsistency&) {
  return engine_->Get(key, value);
}

void LocalReplica::MultiGet(const std::vector<std::string_view>& keys, std::vector<std::string>* values,
                            std::vector<Status>* statuses, const RequestConsistency&) {
  engine_->MultiGet(keys, values, statuses);
}

std::unique_ptr<KvIterator> LocalReplica::NewIterator(std::string lower, std::string upper,
                                                      const RequestConsistency&) {
  return engine_->NewIterator(std::move(lower), std::move(upper));
}

uint64_t LocalReplica::ApproximateSize(std::string_view begin, std::string_view end, bool include_memtables) {
  return engine_->ApproximateSize(begin, end, include_memtables);
}

}  // namespace tessera
