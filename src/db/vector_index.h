// Vector indexes: approximate nearest-neighbour search over a vector<float, n>
// column (Cassandra 5.0's storage-attached index, ScyllaDB's vector_index),
// with hnswlib's HNSW graph (Malkov & Yashunin; Debian libhnswlib-dev).
//
// Where an index lives: every node keeps, per vector index, one graph over the
// rows *it stores* of that table, beside the data and in memory. It is kept in
// step through the storage engine's write observer (StorageEngine::
// SetWriteObserver), so every write a replica applies reaches it: a
// coordinator's mutations, hints, read repair, repair and the rows a tablet
// migration streams in; a migration's cleanup and TRUNCATE (range deletes)
// take the rows out. That is how the index follows its tablets: a split or a
// merge changes no stored key, a move changes which node stores them. A
// query asks, for each tablet of the table, one replica for the keys of its
// nearest rows in that tablet's key range (cql/executor/ann_search.h).
//
// What an entry is: a row's storage key and its vector as the replica holds
// it after the write, reconciled (the cell that won, the partition and range
// tombstones of its partition applied). Entries are candidates, never
// answers: the coordinator reads the rows back at the request's consistency
// level and ranks them by the exact similarity, so a stale entry (a TTL that
// ran out, a row deleted on another replica) can cost recall, never a wrong
// row.
//
// Distances: cosine ranks unit-normalized vectors by inner product (zero
// vectors are not indexed, as Cassandra refuses them); dot_product by inner
// product (Cassandra expects unit vectors); euclidean by squared L2. What
// users see are Cassandra's similarities (VectorSimilarity below).
//
// The graph of an index is built from the node's stored rows by CREATE INDEX
// and, after a restart, on the index's first search (so a node opens without
// reading every vector table); writes before the build are not indexed
// twice, the build reads them.
//
// Thread safety: all members are thread-safe. A search shares an index with
// other searches; a write or a build holds it alone.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/status.h"
#include "storage/storage_engine.h"
#include "types/schema.h"

namespace tessera {

class VectorIndex;

// Cassandra 5.0's similarity functions (VectorSimilarityFunction), each in
// [0, 1], higher is closer: cosine (1 + cos) / 2, euclidean 1 / (1 + d^2),
// dot_product (1 + a.b) / 2. REQUIRES: a.size() == b.size(); cosine of a zero
// vector is 0 here (callers refuse it first).
float VectorSimilarity(IndexDef::Similarity similarity, const std::vector<float>& a, const std::vector<float>& b);

// The floats of a serialized vector<float, n> (big-endian IEEE, 4 bytes
// each). Errors: InvalidArgument when the size is not 4 * dimension.
Result<std::vector<float>> DecodeFloatVector(std::string_view serialized, uint32_t dimension);

// Whether `column` can carry a vector index, and Cassandra's refusal if not.
Status CheckVectorIndexable(const TableSchema& table, const ColumnDef& column);

// One candidate row of a search: its storage key and the index's distance
// (smaller is closer; not a similarity).
struct VectorCandidate {
  std::string storage_key;
  float distance = 0;
};

class VectorIndexes {
 public:
  // REQUIRES: `engine` outlives this object, and this object outlives the
  // engine's write observer (the owner clears it first).
  explicit VectorIndexes(StorageEngine* engine);
  ~VectorIndexes();
  VectorIndexes(const VectorIndexes&) = delete;
  VectorIndexes& operator=(const VectorIndexes&) = delete;

  // Makes the set of indexes that of the catalog: `tables` is every table.
  // New indexes start unbuilt; those dropped (or whose table went) are freed.
  // A table's schema change (ALTER) only refreshes the schema they decode with.
  void Sync(const std::vector<std::shared_ptr<const TableSchema>>& tables);

  // The storage engine's write observer: refreshes the entries of the rows
  // the writes touched, in every built index of their tables.
  void OnWrite(const WriteSet& writes);

  // The `k` entries of index `index` (of table `table_id`) nearest `query`
  // whose storage keys lie in one of `ranges` ([begin, end) absolute keys;
  // empty: everywhere), nearest first. Builds the index first if needed.
  // `ef`: the search's candidate list (hnswlib's ef; at least k).
  // Errors: NotFound when no such index exists here; InvalidArgument for a
  // query of another dimension or a zero vector under cosine; IOError from
  // the build's reads.
  Result<std::vector<VectorCandidate>> Search(uint32_t table_id, const std::string& index, const std::vector<float>& query,
                                              size_t k, const std::vector<std::pair<std::string, std::string>>& ranges,
                                              size_t ef = 0);

  // Builds index `index` of table `table_id` now if it is not built yet
  // (CREATE INDEX: from then on every write keeps it). Errors: NotFound,
  // IOError from the reads.
  Status Build(uint32_t table_id, const std::string& index);

  // Entries of an index (built or not: 0 before the build). For tests and /metrics.
  size_t Size(uint32_t table_id, const std::string& index);

 private:
  std::shared_ptr<VectorIndex> Find(uint32_t table_id, const std::string& index);
  StorageEngine* engine_;
  std::atomic<bool> any_{false};  // any index at all: writes to a node without one pay nothing more
  std::shared_mutex mu_;  // guards by_table_ (not the indexes: each has its own lock)
  std::unordered_map<uint32_t, std::vector<std::shared_ptr<VectorIndex>>> by_table_;
};

}  // namespace tessera
