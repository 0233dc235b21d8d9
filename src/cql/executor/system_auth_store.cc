#include "cql/executor/system_auth_store.h"

#include <algorithm>

#include "cql/executor/internal_query.h"

namespace tessera::cql {
namespace {

constexpr const char* kRoleColumns = "role, can_login, is_superuser, member_of, salted_hash, options";

auth::RoleRecord RoleOf(const std::vector<std::optional<std::string>>& row) {
  auth::RoleRecord r;
  r.name = row[0].value_or("");
  r.can_login = BooleanOf(row[1]);
  r.is_superuser = BooleanOf(row[2]);
  r.member_of = TextSetOf(row[3]);
  r.salted_hash = row[4].value_or("");
  r.options = TextMapOf(row[5]);
  return r;
}

Result<std::vector<auth::PermissionGrant>> GrantsOf(const ResultSet& rs) {
  std::vector<auth::PermissionGrant> out;
  for (const auto& row : rs.rows) {
    auto resource = auth::Resource::FromName(row[1].value_or(""));
    if (!resource.ok()) continue;  // a resource kind this version does not know
    auth::PermissionGrant g{row[0].value_or(""), *resource, 0};
    for (const auto& name : TextSetOf(row[2])) {
      auto p = auth::ParsePermission(name);
      if (p.ok()) g.permissions |= auth::Bit(*p);
    }
    if (g.permissions) out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

Status SystemAuthStore::CreateSchema() {
  const char* statements[] = {
      "CREATE KEYSPACE IF NOT EXISTS system_auth WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}",
      "CREATE TABLE IF NOT EXISTS system_auth.roles (role text PRIMARY KEY, can_login boolean, is_superuser boolean, "
      "member_of set<text>, salted_hash text, options map<text, text>)",
      "CREATE TABLE IF NOT EXISTS system_auth.role_members (role text, member text, PRIMARY KEY (role, member))",
      "CREATE TABLE IF NOT EXISTS system_auth.role_permissions (role text, resource text, permissions set<text>, "
      "PRIMARY KEY (role, resource))",
  };
  for (const char* s : statements) TESSERA_RETURN_IF_ERROR(ExecuteInternal(*db_, s).status());
  return Status::OK();
}

Result<std::optional<auth::RoleRecord>> SystemAuthStore::GetRole(const std::string& name) {
  TESSERA_ASSIGN_OR_RETURN(auto rs, ExecuteInternal(*db_, std::string("SELECT ") + kRoleColumns +
                                                            " FROM system_auth.roles WHERE role = ?",
                                                    {TextValue(name)}));
  if (rs.rows.empty()) return std::optional<auth::RoleRecord>();
  return std::optional<auth::RoleRecord>(RoleOf(rs.rows[0]));
}

Result<std::vector<auth::RoleRecord>> SystemAuthStore::ListRoles() {
  TESSERA_ASSIGN_OR_RETURN(auto rs, ExecuteInternal(*db_, std::string("SELECT ") + kRoleColumns + " FROM system_auth.roles"));
  std::vector<auth::RoleRecord> out;
  for (const auto& row : rs.rows) out.push_back(RoleOf(row));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

Status SystemAuthStore::PutRole(const auth::RoleRecord& role) {
  TESSERA_ASSIGN_OR_RETURN(auto old, GetRole(role.name));
  WireValue hash = role.salted_hash.empty() ? WireValue{} : TextValue(role.salted_hash);
  TESSERA_RETURN_IF_ERROR(ExecuteInternal(*db_, std::string("INSERT INTO system_auth.roles (") + kRoleColumns +
                                                     ") VALUES (?, ?, ?, ?, ?, ?)",
                                          {TextValue(role.name), BooleanValue(role.can_login),
                                           BooleanValue(role.is_superuser), TextSetValue(role.member_of), hash,
                                           TextMapValue(role.options)})
                              .status());
  // role_members: (granted role, member) for every role this one was granted.
  const std::set<std::string> before = old ? old->member_of : std::set<std::string>{};
  for (const auto& granted : role.member_of) {
    if (before.count(granted)) continue;
    TESSERA_RETURN_IF_ERROR(ExecuteInternal(*db_, "INSERT INTO system_auth.role_members (role, member) VALUES (?, ?)",
                                            {TextValue(granted), TextValue(role.name)})
                                .status());
  }
  for (const auto& granted : before) {
    if (role.member_of.count(granted)) continue;
    TESSERA_RETURN_IF_ERROR(ExecuteInternal(*db_, "DELETE FROM system_auth.role_members WHERE role = ? AND member = ?",
                                            {TextValue(granted), TextValue(role.name)})
                                .status());
  }
  return Status::OK();
}

Status SystemAuthStore::DeleteRole(const std::string& name) {
  TESSERA_ASSIGN_OR_RETURN(auto old, GetRole(name));
  if (old) {
    for (const auto& granted : old->member_of) {
      TESSERA_RETURN_IF_ERROR(ExecuteInternal(*db_, "DELETE FROM system_auth.role_members WHERE role = ? AND member = ?",
                                              {TextValue(granted), TextValue(name)})
                                  .status());
    }
  }
  TESSERA_RETURN_IF_ERROR(
      ExecuteInternal(*db_, "DELETE FROM system_auth.role_members WHERE role = ?", {TextValue(name)}).status());
  return ExecuteInternal(*db_, "DELETE FROM system_auth.roles WHERE role = ?", {TextValue(name)}).status();
}

Result<std::vector<auth::PermissionGrant>> SystemAuthStore::GetPermissions(const std::string& role) {
  TESSERA_ASSIGN_OR_RETURN(auto rs, ExecuteInternal(*db_, "SELECT role, resource, permissions FROM "
                                                          "system_auth.role_permissions WHERE role = ?",
                                                    {TextValue(role)}));
  return GrantsOf(rs);
}

Result<std::vector<auth::PermissionGrant>> SystemAuthStore::ListPermissions() {
  TESSERA_ASSIGN_OR_RETURN(auto rs,
                           ExecuteInternal(*db_, "SELECT role, resource, permissions FROM system_auth.role_permissions"));
  return GrantsOf(rs);
}

Status SystemAuthStore::PutPermissions(const auth::PermissionGrant& grant) {
  if (grant.permissions == 0) {
    return ExecuteInternal(*db_, "DELETE FROM system_auth.role_permissions WHERE role = ? AND resource = ?",
                           {TextValue(grant.role), TextValue(grant.resource.Name())})
        .status();
  }
  auto names = auth::PermissionNames(grant.permissions);
  return ExecuteInternal(*db_, "INSERT INTO system_auth.role_permissions (role, resource, permissions) VALUES (?, ?, ?)",
                         {TextValue(grant.role), TextValue(grant.resource.Name()),
                          TextSetValue(std::set<std::string>(names.begin(), names.end()))})
      .status();
}

}  // namespace tessera::cql
