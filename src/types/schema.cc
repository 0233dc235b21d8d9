#include "types/schema.h"

#include "common/bytes.h"

#include <algorithm>
#include <cctype>
#include <cctype>
#include <set>

namespace tessera {

std::vector<const ColumnDef*> TableSchema::OfKind(ColumnKind kind) const {
  std::vector<const ColumnDef*> out;
  for (const auto& c : columns) {
    if (c.kind == kind) out.push_back(&c);
  }
  return out;
}

const ColumnDef* TableSchema::FindColumn(std::string_view n) const {
  for (const auto& c : columns) {
    if (c.name == n) return &c;
  }
  return nullptr;
}

const ColumnDef* TableSchema::FindColumnById(uint32_t cid) const {
  for (const auto& c : columns) {
    if (c.id == cid) return &c;
  }
  return nullptr;
}

const IndexDef* TableSchema::FindIndex(std::string_view index_name) const {
  for (const auto& i : indexes) {
    if (i.name == index_name) return &i;
  }
  return nullptr;
}

const char* SimilarityName(IndexDef::Similarity similarity) {
  switch (similarity) {
    case IndexDef::Similarity::kEuclidean: return "euclidean";
    case IndexDef::Similarity::kDotProduct: return "dot_product";
    case IndexDef::Similarity::kCosine: break;
  }
  return "cosine";
}

std::optional<IndexDef::Similarity> ParseSimilarity(std::string_view name) {
  std::string lower;
  for (char c : name) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  for (auto s : {IndexDef::Similarity::kCosine, IndexDef::Similarity::kEuclidean, IndexDef::Similarity::kDotProduct}) {
    if (lower == SimilarityName(s)) return s;
  }
  return std::nullopt;
}

std::string IndexTargetText(const IndexDef& index, const std::string& column_name, bool collection) {
  const std::string column = QuoteIdentifier(column_name);
  switch (index.target) {
    case IndexDef::Target::kKeys: return "keys(" + column + ")";
    case IndexDef::Target::kEntries: return "entries(" + column + ")";
    case IndexDef::Target::kFull: return "full(" + column + ")";
    case IndexDef::Target::kValues: return collection ? "values(" + column + ")" : column;
  }
  return column;
}

bool TableSchema::HasCounters() const {
  return std::any_of(columns.begin(), columns.end(), [](const ColumnDef& c) { return c.type.kind() == TypeKind::kCounter; });
}

uint32_t TableSchema::NextColumnId() const {
  uint32_t next = 0;
  for (const auto& c : columns) next = std::max(next, c.id + 1);
  return next;
}

Status TableSchema::Validate() const {
  auto err = [&](const std::string& what) {
    return Status::InvalidArgument("table " + keyspace + "." + name + ": " + what);
  };
  if (name.empty() || keyspace.empty()) return Status::InvalidArgument("table and keyspace names must not be empty");
  // Names and options are stored as JSON text (FROZEN ON DISK), which is UTF-8.
  bool utf8 = IsValidUtf8(keyspace) && IsValidUtf8(name) && IsValidUtf8(options.comment);
  for (const auto& [k, v] : options.extra) utf8 = utf8 && IsValidUtf8(k) && IsValidUtf8(v);
  for (const auto& c : columns) utf8 = utf8 && IsValidUtf8(c.name);
  if (!utf8) return Status::InvalidArgument("names and options must be valid UTF-8");
  if (PartitionKey().empty()) return err("a partition key is required");
  std::set<std::string> names;
  std::set<uint32_t> ids;
  bool has_counter = false, has_non_counter = false;
  for (const auto& c : columns) {
    if (!names.insert(c.name).second) return err("duplicate column '" + c.name + "'");
    if (!ids.insert(c.id).second) return err("duplicate column id for '" + c.name + "'");
    bool key = c.kind == ColumnKind::kPartitionKey || c.kind == ColumnKind::kClustering;
    if (key && !c.type.IsKeyable()) {
      return err("column '" + c.name + "' of type " + c.type.ToCql() + " cannot be part of the primary key");
    }
    if (!key) (c.type.kind() == TypeKind::kCounter ? has_counter : has_non_counter) = true;
  }
  if (has_counter && has_non_counter) return err("counter and non-counter columns cannot be mixed");
  if (has_counter && options.default_time_to_live > 0) {
    return Status::InvalidArgument("Cannot set default_time_to_live on a table with counters");
  }
  if (HasStatic() && Clustering().empty()) return err("static columns require clustering columns");
  uint32_t n = options.initial_tablets;
  if (n == 0 || n > 65536 || (n & (n - 1)) != 0) return err("initial_tablets must be a power of two in [1, 65536]");
  if (options.default_time_to_live < 0) return err("default_time_to_live must not be negative");
  if (options.gc_grace_seconds < 0) return err("gc_grace_seconds must not be negative");
  if (buckets.enabled()) {
    if (distribution != Distribution::kRange) {
      return err("buckets apply to tables WITH distribution = 'range' (a hash table already spreads its partitions)");
    }
    if (!buckets.versions.front().start.empty()) return err("the first bucket version must start at the first key");
    for (size_t i = 0; i < buckets.versions.size(); ++i) {
      uint32_t c = buckets.versions[i].count;
      if (c < 1 || c > BucketLayout::kMaxBuckets) {
        return err("buckets must be between 1 and " + std::to_string(BucketLayout::kMaxBuckets));
      }
      if (i > 0 && !(buckets.versions[i - 1].start < buckets.versions[i].start)) {
        return err("bucket versions must have ascending starts");
      }
    }
  } else if (buckets.automatic) {
    return err("buckets = 'auto' without a bucket version");
  }
  return ValidatePartitionBuckets();
}

Status TableSchema::ValidatePartitionBuckets() const {
  auto err = [&](const std::string& what) {
    return Status::InvalidArgument("table " + keyspace + "." + name + ": " + what);
  };
  const PartitionBucketLayout& pb = partition_buckets;
  if (!pb.enabled()) {
    if (pb.automatic || !pb.partitions.empty()) return err("partition_buckets without a count");
    return Status::OK();
  }
  if (Clustering().empty()) {
    return err("partition_buckets spread the rows of a partition by clustering key; this table has no clustering columns");
  }
  if (buckets.enabled()) return err("buckets and partition_buckets cannot be combined on one table");
  auto check = [&](const std::vector<uint32_t>& counts) -> Status {
    if (counts.empty() || counts.size() > PartitionBucketLayout::kMaxCounts) {
      return err("a partition may use between 1 and " + std::to_string(PartitionBucketLayout::kMaxCounts) +
                 " partition_buckets counts");
    }
    for (uint32_t c : counts) {
      if (c < 1 || c > PartitionBucketLayout::kMaxCount) {
        return err("partition_buckets must be between 1 and " + std::to_string(PartitionBucketLayout::kMaxCount));
      }
    }
    return Status::OK();
  };
  TESSERA_RETURN_IF_ERROR(check(pb.counts));
  if (pb.partitions.size() > PartitionBucketLayout::kMaxSplitPartitions) {
    return err("at most " + std::to_string(PartitionBucketLayout::kMaxSplitPartitions) + " partitions raised");
  }
  for (size_t i = 0; i < pb.partitions.size(); ++i) {
    TESSERA_RETURN_IF_ERROR(check(pb.partitions[i].counts));
    if (i > 0 && !(pb.partitions[i - 1].partition_key < pb.partitions[i].partition_key)) {
      return err("raised partitions must be sorted and unique");
    }
  }
  return Status::OK();
}

const std::vector<uint32_t>& PartitionBucketLayout::CountsFor(std::string_view encoded_partition_key) const {
  auto it = std::lower_bound(partitions.begin(), partitions.end(), encoded_partition_key,
                             [](const SplitPartition& p, std::string_view k) { return p.partition_key < k; });
  if (it != partitions.end() && it->partition_key == encoded_partition_key) return it->counts;
  return counts;
}

uint32_t PartitionBucketLayout::SpanFor(std::string_view encoded_partition_key) const {
  const auto& c = CountsFor(encoded_partition_key);
  return c.empty() ? 1 : *std::max_element(c.begin(), c.end());
}

size_t BucketLayout::VersionIndexFor(std::string_view encoded_partition_key) const {
  size_t i = versions.size() - 1;
  while (i > 0 && encoded_partition_key < std::string_view(versions[i].start)) --i;
  return i;
}

uint32_t BucketLayout::max_count() const {
  uint32_t m = 0;
  for (const auto& v : versions) m = std::max(m, v.count);
  return m;
}

const char* ToString(Distribution d) { return d == Distribution::kHash ? "hash" : "range"; }

Result<Distribution> ParseDistribution(std::string_view name) {
  if (name == "hash") return Distribution::kHash;
  if (name == "range") return Distribution::kRange;
  return Status::InvalidArgument("unknown distribution '" + std::string(name) + "' (expected hash or range)");
}

std::string QuoteIdentifier(const std::string& name) {
  bool plain = !name.empty() && std::islower(static_cast<unsigned char>(name[0]));
  for (char c : name) {
    plain = plain && (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_');
  }
  if (plain) return name;
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace tessera
