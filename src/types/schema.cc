#include "types/schema.h"

#include "common/bytes.h"

#include <algorithm>
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
  if (HasStatic() && Clustering().empty()) return err("static columns require clustering columns");
  uint32_t n = options.initial_tablets;
  if (n == 0 || n > 65536 || (n & (n - 1)) != 0) return err("initial_tablets must be a power of two in [1, 65536]");
  if (options.default_time_to_live < 0) return err("default_time_to_live must not be negative");
  if (options.gc_grace_seconds < 0) return err("gc_grace_seconds must not be negative");
  return Status::OK();
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
