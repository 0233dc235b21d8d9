#include "tablets/replica.h"

namespace tessera {

Status LocalReplica::Apply(const WriteSet& writes) { return engine_->Write(writes); }

Status LocalReplica::Get(std::string_view key, std::string* value) { return engine_->Get(key, value); }

void LocalReplica::MultiGet(const std::vector<std::string_view>& keys, std::vector<std::string>* values,
                            std::vector<Status>* statuses) {
  engine_->MultiGet(keys, values, statuses);
}

std::unique_ptr<KvIterator> LocalReplica::NewIterator(std::string lower, std::string upper) {
  return engine_->NewIterator(std::move(lower), std::move(upper));
}

uint64_t LocalReplica::ApproximateSize(std::string_view begin, std::string_view end, bool include_memtables) {
  return engine_->ApproximateSize(begin, end, include_memtables);
}

}  // namespace tessera
