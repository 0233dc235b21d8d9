// User-defined types in the catalog (CREATE / ALTER / DROP TYPE). A type is
// kept as its full definition (CqlType); tables hold copies of it in their
// column types, which ALTER TYPE rewrites, so reading a value never needs the
// catalog.
#include <algorithm>

#include "db/catalog.h"
#include "types/schema_json.h"

namespace tessera {
namespace {

std::string TypeKey(const std::string& keyspace, const std::string& name) { return "type/" + keyspace + "/" + name; }

}  // namespace

std::optional<CqlType> Catalog::FindTypeLocked(const std::string& keyspace, const std::string& name) const {
  std::string ks = keyspace, type = name;
  const size_t dot = name.find('.');
  if (dot != std::string::npos) {
    ks = name.substr(0, dot);
    type = name.substr(dot + 1);
  }
  auto it = types_.find({ks, type});
  if (it == types_.end()) return std::nullopt;
  return it->second;
}

Status Catalog::LoadTypes() {
  TESSERA_ASSIGN_OR_RETURN(auto docs, engine_->MetaScan("type/"));
  // A type may hold another: resolve in passes until every one is loaded.
  std::vector<std::pair<std::string, std::string>> pending(docs.begin(), docs.end());
  while (!pending.empty()) {
    std::vector<std::pair<std::string, std::string>> unresolved;
    for (const auto& [key, text] : pending) {
      const size_t slash = key.find('/', 5);
      const std::string ks = key.substr(5, slash - 5);
      UserTypeLookup lookup = [this, &ks](const std::string& name) { return FindTypeLocked(ks, name); };
      auto type = UserTypeFromJson(text, &lookup);
      if (type.ok()) {
        types_.insert_or_assign({type->udt_keyspace(), type->udt_name()}, *type);
      } else if (type.status().IsNotFound()) {
        unresolved.emplace_back(key, text);
      } else {
        return type.status();
      }
    }
    if (unresolved.size() == pending.size()) return Status::Corruption("user type " + pending[0].first + ": unresolved field types");
    pending = std::move(unresolved);
  }
  return Status::OK();
}

Status Catalog::CreateType(const CqlType& type) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!keyspaces_.count(type.udt_keyspace())) return Status::NotFound("keyspace " + type.udt_keyspace() + " does not exist");
  const auto key = std::make_pair(type.udt_keyspace(), type.udt_name());
  if (types_.count(key)) return Status::AlreadyExists("A user type with name '" + type.udt_name() + "' already exists");
  const CqlType frozen = type.WithFrozen(true);
  TESSERA_RETURN_IF_ERROR(engine_->MetaPut(TypeKey(key.first, key.second), UserTypeToJson(frozen)));
  types_.emplace(key, frozen);
  ++version_;
  return Status::OK();
}

Status Catalog::AlterType(const CqlType& type) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto key = std::make_pair(type.udt_keyspace(), type.udt_name());
  if (!types_.count(key)) return Status::NotFound("Type " + key.first + "." + key.second + " doesn't exist");
  const CqlType updated = type.WithFrozen(true);
  TESSERA_RETURN_IF_ERROR(engine_->MetaPut(TypeKey(key.first, key.second), UserTypeToJson(updated)));
  types_.insert_or_assign(key, updated);
  // Types and tables of the keyspace that hold it take the new definition.
  for (auto& [k, t] : types_) {
    if (k.first != key.first || k == key || !t.References(key.first, key.second)) continue;
    t = t.ReplaceUserType(updated);
    TESSERA_RETURN_IF_ERROR(engine_->MetaPut(TypeKey(k.first, k.second), UserTypeToJson(t)));
  }
  for (auto& [k, table] : tables_) {
    if (k.first != key.first) continue;
    const bool uses = std::any_of(table->columns.begin(), table->columns.end(),
                                  [&](const ColumnDef& c) { return c.type.References(key.first, key.second); });
    if (!uses) continue;
    TableSchema altered = *table;
    for (auto& c : altered.columns) c.type = c.type.ReplaceUserType(updated);
    TESSERA_RETURN_IF_ERROR(PersistTable(altered));
    table = std::make_shared<const TableSchema>(std::move(altered));
    engine_->registry().Put(table);
  }
  ++version_;
  return Status::OK();
}

Status Catalog::DropType(const std::string& keyspace, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto key = std::make_pair(keyspace, name);
  if (!types_.count(key)) return Status::NotFound("Type '" + keyspace + "." + name + "' doesn't exist");
  for (const auto& [k, table] : tables_) {
    for (const auto& c : table->columns) {
      if (c.type.References(keyspace, name)) {
        return Status::InvalidArgument("Cannot drop user type " + keyspace + "." + name + " as it is still used by table " +
                                       k.first + "." + k.second);
      }
    }
  }
  for (const auto& [k, t] : types_) {
    if (k != key && t.References(keyspace, name)) {
      return Status::InvalidArgument("Cannot drop user type " + keyspace + "." + name + " as it is still used by user type " +
                                     k.second);
    }
  }
  TESSERA_RETURN_IF_ERROR(engine_->MetaDelete(TypeKey(keyspace, name)));
  types_.erase(key);
  ++version_;
  return Status::OK();
}

std::optional<CqlType> Catalog::GetType(const std::string& keyspace, const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = types_.find({keyspace, name});
  if (it == types_.end()) return std::nullopt;
  return it->second;
}

std::vector<CqlType> Catalog::Types(const std::string& keyspace) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<CqlType> out;
  for (const auto& [k, t] : types_) {
    if (k.first == keyspace) out.push_back(t);
  }
  return out;
}

UserTypeLookup Catalog::TypeLookup(const std::string& keyspace) const {
  return [this, keyspace](const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return FindTypeLocked(keyspace, name);
  };
}

}  // namespace tessera
