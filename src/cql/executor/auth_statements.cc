#include "cql/executor/auth_statements.h"

#include <variant>

#include "cql/executor/internal_query.h"

namespace tessera::cql {
namespace {

using auth::AuthService;

ColumnSpec Column(const std::string& table, const std::string& name, CqlType type) {
  return ColumnSpec{"system_auth", table, name, std::move(type)};
}

CqlType Text() { return CqlType::Scalar(TypeKind::kText); }
CqlType Boolean() { return CqlType::Scalar(TypeKind::kBoolean); }

auth::RoleChanges ChangesOf(const RoleOptions& o) {
  auth::RoleChanges c;
  c.password = o.password;
  c.login = o.login;
  c.superuser = o.superuser;
  if (o.options) c.options = std::map<std::string, std::string>(o.options->begin(), o.options->end());
  return c;
}

Result<auth::Resource> ResourceOf(const ResourceName& r, const std::string& keyspace) {
  switch (r.kind) {
    case ResourceName::Kind::kAllKeyspaces: return auth::Resource::AllKeyspaces();
    case ResourceName::Kind::kKeyspace: return auth::Resource::Keyspace(r.name.name);
    case ResourceName::Kind::kAllRoles: return auth::Resource::AllRoles();
    case ResourceName::Kind::kRole: return auth::Resource::Role(r.name.name);
    case ResourceName::Kind::kTable: {
      const std::string& ks = r.name.keyspace.empty() ? keyspace : r.name.keyspace;
      if (ks.empty()) return Status::InvalidArgument("No keyspace has been specified. USE a keyspace, or explicitly specify keyspace.tablename");
      return auth::Resource::Table(ks, r.name.name);
    }
  }
  return Status::InvalidArgument("unknown resource");
}

Result<auth::PermissionSet> PermissionsOf(const std::vector<std::string>& names, const auth::Resource* resource) {
  if (names.empty()) return resource ? resource->Applicable() : auth::kAllPermissions;  // ALL
  auth::PermissionSet set = 0;
  for (const auto& n : names) {
    TESSERA_ASSIGN_OR_RETURN(auto p, auth::ParsePermission(n));
    set |= auth::Bit(p);
  }
  return set;
}

Result<ResultSet> ListRoles(AuthService& auth, const std::string& role, const ListRolesStatement& s) {
  TESSERA_ASSIGN_OR_RETURN(auto roles, auth.ListRoles(role, s.of, s.recursive));
  ResultSet rs;
  if (s.users_form) {
    rs.columns = {Column("users", "name", Text()), Column("users", "super", Boolean()),
                  Column("users", "datacenters", Text())};
  } else {
    rs.columns = {Column("roles", "role", Text()), Column("roles", "super", Boolean()),
                  Column("roles", "login", Boolean()),
                  Column("roles", "options", CqlType::Map(Text(), Text(), false)),
                  Column("roles", "datacenters", Text())};
  }
  for (const auto& r : roles) {
    if (s.users_form && !r.can_login) continue;  // LIST USERS: the roles that can log in
    const bool super = auth.IsSuperuser(r.name);
    if (s.users_form) {
      rs.rows.push_back({r.name, BooleanValue(super).bytes, std::string("ALL")});
    } else {
      rs.rows.push_back({r.name, BooleanValue(super).bytes, BooleanValue(r.can_login).bytes,
                         TextMapValue(r.options).bytes, std::string("ALL")});
    }
  }
  return rs;
}

Result<ResultSet> ListPermissions(AuthService& auth, const std::string& role, const ListPermissionsStatement& s,
                                  const std::string& keyspace) {
  std::optional<auth::Resource> resource;
  if (s.resource) {
    TESSERA_ASSIGN_OR_RETURN(resource, ResourceOf(*s.resource, keyspace));
  }
  TESSERA_ASSIGN_OR_RETURN(auto permissions, PermissionsOf(s.permissions, nullptr));
  TESSERA_ASSIGN_OR_RETURN(auto rows, auth.ListPermissions(role, permissions, resource, s.of, s.recursive));
  ResultSet rs;
  rs.columns = {Column("permissions", "role", Text()), Column("permissions", "username", Text()),
                Column("permissions", "resource", Text()), Column("permissions", "permission", Text())};
  for (const auto& r : rows) {
    rs.rows.push_back({r.role, r.role, r.resource.Display(), std::string(auth::PermissionName(r.permission))});
  }
  return rs;
}

using Outcome = Result<std::optional<ResultSet>>;

Outcome Void(const Status& s) {
  if (!s.ok()) return s;
  return std::optional<ResultSet>();
}

Outcome Rows(Result<ResultSet> r) {
  if (!r.ok()) return r.status();
  return std::optional<ResultSet>(std::move(r).value());
}

}  // namespace

bool IsAuthStatement(const RawStatement& s) {
  return std::holds_alternative<CreateRoleStatement>(s) || std::holds_alternative<AlterRoleStatement>(s) ||
         std::holds_alternative<DropRoleStatement>(s) || std::holds_alternative<GrantRoleStatement>(s) ||
         std::holds_alternative<ListRolesStatement>(s) || std::holds_alternative<PermissionStatement>(s) ||
         std::holds_alternative<ListPermissionsStatement>(s);
}

Outcome ExecuteAuthStatement(AuthService* auth, const std::string& role, const RawStatement& s,
                             const std::string& keyspace) {
  if (!auth) {
    return Status::InvalidArgument(
        "Roles and permissions need an authenticator: start the server with --authenticator PasswordAuthenticator");
  }
  if (const auto* x = std::get_if<CreateRoleStatement>(&s)) {
    return Void(auth->CreateRole(role, x->role, ChangesOf(x->options), x->if_not_exists));
  }
  if (const auto* x = std::get_if<AlterRoleStatement>(&s)) return Void(auth->AlterRole(role, x->role, ChangesOf(x->options)));
  if (const auto* x = std::get_if<DropRoleStatement>(&s)) return Void(auth->DropRole(role, x->role, x->if_exists));
  if (const auto* x = std::get_if<GrantRoleStatement>(&s)) {
    return Void(x->revoke ? auth->RevokeRole(role, x->role, x->grantee) : auth->GrantRole(role, x->role, x->grantee));
  }
  if (const auto* x = std::get_if<ListRolesStatement>(&s)) return Rows(ListRoles(*auth, role, *x));
  if (const auto* x = std::get_if<ListPermissionsStatement>(&s)) return Rows(ListPermissions(*auth, role, *x, keyspace));
  const auto& p = std::get<PermissionStatement>(s);
  TESSERA_ASSIGN_OR_RETURN(auto resource, ResourceOf(p.resource, keyspace));
  TESSERA_ASSIGN_OR_RETURN(auto permissions, PermissionsOf(p.permissions, &resource));
  return Void(p.revoke ? auth->RevokePermissions(role, permissions, resource, p.role)
                       : auth->GrantPermissions(role, permissions, resource, p.role));
}

}  // namespace tessera::cql
