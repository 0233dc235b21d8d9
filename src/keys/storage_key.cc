#include "keys/storage_key.h"

#include <algorithm>

#include "common/bytes.h"
#include "keys/key_encoding.h"
#include "keys/murmur3.h"

namespace tessera {

std::string TablePrefix(uint32_t table_id) {
  std::string out;
  PutBigEndian32(&out, table_id);
  return out;
}

std::string BucketPrefix(uint32_t table_id, uint32_t bucket) {
  std::string out = TablePrefix(table_id);
  out.push_back(static_cast<char>(bucket >> 8));
  out.push_back(static_cast<char>(bucket & 0xFF));
  return out;
}

std::string LogicalKey(const TableSchema& table, std::string_view key) {
  if (!table.buckets.enabled() || key.size() < 6) return std::string(key);
  std::string out(key.substr(0, 4));
  out.append(key.substr(6));
  return out;
}

std::string PhysicalKey(uint32_t table_id, uint32_t bucket, std::string_view logical) {
  const std::string table = TablePrefix(table_id);
  if (logical < std::string_view(table)) return BucketPrefix(table_id, bucket);
  if (!logical.starts_with(table)) return BucketPrefix(table_id, bucket + 1);
  return BucketPrefix(table_id, bucket) + std::string(logical.substr(4));
}

std::string SubPartitionPosition(std::string_view logical_position, uint32_t sub) {
  std::string out(logical_position);
  PutBigEndian16(&out, static_cast<uint16_t>(sub));
  return out;
}

uint32_t SubPartitionAt(std::string_view key, size_t logical_size) { return GetBigEndian16(key.data() + logical_size); }

uint32_t SubPartitionOf(std::string_view encoded_clustering, uint32_t count) {
  return static_cast<uint32_t>(static_cast<uint64_t>(CassandraMurmur3(encoded_clustering).h1) % count);
}

std::string_view EncodedPartitionKeyOf(const TableSchema& table, std::string_view position) {
  const size_t prefix = 4 + (table.distribution == Distribution::kHash ? 8 : 0);
  return position.substr(std::min(prefix, position.size()));
}

std::string EncodeToken(Token token) {
  std::string out;
  PutBigEndian64(&out, static_cast<uint64_t>(token) ^ 0x8000000000000000ULL);
  return out;
}

Token DecodeToken(std::string_view b) {
  return static_cast<Token>(GetBigEndian64(b.data()) ^ 0x8000000000000000ULL);
}

Status EncodePartitionPosition(const TableSchema& table, const std::vector<std::string_view>& pk,
                               std::string* out, Token* token) {
  auto cols = table.PartitionKey();
  if (pk.size() != cols.size()) {
    return Status::InvalidArgument("partition key of " + table.name + " has " + std::to_string(cols.size()) +
                                   " components, got " + std::to_string(pk.size()));
  }
  PutBigEndian32(out, table.id);
  *token = 0;
  if (table.distribution == Distribution::kHash) {
    *token = TokenOfPartitionKey(pk);
    out->append(EncodeToken(*token));
  }
  if (pk.size() == 1 && pk[0].empty()) return Status::InvalidArgument("Key may not be empty");
  std::string encoded;
  for (size_t i = 0; i < pk.size(); ++i) {
    Status s = EncodeKeyComponent(cols[i]->type, pk[i], SortOrder::kAsc, &encoded);
    if (!s.ok()) return Status::InvalidArgument("partition key column " + cols[i]->name + ": " + s.message());
  }
  if (table.buckets.enabled()) {
    const auto& version = table.buckets.versions[table.buckets.VersionIndexFor(encoded)];
    auto bucket = static_cast<uint32_t>(static_cast<uint64_t>(TokenOfPartitionKey(pk)) % version.count);
    out->push_back(static_cast<char>(bucket >> 8));
    out->push_back(static_cast<char>(bucket & 0xFF));
  }
  out->append(encoded);
  return Status::OK();
}

Status EncodeClusteringPrefix(const TableSchema& table, const std::vector<std::string_view>& ck, std::string* out) {
  auto cols = table.Clustering();
  if (ck.size() > cols.size()) {
    return Status::InvalidArgument("clustering key of " + table.name + " has " + std::to_string(cols.size()) +
                                   " components, got " + std::to_string(ck.size()));
  }
  for (size_t i = 0; i < ck.size(); ++i) {
    Status s = EncodeKeyComponent(cols[i]->type, ck[i], cols[i]->order, out);
    if (!s.ok()) return Status::InvalidArgument("clustering column " + cols[i]->name + ": " + s.message());
  }
  return Status::OK();
}

namespace {

Status DecodeComponents(const std::vector<const ColumnDef*>& cols, bool use_order, std::string_view* in,
                        std::vector<std::string>* out) {
  for (const auto* c : cols) {
    std::string v;
    TESSERA_RETURN_IF_ERROR(DecodeKeyComponent(c->type, use_order ? c->order : SortOrder::kAsc, in, &v));
    if (out) out->push_back(std::move(v));
  }
  return Status::OK();
}

// Decodes the logical partition position (table id, token, bucket, components).
Status DecodePartitionPart(const TableSchema& table, std::string_view* in, DecodedKey* d) {
  if (in->size() < 4) return Status::Corruption("storage key shorter than a table id");
  d->table_id = GetBigEndian32(in->data());
  if (d->table_id != table.id) return Status::Corruption("storage key belongs to another table");
  in->remove_prefix(4);
  if (table.distribution == Distribution::kHash) {
    if (in->size() < 8) return Status::Corruption("storage key without a token");
    d->token = DecodeToken(*in);
    in->remove_prefix(8);
  }
  if (table.buckets.enabled()) {
    if (in->size() < 2) return Status::Corruption("storage key without a bucket");
    in->remove_prefix(2);
  }
  return DecodeComponents(table.PartitionKey(), false, in, &d->partition_key);
}

}  // namespace

Result<DecodedKey> DecodeStorageKey(const TableSchema& table, std::string_view key) {
  DecodedKey d;
  std::string_view in = key;
  TESSERA_RETURN_IF_ERROR(DecodePartitionPart(table, &in, &d));
  if (table.partition_buckets.enabled()) {
    if (in.size() < kSubPartitionBytes) return Status::Corruption("storage key without a sub-partition");
    d.sub_partition = SubPartitionAt(in, 0);
    in.remove_prefix(kSubPartitionBytes);
  }
  d.partition_position_size = key.size() - in.size();
  if (in.empty()) return Status::Corruption("storage key without a kind byte");
  auto kind = static_cast<uint8_t>(in[0]);
  if (kind > static_cast<uint8_t>(KeyKind::kRow)) return Status::Corruption("unknown storage key kind");
  d.kind = static_cast<KeyKind>(kind);
  in.remove_prefix(1);
  d.encoded_clustering = in;
  if (d.kind == KeyKind::kRow) {
    TESSERA_RETURN_IF_ERROR(DecodeComponents(table.Clustering(), true, &in, &d.clustering));
  }
  if (!in.empty()) return Status::Corruption("trailing bytes in storage key");
  return d;
}

Result<std::vector<std::string>> DecodePartitionPosition(const TableSchema& table, std::string_view position) {
  DecodedKey d;
  std::string_view in = position;
  TESSERA_RETURN_IF_ERROR(DecodePartitionPart(table, &in, &d));
  if (table.partition_buckets.enabled() && in.size() == kSubPartitionBytes) in = {};  // a sub-partition's position
  if (!in.empty()) return Status::Corruption("trailing bytes after the partition key");
  return d.partition_key;
}

Result<size_t> PartitionPositionSize(const TableSchema& table, std::string_view key) {
  TESSERA_ASSIGN_OR_RETURN(size_t n, LogicalPartitionPositionSize(table, key));
  if (!table.partition_buckets.enabled()) return n;
  if (key.size() < n + kSubPartitionBytes) return Status::Corruption("storage key without a sub-partition");
  return n + kSubPartitionBytes;
}

Result<size_t> LogicalPartitionPositionSize(const TableSchema& table, std::string_view key) {
  std::string_view in = key;
  if (in.size() < 4) return Status::Corruption("storage key shorter than a table id");
  in.remove_prefix(4);
  if (table.distribution == Distribution::kHash) {
    if (in.size() < 8) return Status::Corruption("storage key without a token");
    in.remove_prefix(8);
  }
  if (table.buckets.enabled()) {
    if (in.size() < 2) return Status::Corruption("storage key without a bucket");
    in.remove_prefix(2);
  }
  TESSERA_RETURN_IF_ERROR(DecodeComponents(table.PartitionKey(), false, &in, nullptr));
  return key.size() - in.size();
}

}  // namespace tessera
