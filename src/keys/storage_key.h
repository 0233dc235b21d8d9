// Storage keys: where a row lives in the ordered key space. FROZEN ON DISK.
//
//   partition position = table_id (u32 big-endian)
//                        [hash tables: token as u64 big-endian of (token ^ 2^63)]
//                        partition-key components, each EncodeKeyComponent(ASC)
//   storage key        = partition position | kind (1 byte) | clustering components
//                        (each encoded in its column's ASC/DESC order)
//   kind: 0x00 partition header (partition deletion, range tombstones)
//         0x01 static row
//         0x02 clustering row (tables without clustering columns: no components)
//
// Bucketed range tables (TableSchema::buckets, `WITH buckets = N`):
//   partition position = table_id | bucket (u16 big-endian) | partition-key components
// with bucket = token(partition key) mod the count of the partition's bucket
// version. The "logical" form of a key drops the two bucket bytes; logical keys
// sort in partition-key order, and the executor's key ranges and the paging
// cursors of bucketed tables are logical (db/bucketed_scan.h fans them out).
//
// Partition-bucketed tables (TableSchema::partition_buckets, `WITH partition_buckets = N`):
//   partition position = table_id | [token] | partition-key components | sub-partition (u16 big-endian)
// with sub-partition = SubPartitionOf(encoded clustering key, count) for clustering
// rows and 0 for the header and the static row. Each sub-partition is a partition
// position of its own, so a tablet boundary may fall between the sub-partitions of
// one partition; the *logical* position (without the two bytes) is a prefix of all
// of them, and it is what EncodePartitionPosition returns for such tables.
//
// All keys of one partition share its partition position as a prefix and are
// contiguous (components are self-delimiting and their count is fixed per
// table), so any key range whose bounds are partition positions or token
// prefixes never cuts a partition in two. Within a partition: header, then
// static row, then rows in clustering order.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "keys/token.h"
#include "types/schema.h"

namespace tessera {

enum class KeyKind : uint8_t { kPartitionHeader = 0x00, kStaticRow = 0x01, kRow = 0x02 };

std::string TablePrefix(uint32_t table_id);
// table_id | bucket: where bucket `bucket` of a bucketed table starts. REQUIRES: bucket < 65536.
std::string BucketPrefix(uint32_t table_id, uint32_t bucket);
// The logical form of a storage key or position of `table` (identity for unbucketed tables,
// and for keys shorter than a bucket prefix).
std::string LogicalKey(const TableSchema& table, std::string_view key);
// The physical form of logical key `logical` in bucket `bucket`: a key below the table maps to
// the bucket's start, one at or past the table's end to the bucket's end.
std::string PhysicalKey(uint32_t table_id, uint32_t bucket, std::string_view logical);

// Order-preserving 8-byte form of a token; a prefix of every key with that token.
std::string EncodeToken(Token token);
Token DecodeToken(std::string_view eight_bytes);

// Partition position of a partition key (serialized components, key order);
// for partition-bucketed tables the logical one (SubPartitionPosition adds the sub-partition).
// *token receives the token (hash tables) or 0 (range tables).
// Errors: InvalidArgument when the component count or a value is wrong.
Status EncodePartitionPosition(const TableSchema& table, const std::vector<std::string_view>& partition_key,
                               std::string* out, Token* token);

// Bytes of the sub-partition number (u16 big-endian) after a logical position. FROZEN ON DISK.
constexpr size_t kSubPartitionBytes = 2;
// The position of sub-partition `sub` of a partition-bucketed table's logical position.
// REQUIRES: sub < 65536.
std::string SubPartitionPosition(std::string_view logical_position, uint32_t sub);
// The sub-partition number in `key` after its logical position of `logical_size` bytes.
// REQUIRES: key.size() >= logical_size + kSubPartitionBytes.
uint32_t SubPartitionAt(std::string_view key, size_t logical_size);
// The sub-partition a clustering row lives in under `count`: Murmur3 (keys/murmur3.h) of the
// encoded clustering key, mod count. FROZEN ON DISK. REQUIRES: count >= 1.
uint32_t SubPartitionOf(std::string_view encoded_clustering, uint32_t count);
// The encoded partition key within a partition position (logical or not): what follows the
// table id and, on hash tables, the token. REQUIRES: a position of `table` (at least that long).
std::string_view EncodedPartitionKeyOf(const TableSchema& table, std::string_view position);

// Appends encoded clustering components (a prefix of the clustering key is allowed).
// Errors: InvalidArgument for too many components or an invalid value.
Status EncodeClusteringPrefix(const TableSchema& table, const std::vector<std::string_view>& clustering,
                              std::string* out);

struct DecodedKey {
  uint32_t table_id = 0;
  Token token = 0;                        // hash tables only
  std::vector<std::string> partition_key; // serialized components
  size_t partition_position_size = 0;     // bytes of the key that form the partition position
  uint32_t sub_partition = 0;             // partition-bucketed tables only
  KeyKind kind = KeyKind::kRow;
  std::vector<std::string> clustering;    // serialized components
  std::string_view encoded_clustering;    // the clustering part of the key (view into the input)
};

// Decodes a full storage key. Errors: Corruption on malformed input.
Result<DecodedKey> DecodeStorageKey(const TableSchema& table, std::string_view key);

// The partition-key components (serialized) of a partition position (for
// partition-bucketed tables a logical or a sub-partition's position).
// Errors: Corruption on malformed input.
Result<std::vector<std::string>> DecodePartitionPosition(const TableSchema& table, std::string_view position);

// Length of the partition-position prefix of storage key `key` without decoding values
// (partition-bucketed tables: including the sub-partition).
// Errors: Corruption on malformed input.
Result<size_t> PartitionPositionSize(const TableSchema& table, std::string_view key);
// The same without the sub-partition: the logical position's length (equal to
// PartitionPositionSize for other tables). `key` may be a logical key.
Result<size_t> LogicalPartitionPositionSize(const TableSchema& table, std::string_view key);

}  // namespace tessera
