#include "db/vector_index.h"

#include <hnswlib/hnswlib.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#include "common/bytes.h"
#include "keys/storage_key.h"
#include "storage/partition_header.h"
#include "storage/row_fragment.h"

namespace tessera {
namespace {

// HNSW's shape (hnswlib's defaults, which its authors tune recall with):
// M links per node, the candidate list while inserting, and the least
// candidate list while searching.
constexpr size_t kLinks = 16;
constexpr size_t kEfConstruction = 200;
constexpr size_t kMinEfSearch = 100;
constexpr size_t kInitialCapacity = 1024;

float Dot(const std::vector<float>& a, const std::vector<float>& b) {
  float s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// The vector as the graph stores it: unit length for cosine; nullopt for a
// vector cosine cannot rank (zero or near zero, or not finite).
std::optional<std::vector<float>> Prepared(IndexDef::Similarity similarity, std::vector<float> v) {
  for (float x : v) {
    if (!std::isfinite(x)) return std::nullopt;
  }
  if (similarity != IndexDef::Similarity::kCosine) return v;
  const float norm = std::sqrt(Dot(v, v));
  if (!(norm > 1e-6f)) return std::nullopt;
  for (float& x : v) x /= norm;
  return v;
}

}  // namespace

float VectorSimilarity(IndexDef::Similarity similarity, const std::vector<float>& a, const std::vector<float>& b) {
  switch (similarity) {
    case IndexDef::Similarity::kEuclidean: {
      float d = 0;
      for (size_t i = 0; i < a.size(); ++i) d += (a[i] - b[i]) * (a[i] - b[i]);
      return 1.0f / (1.0f + d);
    }
    case IndexDef::Similarity::kDotProduct: return (1.0f + Dot(a, b)) / 2.0f;
    case IndexDef::Similarity::kCosine: break;
  }
  const float norms = std::sqrt(Dot(a, a) * Dot(b, b));
  if (!(norms > 0)) return 0;
  return (1.0f + Dot(a, b) / norms) / 2.0f;
}

Result<std::vector<float>> DecodeFloatVector(std::string_view serialized, uint32_t dimension) {
  if (serialized.size() != size_t{4} * dimension) {
    return Status::InvalidArgument("expected a vector of " + std::to_string(dimension) + " floats, got " +
                                   std::to_string(serialized.size()) + " bytes");
  }
  std::vector<float> v(dimension);
  for (uint32_t i = 0; i < dimension; ++i) {
    const uint32_t bits = GetBigEndian32(serialized.data() + 4 * i);
    std::memcpy(&v[i], &bits, 4);
  }
  return v;
}

Status CheckVectorIndexable(const TableSchema& table, const ColumnDef& column) {
  if (column.type.kind() != TypeKind::kVector || column.type.params()[0].kind() != TypeKind::kFloat) {
    return Status::InvalidArgument("Vector indexes are only supported on vector<float, n> columns; " + column.name +
                                   " is of type " + column.type.ToCql());
  }
  if (column.kind != ColumnKind::kRegular) {
    return Status::InvalidArgument("Vector indexes are only supported on regular columns; " + column.name + " is not");
  }
  if (table.partition_buckets.enabled()) {
    return Status::InvalidArgument("Vector indexes are not supported on tables with partition_buckets");
  }
  return Status::OK();
}

// One index on this node: the graph, and which row each of its labels is.
class VectorIndex {
 public:
  VectorIndex(std::shared_ptr<const TableSchema> table, const IndexDef& def)
      : table_(std::move(table)), def_(def), dimension_(table_->FindColumnById(def.column_id)->type.dimension()) {}

  const std::string& name() const { return def_.name; }
  void set_table(std::shared_ptr<const TableSchema> table) {
    std::unique_lock lock(mu_);
    table_ = std::move(table);
  }

  // The rows of `writes` whose entries may have changed, refreshed. Does
  // nothing before the build (which reads them then).
  void OnWrite(StorageEngine* engine, const WriteSet& writes) {
    std::unique_lock lock(mu_);
    if (!graph_) return;
    const std::string prefix = TablePrefix(table_->id);
    for (const auto& op : writes.ops()) {
      if (op.kind == WriteSet::Op::kDeleteRange) {  // entries are this table's keys: the range picks them
        for (auto it = entries_.lower_bound(op.key); it != entries_.end() && (op.value.empty() || it->first < op.value); ++it) {
          Remove(it->second);
        }
        continue;
      }
      if (!op.key.starts_with(prefix)) continue;  // a batch may write other tables too
      auto position_size = PartitionPositionSize(*table_, op.key);
      if (!position_size.ok() || *position_size >= op.key.size()) continue;
      if (static_cast<uint8_t>(op.key[*position_size]) != static_cast<uint8_t>(KeyKind::kPartitionHeader)) {
        Refresh(engine, op.key, *position_size);
        continue;
      }
      // A partition or range deletion: every entry of the partition again.
      const std::string position = op.key.substr(0, *position_size);
      std::vector<std::string> keys;
      for (auto it = entries_.lower_bound(position); it != entries_.end() && it->first.starts_with(position); ++it) {
        keys.push_back(it->first);
      }
      for (const auto& key : keys) Refresh(engine, key, *position_size);
    }
  }

  Result<std::vector<VectorCandidate>> Search(StorageEngine* engine, const std::vector<float>& query, size_t k,
                                              const std::vector<std::pair<std::string, std::string>>& ranges, size_t ef) {
    if (query.size() != dimension_) {
      return Status::InvalidArgument("Invalid vector of " + std::to_string(query.size()) + " dimensions for " +
                                     def_.name + ", which indexes vectors of " + std::to_string(dimension_));
    }
    auto prepared = Prepared(def_.similarity, query);
    if (!prepared) return Status::InvalidArgument("Zero and near-zero vectors cannot be indexed or queried with cosine similarity");
    TESSERA_RETURN_IF_ERROR(EnsureBuilt(engine));
    if (k == 0) return std::vector<VectorCandidate>{};  // (the loop below stops at k only once it has one)
    std::shared_lock lock(mu_);
    auto in_ranges = [&](const std::string& key) {
      if (ranges.empty()) return true;
      return std::any_of(ranges.begin(), ranges.end(), [&](const auto& r) {
        return key >= r.first && (r.second.empty() || key < r.second);
      });
    };
    std::vector<VectorCandidate> out;
    const size_t stored = graph_->cur_element_count;
    // Ask for more until k of them fall in the ranges (a tablet is a part
    // of the keys this node holds) or every entry has been seen.
    for (size_t fetch = std::max({k, ef, kMinEfSearch});; fetch *= 4) {
      out.clear();
      std::priority_queue<std::pair<float, hnswlib::labeltype>> found;
      try {
        found = graph_->searchKnn(prepared->data(), std::min(fetch, std::max<size_t>(stored, 1)));
      } catch (const std::exception& e) {
        return Status::IOError(std::string("vector search failed: ") + e.what());
      }
      std::vector<std::pair<float, hnswlib::labeltype>> nearest;
      while (!found.empty()) {
        nearest.push_back(found.top());
        found.pop();
      }
      std::reverse(nearest.begin(), nearest.end());  // nearest first
      for (const auto& [distance, label] : nearest) {
        const std::string& key = keys_[label];
        if (in_ranges(key)) out.push_back({key, distance});
        if (out.size() == k) break;
      }
      if (out.size() >= k || fetch >= stored) break;
    }
    return out;
  }

  size_t Size() {
    std::shared_lock lock(mu_);
    return live_;
  }

  Status EnsureBuilt(StorageEngine* engine) {
    std::unique_lock lock(mu_);
    return graph_ ? Status::OK() : Build(engine);
  }

 private:
  struct Entry {
    hnswlib::labeltype label = 0;
    bool live = false;
  };

  // Reads every stored row of the table on this node into a new graph.
  // REQUIRES: mu_ held exclusively.
  Status Build(StorageEngine* engine) {
    if (def_.similarity == IndexDef::Similarity::kEuclidean) {
      space_ = std::make_unique<hnswlib::L2Space>(dimension_);
    } else {
      space_ = std::make_unique<hnswlib::InnerProductSpace>(dimension_);
    }
    try {
      graph_ = std::make_unique<hnswlib::HierarchicalNSW<float>>(space_.get(), kInitialCapacity, kLinks, kEfConstruction);
    } catch (const std::exception& e) {
      return Status::IOError(std::string("vector index: ") + e.what());
    }
    const std::string begin = TablePrefix(table_->id);
    const std::string end = TablePrefix(table_->id + 1);
    auto it = engine->NewIterator(begin, end);
    PartitionHeader header;
    std::string header_position;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string key(it->key());
      auto position_size = PartitionPositionSize(*table_, key);
      if (!position_size.ok() || *position_size >= key.size()) continue;
      const auto kind = static_cast<KeyKind>(key[*position_size]);
      if (kind == KeyKind::kPartitionHeader) {
        header = PartitionHeader();
        header_position = key.substr(0, *position_size);
        (void)DecodePartitionHeader(it->value(), &header);
        continue;
      }
      const bool same_partition = header_position == std::string_view(key).substr(0, *position_size);
      Apply(key, VectorOf(it->value(), same_partition ? &header : nullptr, key, *position_size, engine));
    }
    return it->status();
  }

  // Reads the row at `key` and its partition's header as stored now.
  void Refresh(StorageEngine* engine, const std::string& key, size_t position_size) {
    std::string value;
    if (!engine->Get(key, &value).ok()) {
      Apply(key, std::nullopt);
      return;
    }
    std::string header_value;
    PartitionHeader header;
    const bool has_header =
        engine->Get(key.substr(0, position_size) + static_cast<char>(KeyKind::kPartitionHeader), &header_value).ok() &&
        DecodePartitionHeader(header_value, &header).ok();
    Apply(key, VectorOf(value, has_header ? &header : nullptr, key, position_size, engine));
  }

  // The live vector of a stored row (the header's deletions applied).
  std::optional<std::vector<float>> VectorOf(std::string_view value, const PartitionHeader* header, std::string_view key,
                                             size_t position_size, StorageEngine* engine) const {
    RowFragment row;
    if (!DecodeRowFragment(value, &row).ok()) return std::nullopt;
    if (header) {
      const bool is_static = static_cast<KeyKind>(key[position_size]) == KeyKind::kStaticRow;
      (void)ApplyDeletion(header->DeletionFor(key.substr(position_size + 1), is_static), &row);
    }
    const auto now = static_cast<uint32_t>(engine->NowMicros() / 1'000'000);
    for (const Cell& c : row.cells) {
      if (c.column_id != def_.column_id || c.HasPath()) continue;
      if (!c.IsLive(now)) return std::nullopt;
      auto v = DecodeFloatVector(c.value, dimension_);
      if (!v.ok()) return std::nullopt;
      return Prepared(def_.similarity, std::move(v).value());
    }
    return std::nullopt;
  }

  // Puts `key`'s entry in line with its vector (nullopt: none).
  void Apply(const std::string& key, const std::optional<std::vector<float>>& vector) {
    auto it = entries_.find(key);
    if (!vector) {
      if (it != entries_.end()) Remove(it->second);
      return;
    }
    try {
      if (it == entries_.end()) {
        if (graph_->cur_element_count == graph_->max_elements_) graph_->resizeIndex(graph_->max_elements_ * 2);
        it = entries_.emplace(key, Entry{keys_.size(), false}).first;
        keys_.push_back(key);
      }
      graph_->addPoint(vector->data(), it->second.label);  // an existing label: updated (and undeleted)
      if (!it->second.live) ++live_;
      it->second.live = true;
    } catch (const std::exception&) {
      // Out of memory for the graph: the row stays unindexed (a search may
      // miss it); its data is untouched.
    }
  }

  void Remove(Entry& entry) {
    if (!entry.live) return;
    graph_->markDelete(entry.label);
    entry.live = false;
    --live_;
  }

  std::shared_mutex mu_;
  std::shared_ptr<const TableSchema> table_;
  const IndexDef def_;
  const uint32_t dimension_;
  std::unique_ptr<hnswlib::SpaceInterface<float>> space_;
  std::unique_ptr<hnswlib::HierarchicalNSW<float>> graph_;  // null until built
  std::map<std::string, Entry> entries_;                     // by storage key (deleted ones kept: labels are reused)
  std::vector<std::string> keys_;                            // by label
  size_t live_ = 0;
};

VectorIndexes::VectorIndexes(StorageEngine* engine) : engine_(engine) {}
VectorIndexes::~VectorIndexes() = default;

void VectorIndexes::Sync(const std::vector<std::shared_ptr<const TableSchema>>& tables) {
  // Kept indexes get their table's schema after mu_ is released: one may be
  // building (holding its own lock for as long as that takes), and writes to
  // every table take mu_.
  std::vector<std::pair<std::shared_ptr<VectorIndex>, std::shared_ptr<const TableSchema>>> kept;
  {
    std::unique_lock lock(mu_);
    std::unordered_map<uint32_t, std::vector<std::shared_ptr<VectorIndex>>> next;
    for (const auto& t : tables) {
      for (const IndexDef& def : t->indexes) {
        if (!def.is_vector() || !t->FindColumnById(def.column_id)) continue;
        std::shared_ptr<VectorIndex> index;
        if (auto old = by_table_.find(t->id); old != by_table_.end()) {
          for (const auto& i : old->second) {
            if (i->name() == def.name) index = i;
          }
        }
        if (index) kept.emplace_back(index, t);
        else index = std::make_shared<VectorIndex>(t, def);
        next[t->id].push_back(std::move(index));
      }
    }
    by_table_ = std::move(next);
    any_.store(!by_table_.empty(), std::memory_order_release);
  }
  for (auto& [index, table] : kept) index->set_table(std::move(table));
}

void VectorIndexes::OnWrite(const WriteSet& writes) {
  if (!any_.load(std::memory_order_acquire)) return;
  std::vector<std::shared_ptr<VectorIndex>> touched;
  {
    std::shared_lock lock(mu_);
    for (const auto& op : writes.ops()) {
      if (op.key.size() < 4) continue;
      auto found = by_table_.find(GetBigEndian32(op.key.data()));
      if (found == by_table_.end()) continue;
      for (const auto& i : found->second) {
        if (std::find(touched.begin(), touched.end(), i) == touched.end()) touched.push_back(i);
      }
    }
  }
  for (const auto& index : touched) index->OnWrite(engine_, writes);
}

std::shared_ptr<VectorIndex> VectorIndexes::Find(uint32_t table_id, const std::string& index) {
  std::shared_lock lock(mu_);
  auto found = by_table_.find(table_id);
  if (found == by_table_.end()) return nullptr;
  for (const auto& i : found->second) {
    if (i->name() == index) return i;
  }
  return nullptr;
}

Result<std::vector<VectorCandidate>> VectorIndexes::Search(uint32_t table_id, const std::string& index,
                                                           const std::vector<float>& query, size_t k,
                                                           const std::vector<std::pair<std::string, std::string>>& ranges,
                                                           size_t ef) {
  auto found = Find(table_id, index);
  if (!found) return Status::NotFound("no vector index " + index + " here");
  return found->Search(engine_, query, k, ranges, ef);
}

Status VectorIndexes::Build(uint32_t table_id, const std::string& index) {
  auto found = Find(table_id, index);
  if (!found) return Status::NotFound("no vector index " + index + " here");
  return found->EnsureBuilt(engine_);
}

size_t VectorIndexes::Size(uint32_t table_id, const std::string& index) {
  auto found = Find(table_id, index);
  return found ? found->Size() : 0;
}

}  // namespace tessera
