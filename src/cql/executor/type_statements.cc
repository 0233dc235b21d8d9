#include "cql/executor/type_statements.h"

#include <algorithm>
#include <set>

namespace tessera::cql {
namespace {

Status CheckKeyspace(Database& db, const std::string& ks) {
  if (ks.empty()) return NoKeyspace();
  if (!db.catalog().GetKeyspace(ks).ok()) return Status::InvalidArgument("Keyspace " + ks + " doesn't exist");
  return Status::OK();
}

bool HasCounter(const CqlType& t) {
  if (t.kind() == TypeKind::kCounter) return true;
  return std::any_of(t.params().begin(), t.params().end(), HasCounter);
}

Status CheckDuplicateFields(const std::vector<std::string>& names, const std::string& type_name) {
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (!seen.insert(n).second) return Status::InvalidArgument("Duplicate field name " + n + " in type " + type_name);
  }
  return Status::OK();
}

}  // namespace

Result<CqlType> ParseFieldType(const std::string& text, const std::string& keyspace, const UserTypeLookup& user_types) {
  // Written "list<int>" or "address", a field holds the frozen form, so parse it as frozen<...>.
  auto type = CqlType::Parse("frozen<" + text + ">", &user_types);
  if (!type.ok()) type = ParseColumnType(text, keyspace, &user_types);  // a native type: frozen<> does not apply
  if (!type.ok()) return type.status();
  if (HasCounter(*type)) return Status::InvalidArgument("A user type cannot contain counters");
  return type;
}

Result<SchemaOutcome> ExecuteCreateType(Database& db, const CreateTypeStatement& s, const std::string& current) {
  const std::string ks = KeyspaceOf(s.name, current);
  TESSERA_RETURN_IF_ERROR(CheckKeyspace(db, ks));
  if (db.catalog().GetType(ks, s.name.name)) {
    if (s.if_not_exists) return SchemaOutcome{};
    return Status::AlreadyExists("A user type with name '" + s.name.name + "' already exists");
  }
  std::vector<std::string> names;
  std::vector<CqlType> types;
  const UserTypeLookup lookup = db.catalog().TypeLookup(ks);
  for (const auto& [name, text] : s.fields) {
    TESSERA_ASSIGN_OR_RETURN(CqlType t, ParseFieldType(text, ks, lookup));
    names.push_back(name);
    types.push_back(std::move(t));
  }
  TESSERA_RETURN_IF_ERROR(CheckDuplicateFields(names, s.name.name));
  Status st = db.CreateType(CqlType::UserType(ks, s.name.name, std::move(names), std::move(types), true));
  if (st.IsAlreadyExists() && s.if_not_exists) return SchemaOutcome{};
  TESSERA_RETURN_IF_ERROR(st);
  return SchemaOutcome{SchemaChange{"CREATED", "TYPE", ks, s.name.name}};
}

Result<SchemaOutcome> ExecuteAlterType(Database& db, const AlterTypeStatement& s, const std::string& current) {
  const std::string ks = KeyspaceOf(s.name, current);
  TESSERA_RETURN_IF_ERROR(CheckKeyspace(db, ks));
  std::optional<CqlType> existing = db.catalog().GetType(ks, s.name.name);
  if (!existing) return Status::InvalidArgument("Type " + ks + "." + s.name.name + " doesn't exist");
  std::vector<std::string> names = existing->field_names();
  std::vector<CqlType> types = existing->params();
  switch (s.op) {
    case AlterTypeStatement::Op::kAlterField:
      return Status::InvalidArgument("Altering field types is no longer supported");
    case AlterTypeStatement::Op::kAdd: {
      if (std::find(names.begin(), names.end(), s.added.first) != names.end()) {
        return Status::InvalidArgument("Cannot add new field " + s.added.first + " to type " + ks + "." + s.name.name +
                                       ": a field with name " + s.added.first + " already exists");
      }
      TESSERA_ASSIGN_OR_RETURN(CqlType t, ParseFieldType(s.added.second, ks, db.catalog().TypeLookup(ks)));
      if (t.References(ks, s.name.name)) {
        return Status::InvalidArgument("Cannot add new field " + s.added.first + " of type " + t.ToCql() + " to user type " +
                                       ks + "." + s.name.name + " as it would create a circular reference");
      }
      names.push_back(s.added.first);
      types.push_back(std::move(t));
      break;
    }
    case AlterTypeStatement::Op::kRename:
      for (const auto& [from, to] : s.renamed) {
        auto it = std::find(names.begin(), names.end(), from);
        if (it == names.end()) return Status::InvalidArgument("Unkown field " + from + " in user type " + ks + "." + s.name.name);
        *it = to;
      }
      TESSERA_RETURN_IF_ERROR(CheckDuplicateFields(names, ks + "." + s.name.name));
      break;
  }
  TESSERA_RETURN_IF_ERROR(
      db.AlterType(CqlType::UserType(ks, s.name.name, std::move(names), std::move(types), true)));
  return SchemaOutcome{SchemaChange{"UPDATED", "TYPE", ks, s.name.name}};
}

Result<SchemaOutcome> ExecuteDropType(Database& db, const DropStatement& s, const std::string& current) {
  const std::string ks = KeyspaceOf(s.name, current);
  if (ks.empty()) return NoKeyspace();
  Status st = db.DropType(ks, s.name.name);
  if (st.IsNotFound()) {
    if (s.if_exists) return SchemaOutcome{};
    return Status::InvalidArgument("Type '" + ks + "." + s.name.name + "' doesn't exist");
  }
  TESSERA_RETURN_IF_ERROR(st);
  return SchemaOutcome{SchemaChange{"DROPPED", "TYPE", ks, s.name.name}};
}

}  // namespace tessera::cql
