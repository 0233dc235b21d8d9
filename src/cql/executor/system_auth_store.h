// The system_auth keyspace, laid out as Cassandra lays it out, and the
// AuthStore over it (auth/auth_store.h):
//   roles            (role text PRIMARY KEY, can_login boolean, is_superuser boolean,
//                     member_of set<text>, salted_hash text, options map<text, text>)
//   role_members     (role text, member text, PRIMARY KEY (role, member))
//   role_permissions (role text, resource text, permissions set<text>, PRIMARY KEY (role, resource))
// `options` is Tessera's (Cassandra's role manager keeps no OPTIONS).
// Table and column names, resource names and permission names are FROZEN
// (stored). The tables are ordinary tables of the node's Database: they
// survive restarts, and clients SELECT them as in Cassandra, given the
// permission; clients cannot change them except through role statements.
//
// Thread safety: thread-safe (every call is one or a few internal statements).
#pragma once

#include "auth/auth_store.h"
#include "coordinator/coordinator.h"
#include "db/database.h"

namespace tessera::cql {

class SystemAuthStore : public auth::AuthStore {
 public:
  // REQUIRES: db outlives the store.
  // REQUIRES: coordinator outlives the store.
  explicit SystemAuthStore(Coordinator* coordinator) : db_(coordinator) {}
  // Creates the keyspace and tables when missing. Errors: storage errors.
  Status CreateSchema();

  Result<std::optional<auth::RoleRecord>> GetRole(const std::string& name) override;
  Result<std::vector<auth::RoleRecord>> ListRoles() override;
  Status PutRole(const auth::RoleRecord& role) override;
  Status DeleteRole(const std::string& name) override;
  Result<std::vector<auth::PermissionGrant>> GetPermissions(const std::string& role) override;
  Result<std::vector<auth::PermissionGrant>> ListPermissions() override;
  Status PutPermissions(const auth::PermissionGrant& grant) override;

 private:
  Coordinator* db_;  // the statements run through it (ExecuteInternal)
};

}  // namespace tessera::cql
