// libFuzzer target: the storage-key decoder and the stored-value decoders.
//
// Input byte 0 picks a table shape (hash or range; key columns of every
// key-able family, ASC and DESC); the rest is a storage key, or, for shapes
// >= kShapes, a stored value. Properties checked besides "no crash, no hang":
//  - a key that decodes re-encodes, and from that re-encoding on, decode and
//    encode are exact inverses (a fixed point after one normalisation);
//  - merging a decoded value with itself is idempotent (last-write-wins), and
//    commutative where counter increments add up.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "keys/storage_key.h"
#include "storage/merge_operator.h"
#include "storage/partition_header.h"
#include "storage/row_fragment.h"
#include "types/serialization.h"

namespace {

using namespace tessera;

TableSchema Shape(int i) {
  static const char* kKeyTypes[][3] = {
      {"int", "text", "timestamp"},
      {"text", "frozen<list<int>>", "uuid"},
      {"bigint", "decimal", "varint"},
      {"blob", "timeuuid", "double"},
      {"frozen<tuple<int, text>>", "frozen<map<text, int>>", "float"},
      {"ascii", "frozen<set<bigint>>", "date"},
      {"inet", "boolean", "time"},
      {"smallint", "tinyint", "frozen<list<frozen<list<text>>>>"},
  };
  const auto& k = kKeyTypes[i % 8];
  TableSchema t;
  t.keyspace = "f";
  t.name = "t";
  t.id = 1;
  t.distribution = i % 2 ? Distribution::kHash : Distribution::kRange;
  t.columns = {{0, "p", *CqlType::Parse(k[0]), ColumnKind::kPartitionKey, SortOrder::kAsc},
               {1, "c1", *CqlType::Parse(k[1]), ColumnKind::kClustering, i % 3 ? SortOrder::kDesc : SortOrder::kAsc},
               {2, "c2", *CqlType::Parse(k[2]), ColumnKind::kClustering, i % 4 ? SortOrder::kAsc : SortOrder::kDesc}};
  return t;
}

constexpr int kShapes = 16;

std::vector<std::string_view> Views(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

void CheckKey(const TableSchema& t, std::string_view key) {
  auto d = DecodeStorageKey(t, key);
  if (!d.ok()) return;
  std::string again;
  Token token;
  if (!EncodePartitionPosition(t, Views(d->partition_key), &again, &token).ok()) return;  // e.g. empty key
  again.push_back(static_cast<char>(d->kind));
  if (!EncodeClusteringPrefix(t, Views(d->clustering), &again).ok()) abort();
  // Decoding accepts a few non-canonical forms (a NaN with other bits, a
  // varint magnitude with leading zeros) that re-encode canonically; from
  // there on, decode and encode must be exact inverses.
  auto d2 = DecodeStorageKey(t, again);
  if (!d2.ok()) abort();
  std::string third;
  if (!EncodePartitionPosition(t, Views(d2->partition_key), &third, &token).ok()) abort();
  third.push_back(static_cast<char>(d2->kind));
  if (!EncodeClusteringPrefix(t, Views(d2->clustering), &third).ok() || third != again) abort();
  auto d3 = DecodeStorageKey(t, third);
  if (!d3.ok() || d3->partition_key != d2->partition_key || d3->clustering != d2->clustering) abort();
}

void CheckValue(std::string_view value) {
  RowFragment row;
  PartitionHeader header;
  bool is_row = DecodeRowFragment(value, &row).ok();
  bool is_header = DecodePartitionHeader(value, &header).ok();
  if (!is_row && !is_header) return;
  std::string merged;
  if (!MergeStoredValues(value, {value}, &merged).ok()) abort();
  // Last-write-wins is idempotent; counter increments add up instead (row_fragment.h), so a
  // value with a live counter cell must merge commutatively rather than idempotently.
  const bool counts = is_row && std::any_of(row.cells.begin(), row.cells.end(),
                                            [](const Cell& c) { return c.IsCounter() && !c.IsTombstone(); });
  std::string twice, other_way;
  if (!MergeStoredValues(merged, {merged}, &twice).ok()) abort();
  if (!counts && twice != merged) abort();
  if (counts && (!MergeStoredValues(merged, {value}, &twice).ok() ||
                 !MergeStoredValues(value, {merged}, &other_way).ok() || twice != other_way)) {
    abort();
  }
  (void)CollectGarbage(&row, 1000, 10, true);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  int shape = data[0] % (2 * kShapes);
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (shape < kShapes) {
    CheckKey(Shape(shape), rest);
    // Prefix the table id so that random bytes reach the component decoders.
    std::string keyed("\x00\x00\x00\x01", 4);
    keyed.append(rest);
    CheckKey(Shape(shape), keyed);
  } else {
    CheckValue(rest);
    auto type = CqlType::Parse(shape % 2 ? "map<text, frozen<list<decimal>>>" : "frozen<tuple<varint, duration, inet>>");
    (void)Deserialize(*type, rest);
  }
  return 0;
}
