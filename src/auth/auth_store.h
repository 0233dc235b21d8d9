// AuthStore: where roles, memberships and permissions are kept — the seam
// between the auth logic (auth_service.h) and the tables that hold them
// (system_auth.roles, role_members and role_permissions, laid out as in
// Cassandra; the CQL executor implements this over those tables, tests over
// a map). Plain records in, plain records out.
//
// Thread safety: implementations must be thread-safe; AuthService serialises
// its own changes.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "auth/resource.h"
#include "common/status.h"

namespace tessera::auth {

// One row of system_auth.roles.
struct RoleRecord {
  std::string name;
  bool can_login = false;
  bool is_superuser = false;
  std::set<std::string> member_of;  // roles granted to this one
  std::string salted_hash;          // HashPassword's output; empty: no password
  std::map<std::string, std::string> options;  // OPTIONS = {...}
};

struct PermissionGrant {
  std::string role;
  Resource resource;
  PermissionSet permissions = 0;
};

class AuthStore {
 public:
  virtual ~AuthStore() = default;
  // nullopt when the role does not exist. Errors: storage errors.
  virtual Result<std::optional<RoleRecord>> GetRole(const std::string& name) = 0;
  // Every role, by name.
  virtual Result<std::vector<RoleRecord>> ListRoles() = 0;
  // Inserts or replaces the row (system_auth.roles) and keeps
  // system_auth.role_members in step with member_of.
  virtual Status PutRole(const RoleRecord& role) = 0;
  // Writes the role only when no role of that name exists; true when it
  // wrote. Stores shared by several nodes make this atomic (the default
  // superuser is created once per cluster); the default is a read, then a
  // write, enough where AuthService's own lock is the only writer.
  virtual Result<bool> PutRoleIfAbsent(const RoleRecord& role) {
    TESSERA_ASSIGN_OR_RETURN(auto existing, GetRole(role.name));
    if (existing) return false;
    TESSERA_RETURN_IF_ERROR(PutRole(role));
    return true;
  }
  // Removes the role's row and its role_members rows.
  virtual Status DeleteRole(const std::string& name) = 0;
  // The grants of one role (empty sets are never returned).
  virtual Result<std::vector<PermissionGrant>> GetPermissions(const std::string& role) = 0;
  // Every grant of every role.
  virtual Result<std::vector<PermissionGrant>> ListPermissions() = 0;
  // Sets the role's permissions on the resource; an empty set removes the row.
  virtual Status PutPermissions(const PermissionGrant& grant) = 0;
};

}  // namespace tessera::auth
