#include "cluster/write_set_codec.h"

#include "common/bytes.h"

namespace tessera::cluster {

void AppendWriteOps(const WriteSet& writes, std::string* out) {
  for (const auto& op : writes.ops()) {
    out->push_back(op.kind == WriteSet::Op::kMerge ? 0 : 1);
    PutVarint64(out, op.key.size());
    *out += op.key;
    PutVarint64(out, op.value.size());
    *out += op.value;
  }
}

Status DecodeWriteOps(std::string_view bytes, WriteSet* writes) {
  ByteReader r(bytes);
  while (!r.empty()) {
    uint8_t kind = 0;
    std::string key, value;
    if (!r.ReadByte(&kind) || kind > 1 || !r.ReadLengthPrefixed(&key) || !r.ReadLengthPrefixed(&value)) {
      return Status::Corruption("truncated or unknown write operations");
    }
    if (kind == 0) {
      writes->Merge(std::move(key), std::move(value));
    } else {
      writes->DeleteRange(std::move(key), std::move(value));
    }
  }
  return Status::OK();
}

}  // namespace tessera::cluster
