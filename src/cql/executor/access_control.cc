#include "cql/executor/access_control.h"

#include <type_traits>
#include <variant>

#include "cql/executor/system_keyspaces.h"

namespace tessera::cql {
namespace {

using auth::Permission;
using auth::Resource;

Status NotModifiable(const std::string& ks) { return Status::Unauthorized(ks + " keyspace is not user-modifiable."); }

class Checker {
 public:
  Checker(auth::AuthService& auth, const Catalog& catalog, const std::string& role, const std::string& keyspace)
      : auth_(auth), catalog_(catalog), role_(role), keyspace_(keyspace) {}

  Status Table(const QualifiedName& name, Permission p) {
    const std::string& ks = name.keyspace.empty() ? keyspace_ : name.keyspace;
    if (ks.empty()) return Status::OK();  // the executor answers "No keyspace has been specified"
    if (IsSystemKeyspace(ks)) {
      if (p != Permission::kSelect) return NotModifiable(ks);
      if (ks != "system_auth") return Status::OK();  // system tables are readable by every role
    }
    return auth_.Authorize(role_, p, Resource::Table(ks, name.name));
  }

  Status Keyspace(const std::string& ks, Permission p) {
    if (IsSystemKeyspace(ks)) return NotModifiable(ks);
    return auth_.Authorize(role_, p, Resource::Keyspace(ks));
  }

  Status operator()(const SelectStatement& s) {
    // A view's rows are its base's: reading them takes SELECT on the base table.
    const std::string& ks = s.table.keyspace.empty() ? keyspace_ : s.table.keyspace;
    if (!ks.empty() && !IsSystemKeyspace(ks)) {
      if (auto t = catalog_.GetTable(ks, s.table.name); t.ok() && (*t)->view) {
        return Table(QualifiedName{ks, (*t)->view->base_table}, Permission::kSelect);
      }
    }
    return Table(s.table, Permission::kSelect);
  }
  Status operator()(const InsertStatement& s) { return Table(s.table, Permission::kModify); }
  Status operator()(const UpdateStatement& s) { return Table(s.table, Permission::kModify); }
  Status operator()(const DeleteStatement& s) { return Table(s.table, Permission::kModify); }
  Status operator()(const TruncateStatement& s) { return Table(s.table, Permission::kModify); }
  Status operator()(const BatchStatement& b) {
    for (const auto& s : b.statements) {
      TESSERA_RETURN_IF_ERROR(std::visit([this](const auto& x) { return (*this)(x); }, s));
    }
    return Status::OK();
  }
  Status operator()(const CreateKeyspaceStatement& s) {
    if (IsSystemKeyspace(s.name)) return NotModifiable(s.name);
    return auth_.Authorize(role_, Permission::kCreate, Resource::AllKeyspaces());
  }
  Status operator()(const AlterKeyspaceStatement& s) { return Keyspace(s.name, Permission::kAlter); }
  Status operator()(const CreateTableStatement& s) {
    const std::string& ks = s.table.keyspace.empty() ? keyspace_ : s.table.keyspace;
    if (ks.empty()) return Status::OK();
    return Keyspace(ks, Permission::kCreate);
  }
  Status operator()(const AlterTableStatement& s) { return Table(s.table, Permission::kAlter); }
  // A sequence belongs to its keyspace (no resource of its own): CREATE / DROP on the keyspace.
  Status operator()(const CreateSequenceStatement& s) {
    const std::string& ks = s.name.keyspace.empty() ? keyspace_ : s.name.keyspace;
    if (ks.empty()) return Status::OK();
    return Keyspace(ks, Permission::kCreate);
  }
  // Types belong to their keyspace too (as in Cassandra): CREATE / ALTER / DROP on it.
  Status operator()(const CreateTypeStatement& s) { return InKeyspace(s.name, Permission::kCreate); }
  Status operator()(const AlterTypeStatement& s) { return InKeyspace(s.name, Permission::kAlter); }
  // Functions and aggregates: CREATE / DROP on their keyspace (Cassandra's
  // ALL FUNCTIONS IN KEYSPACE resource is held by whoever holds the keyspace).
  Status operator()(const FunctionStatement& s) { return InKeyspace(s.name, s.drop ? Permission::kDrop : Permission::kCreate); }
  // Indexes: ALTER on their table (on the keyspace for DROP INDEX, which names no table).
  Status operator()(const CreateIndexStatement& s) { return Table(s.table, Permission::kAlter); }
  // Views: ALTER on their base table (Cassandra's CreateViewStatement.authorize); DROP on the keyspace.
  Status operator()(const CreateViewStatement& s) {
    QualifiedName base = s.base;
    if (base.keyspace.empty()) base.keyspace = s.view.keyspace;
    return Table(base, Permission::kAlter);
  }
  Status operator()(const DropStatement& s) {
    if (s.target == DropStatement::Target::kIndex || s.target == DropStatement::Target::kView) {
      return InKeyspace(s.name, Permission::kAlter);
    }
    if (s.target == DropStatement::Target::kKeyspace) return Keyspace(s.name.name, Permission::kDrop);
    if (s.target == DropStatement::Target::kType) return InKeyspace(s.name, Permission::kDrop);
    if (s.target == DropStatement::Target::kSequence) {
      const std::string& ks = s.name.keyspace.empty() ? keyspace_ : s.name.keyspace;
      return ks.empty() ? Status::OK() : Keyspace(ks, Permission::kDrop);
    }
    return Table(s.name, Permission::kDrop);
  }
  Status InKeyspace(const QualifiedName& name, Permission p) {
    const std::string& ks = name.keyspace.empty() ? keyspace_ : name.keyspace;
    return ks.empty() ? Status::OK() : Keyspace(ks, p);
  }
  template <typename T>
  Status operator()(const T&) {  // USE; role and permission statements (AuthService checks them)
    return Status::OK();
  }

 private:
  auth::AuthService& auth_;
  const Catalog& catalog_;
  const std::string& role_;
  const std::string& keyspace_;
};

}  // namespace

Status CheckAccess(auth::AuthService& auth, const Catalog& catalog, const std::string& role,
                   const RawStatement& statement, const std::string& keyspace) {
  Checker checker(auth, catalog, role, keyspace);
  return std::visit(checker, statement);
}

}  // namespace tessera::cql
