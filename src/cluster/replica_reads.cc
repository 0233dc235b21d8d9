#include "cluster/replica_reads.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack (WindowDigest)
#include <xxhash.h>

#include "common/bytes.h"
#include "keys/storage_key.h"
#include "storage/partition_header.h"
#include "storage/row_fragment.h"
#include "tablets/replica.h"

namespace tessera::cluster {

std::optional<std::string> RelativeKey(uint32_t table_id, std::string_view key) {
  const std::string prefix = TablePrefix(table_id);
  if (key.starts_with(prefix)) return std::string(key.substr(prefix.size()));
  if (key < prefix) return std::string();
  return std::nullopt;
}

std::string AbsoluteKey(uint32_t table_id, std::string_view relative) {
  std::string key = TablePrefix(table_id);
  key.append(relative);
  return key;
}

std::string AbsoluteEnd(uint32_t table_id, const std::string& relative_end) {
  return relative_end.empty() ? TablePrefix(table_id + 1) : AbsoluteKey(table_id, relative_end);
}

Result<RangeBatch> ReadRangeLocal(StorageEngine* engine, uint32_t table_id, const RangeQuery& q) {
  KeyWindowRead read;
  read.from = AbsoluteKey(table_id, q.from);
  read.from_inclusive = q.from_inclusive;
  read.reverse = q.reverse;
  read.from_end = q.from_end;
  read.limit = q.limit;
  read.lower = AbsoluteKey(table_id, q.lower);
  for (const auto& k : q.keys) read.keys.push_back(AbsoluteKey(table_id, k));
  auto it = engine->NewIterator(IteratorLower(read), AbsoluteEnd(table_id, q.upper));
  TESSERA_ASSIGN_OR_RETURN(KeyWindow window, ReadWindowFrom(it.get(), read, /*strip_key_bytes=*/4));
  return RangeBatch{std::move(window.entries), window.more, std::move(window.key_values)};
}

namespace {

std::string BigEndian64(uint64_t h) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(h >> (56 - 8 * i));
  return out;
}

}  // namespace

std::string WindowDigest(const RangeBatch& batch) {
  XXH3_state_t stack_state;
  XXH3_state_t* state = &stack_state;
  XXH3_64bits_reset(state);
  std::string length;
  auto part = [&](std::string_view bytes) {
    length.clear();
    PutVarint64(&length, bytes.size());
    XXH3_64bits_update(state, length.data(), length.size());
    XXH3_64bits_update(state, bytes.data(), bytes.size());
  };
  const char kAbsent = 0, kPresent = 1;
  for (const auto& [k, v] : batch.entries) {
    part(k);
    part(v);
  }
  for (const auto& v : batch.key_values) {
    XXH3_64bits_update(state, v ? &kPresent : &kAbsent, 1);
    if (v) part(*v);
  }
  XXH3_64bits_update(state, batch.more ? &kPresent : &kAbsent, 1);
  return BigEndian64(XXH3_64bits_digest(state));
}

std::string ValueDigest(std::string_view value) {
  return BigEndian64(XXH3_64bits(value.data(), value.size()));
}

Result<std::vector<std::optional<std::string>>> ReadKeysLocal(StorageEngine* engine, uint32_t table_id,
                                                              const std::vector<std::string>& relative_keys) {
  std::vector<std::string> keys;
  keys.reserve(relative_keys.size());
  for (const auto& k : relative_keys) keys.push_back(AbsoluteKey(table_id, k));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::string> values;
  std::vector<Status> statuses;
  engine->MultiGet(views, &values, &statuses);
  std::vector<std::optional<std::string>> out(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (statuses[i].ok()) {
      out[i] = std::move(values[i]);
    } else if (!statuses[i].IsNotFound()) {
      return statuses[i];
    }
  }
  return out;
}

Result<RangeDigest> DigestLocal(StorageEngine* engine, uint32_t table_id, const std::string& lower,
                                const std::string& upper) {
  std::unique_ptr<KvIterator> it =
      engine->NewIterator(AbsoluteKey(table_id, lower), AbsoluteEnd(table_id, upper));
  XXH3_state_t* state = XXH3_createState();
  if (!state) return Status::IOError("digest: out of memory");
  XXH3_64bits_reset(state);
  RangeDigest d;
  std::string length;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    for (std::string_view part : {it->key().substr(4), it->value()}) {
      length.clear();
      PutVarint64(&length, part.size());
      XXH3_64bits_update(state, length.data(), length.size());
      XXH3_64bits_update(state, part.data(), part.size());
    }
    ++d.keys;
  }
  d.digest = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  TESSERA_RETURN_IF_ERROR(it->status());
  return d;
}

WriteSet ToAbsolute(uint32_t table_id, const WriteSet& relative) {
  WriteSet ws;
  for (const auto& op : relative.ops()) {
    if (op.kind == WriteSet::Op::kMerge) {
      ws.Merge(AbsoluteKey(table_id, op.key), op.value);
    } else {
      ws.DeleteRange(AbsoluteKey(table_id, op.key), AbsoluteEnd(table_id, op.value));
    }
  }
  return ws;
}

Status ApplyLocal(StorageEngine* engine, uint32_t table_id, const WriteSet& relative_writes) {
  return engine->Write(ToAbsolute(table_id, relative_writes));
}

Status CheckWrites(const TableSchema& table, const WriteSet& relative_writes) {
  size_t n = 0;
  for (const auto& op : relative_writes.ops()) {
    ++n;
    if (op.kind != WriteSet::Op::kMerge) continue;
    auto refuse = [&](const std::string& why) {
      return Status::InvalidArgument("write " + std::to_string(n) + " of " +
                                     std::to_string(relative_writes.ops().size()) + " to table " + table.keyspace +
                                     "." + table.name + ": " + why);
    };
    auto key = DecodeStorageKey(table, AbsoluteKey(table.id, op.key));
    if (!key.ok()) return refuse("its key is not a row of the table (" + key.status().message() + ")");
    Status value;
    if (key->kind == KeyKind::kPartitionHeader) {
      PartitionHeader header;
      value = DecodePartitionHeader(op.value, &header);
    } else {
      RowFragment row;
      value = DecodeRowFragment(op.value, &row);
    }
    if (!value.ok()) return refuse("its value is not what the key holds (" + value.message() + ")");
  }
  return Status::OK();
}

WriteSet ToRelative(uint32_t table_id, const WriteSet& absolute) {
  WriteSet ws;
  for (const auto& op : absolute.ops()) {
    if (op.kind == WriteSet::Op::kMerge) {
      ws.Merge(RelativeKey(table_id, op.key).value_or(std::string()), op.value);
    } else {
      ws.DeleteRange(RelativeKey(table_id, op.key).value_or(std::string()),
                     RelativeKey(table_id, op.value).value_or(std::string()));
    }
  }
  return ws;
}

}  // namespace tessera::cluster
