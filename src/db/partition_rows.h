// The rows of one partition as stored: its header, its static row, a stored
// row turned into a result, and the storage-key bounds of a clustering slice.
// Shared by the readers (db/reader.cc, db/sub_partition_read.cc,
// db/slice_read_async.cc, db/range_read_async.cc); not part of
// the database's API.
//
// Thread safety: pure functions over a thread-safe Replica.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "db/reader.h"
#include "storage/partition_header.h"
#include "tablets/tablet_map.h"

namespace tessera {

std::vector<std::string_view> Views(const std::vector<std::string>& v);
inline uint32_t Seconds(int64_t micros) { return static_cast<uint32_t>(micros / 1'000'000); }

// The partition key components and token of storage key `key` into `p`.
// Errors: InvalidArgument (not a key of `t`).
Status DecodePartitionKey(const TableSchema& t, std::string_view key, PartitionResult* p);

// Reads and decodes the header at `position` + kPartitionHeader; an absent
// header is an empty one. Counts the bytes read. Errors: Corruption, IOError.
Status LoadHeader(Replica* replica, const RequestConsistency& consistency, const std::string& position,
                  PartitionHeader* header, TabletCounters* counters);

// Turns a stored row (fragment) into a result, or nullopt when nothing of it
// is live as of `now` (seconds) after the header's deletions. `ck` is the
// encoded clustering part of the key. `tombstones` (optional) counts what the
// read had to skip: a deleted row and every cell tombstone, collection
// deletion or expired cell it visits. Errors: Corruption.
Result<std::optional<RowResult>> MaterializeFragment(const TableSchema& t, std::string_view ck, bool is_static,
                                                     RowFragment f, const PartitionHeader& header, uint32_t now,
                                                     uint64_t* tombstones = nullptr);
// The same from the stored value. Errors: Corruption.
Result<std::optional<RowResult>> Materialize(const TableSchema& t, std::string_view ck, bool is_static,
                                             std::string_view value, const PartitionHeader& header, uint32_t now,
                                             uint64_t* tombstones = nullptr);

// The live static row at `position` + kStaticRow (nullopt for tables without
// static columns). Errors: Corruption, IOError.
Result<std::optional<RowResult>> ReadStatic(const TableSchema& t, Replica* replica, const RequestConsistency& consistency,
                                            const std::string& position,
                                            const PartitionHeader& header, uint32_t now, TabletCounters* counters);

// Storage-key bounds [lo, hi) of a clustering slice within the partition at
// `position`. Errors: InvalidArgument for a bad clustering value.
Status SliceBounds(const TableSchema& t, const std::string& position, const SliceRequest& req, std::string* lo,
                   std::string* hi);

}  // namespace tessera
