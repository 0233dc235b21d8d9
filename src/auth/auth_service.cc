#include "auth/auth_service.h"

#include <algorithm>
#include <chrono>

#include "auth/password_hash.h"
#include "common/bytes.h"

namespace tessera::auth {
namespace {

Status NoPermission(const std::string& role, Permission p, const Resource& r) {
  return Status::Unauthorized("User " + role + " has no " + PermissionName(p) + " permission on " + r.Display() +
                              " or any of its parents");
}

}  // namespace

AuthService::AuthService(AuthStore* store, AuthOptions options) : store_(store), options_(std::move(options)) {}

int64_t AuthService::Now() const {
  if (options_.now_micros) return options_.now_micros();
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Status ValidateAuthOptions(const AuthOptions& options) {
  if (options.authorization && !options.authentication) {
    return Status::InvalidArgument("authorizer CassandraAuthorizer requires authenticator PasswordAuthenticator");
  }
  return Status::OK();
}

Status AuthService::Setup() {
  TESSERA_RETURN_IF_ERROR(ValidateAuthOptions(options_));
  std::lock_guard<std::mutex> lock(change_mu_);
  TESSERA_ASSIGN_OR_RETURN(auto roles, store_->ListRoles());
  if (!roles.empty()) return Status::OK();
  RoleRecord su;
  su.name = kDefaultSuperuser;
  su.can_login = true;
  su.is_superuser = true;
  TESSERA_ASSIGN_OR_RETURN(su.salted_hash, HashPassword(kDefaultSuperuser, options_.hash_cost));
  // Nodes sharing a store may all find none at once: the first write wins.
  return store_->PutRoleIfAbsent(su).status();
}

// --- logins ---

Status AuthService::CheckFailedLogins(const std::string& address) {
  if (options_.max_failed_logins <= 0) return Status::OK();
  std::lock_guard<std::mutex> lock(login_mu_);
  auto it = failed_logins_.find(address);
  if (it == failed_logins_.end()) return Status::OK();
  const int64_t cutoff = Now() - options_.failed_login_window_micros;
  std::erase_if(it->second, [&](int64_t t) { return t < cutoff; });
  if (static_cast<int>(it->second.size()) < options_.max_failed_logins) return Status::OK();
  const int64_t wait_s = (it->second.front() - cutoff) / 1'000'000 + 1;
  return Status::AuthenticationFailed("Too many failed login attempts from " + address + "; retry in " +
                                      std::to_string(wait_s) + " s");
}

void AuthService::RecordFailedLogin(const std::string& address) {
  if (options_.max_failed_logins <= 0) return;
  std::lock_guard<std::mutex> lock(login_mu_);
  if (failed_logins_.size() > 100'000) failed_logins_.clear();  // bound the table under a flood of addresses
  failed_logins_[address].push_back(Now());
}

Result<std::string> AuthService::Authenticate(const std::string& sasl_plain, const std::string& client_address) {
  // RFC 4616: [authzid] NUL authcid NUL passwd; Cassandra ignores authzid.
  size_t first = sasl_plain.find('\0');
  size_t second = first == std::string::npos ? std::string::npos : sasl_plain.find('\0', first + 1);
  if (second == std::string::npos) {
    RecordFailedLogin(client_address);
    return Status::AuthenticationFailed("Authentication ID must not be null");
  }
  std::string user = sasl_plain.substr(first + 1, second - first - 1);
  std::string password = sasl_plain.substr(second + 1);
  if (user.empty()) return Status::AuthenticationFailed("Authentication ID must not be null");
  return Login(user, password, client_address);
}

Result<std::string> AuthService::Login(const std::string& user, const std::string& password,
                                       const std::string& client_address) {
  TESSERA_RETURN_IF_ERROR(CheckFailedLogins(client_address));
  if (!IsValidUtf8(user)) {
    // No role has such a name (role names are CQL text); fail as for any unknown role, at the same cost.
    (void)VerifyPassword(DecoyHash(options_.hash_cost), password);
    RecordFailedLogin(client_address);
    return Status::AuthenticationFailed("Provided username (not UTF-8) and/or password are incorrect");
  }
  TESSERA_ASSIGN_OR_RETURN(auto role, store_->GetRole(user));
  // A missing role is checked against the decoy hash: the same cost as a real check.
  const bool match = VerifyPassword(role && !role->salted_hash.empty() ? role->salted_hash : DecoyHash(options_.hash_cost), password);
  if (!role || role->salted_hash.empty() || !match) {
    RecordFailedLogin(client_address);
    return Status::AuthenticationFailed("Provided username " + user + " and/or password are incorrect");
  }
  if (!role->can_login) return Status::AuthenticationFailed(user + " is not permitted to log in");
  return user;
}

// --- permissions ---

Result<AuthService::CachedRole> AuthService::Load(const std::string& role) {
  CachedRole c;
  std::vector<std::string> todo{role};
  while (!todo.empty()) {
    std::string name = todo.back();
    todo.pop_back();
    if (!c.closure.insert(name).second) continue;
    TESSERA_ASSIGN_OR_RETURN(auto r, store_->GetRole(name));
    if (!r) continue;
    c.superuser = c.superuser || r->is_superuser;
    for (const auto& m : r->member_of) todo.push_back(m);
    TESSERA_ASSIGN_OR_RETURN(auto grants, store_->GetPermissions(name));
    for (const auto& g : grants) c.permissions[g.resource.Name()] |= g.permissions;
  }
  c.expires_micros = Now() + options_.permissions_validity_micros;
  return c;
}

Result<AuthService::CachedRole> AuthService::Cached(const std::string& role) {
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_.find(role);
    if (it != cache_.end() && it->second.expires_micros > Now()) return it->second;
  }
  TESSERA_ASSIGN_OR_RETURN(auto loaded, Load(role));
  std::lock_guard<std::mutex> lock(cache_mu_);
  if (cache_.size() > 10'000) cache_.clear();
  cache_[role] = loaded;
  return loaded;
}

void AuthService::Invalidate() {
  std::lock_guard<std::mutex> lock(cache_mu_);
  cache_.clear();
}

bool AuthService::IsSuperuser(const std::string& role) {
  auto c = Cached(role);
  return c.ok() && c->superuser;
}

Status AuthService::Authorize(const std::string& role, Permission permission, const Resource& resource) {
  if (!options_.authorization) return Status::OK();
  TESSERA_ASSIGN_OR_RETURN(auto c, Cached(role));
  if (c.superuser) return Status::OK();
  for (std::optional<Resource> r = resource; r; r = r->Parent()) {
    auto it = c.permissions.find(r->Name());
    if (it != c.permissions.end() && (it->second & Bit(permission))) return Status::OK();
  }
  return NoPermission(role, permission, resource);
}

Status AuthService::OnResourceCreated(const std::string& creator, const Resource& resource) {
  if (!options_.authorization || creator.empty()) return Status::OK();
  std::lock_guard<std::mutex> lock(change_mu_);
  TESSERA_ASSIGN_OR_RETURN(auto grants, store_->GetPermissions(creator));
  PermissionGrant g{creator, resource, resource.Applicable()};
  for (const auto& old : grants) {
    if (old.resource == resource) g.permissions |= old.permissions;
  }
  TESSERA_RETURN_IF_ERROR(store_->PutPermissions(g));
  Invalidate();
  return Status::OK();
}

Status AuthService::OnResourceDropped(const Resource& resource) {
  if (!options_.authorization) return Status::OK();
  std::lock_guard<std::mutex> lock(change_mu_);
  TESSERA_ASSIGN_OR_RETURN(auto all, store_->ListPermissions());
  for (const auto& g : all) {
    bool within = false;
    for (std::optional<Resource> r = g.resource; r && !within; r = r->Parent()) within = *r == resource;
    if (within) TESSERA_RETURN_IF_ERROR(store_->PutPermissions(PermissionGrant{g.role, g.resource, 0}));
  }
  Invalidate();
  return Status::OK();
}

// --- roles ---

Status AuthService::RequireExisting(const std::string& name, RoleRecord* out) {
  TESSERA_ASSIGN_OR_RETURN(auto r, store_->GetRole(name));
  if (!r) return Status::InvalidArgument(name + " doesn't exist");
  if (out) *out = *r;
  return Status::OK();
}

Status AuthService::ApplyChanges(const RoleChanges& changes, RoleRecord* r) const {
  if (changes.login) r->can_login = *changes.login;
  if (changes.superuser) r->is_superuser = *changes.superuser;
  if (changes.options) r->options = *changes.options;
  if (changes.password) {
    if (changes.password->empty()) return Status::InvalidArgument("Password must not be empty");
    TESSERA_ASSIGN_OR_RETURN(r->salted_hash, HashPassword(*changes.password, options_.hash_cost));
  }
  return Status::OK();
}

Status AuthService::CreateRole(const std::string& actor, const std::string& name, const RoleChanges& changes,
                               bool if_not_exists) {
  TESSERA_RETURN_IF_ERROR(Authorize(actor, Permission::kCreate, Resource::AllRoles()));
  if (changes.superuser.value_or(false) && !IsSuperuser(actor)) {
    return Status::Unauthorized("Only superusers can create a role with superuser status");
  }
  if (name.empty()) return Status::InvalidArgument("Role name can't be an empty string");
  {
    std::lock_guard<std::mutex> lock(change_mu_);
    TESSERA_ASSIGN_OR_RETURN(auto existing, store_->GetRole(name));
    if (existing) {
      if (if_not_exists) return Status::OK();
      return Status::InvalidArgument(name + " already exists");
    }
    RoleRecord r;
    r.name = name;
    TESSERA_RETURN_IF_ERROR(ApplyChanges(changes, &r));
    TESSERA_RETURN_IF_ERROR(store_->PutRole(r));
  }
  Invalidate();
  return OnResourceCreated(actor, Resource::Role(name));
}

Status AuthService::AlterRole(const std::string& actor, const std::string& name, const RoleChanges& changes) {
  RoleRecord r;
  TESSERA_RETURN_IF_ERROR(RequireExisting(name, &r));
  const bool self = actor == name;
  // Superuser status is guarded with or without an authorizer (as Cassandra's AlterRoleStatement).
  if (changes.superuser && self) return Status::Unauthorized("You aren't allowed to alter your own superuser status");
  if (changes.superuser && !IsSuperuser(actor)) {
    return Status::Unauthorized("Only superusers are allowed to alter superuser status");
  }
  if (options_.authorization) {
    const bool only_password = !changes.login && !changes.superuser && !changes.options;
    if (!(self && only_password)) {
      if (IsSuperuser(name) && !IsSuperuser(actor)) {
        return Status::Unauthorized("You must be a superuser to alter a superuser role");
      }
      TESSERA_RETURN_IF_ERROR(Authorize(actor, Permission::kAlter, Resource::Role(name)));
    }
  }
  std::lock_guard<std::mutex> lock(change_mu_);
  TESSERA_RETURN_IF_ERROR(RequireExisting(name, &r));
  TESSERA_RETURN_IF_ERROR(ApplyChanges(changes, &r));
  TESSERA_RETURN_IF_ERROR(store_->PutRole(r));
  Invalidate();
  return Status::OK();
}

Status AuthService::DropRole(const std::string& actor, const std::string& name, bool if_exists) {
  TESSERA_RETURN_IF_ERROR(Authorize(actor, Permission::kDrop, Resource::Role(name)));
  if (actor == name) return Status::InvalidArgument("Cannot DROP primary role for current login");
  {
    std::lock_guard<std::mutex> lock(change_mu_);
    TESSERA_ASSIGN_OR_RETURN(auto existing, store_->GetRole(name));
    if (!existing) return if_exists ? Status::OK() : Status::InvalidArgument(name + " doesn't exist");
    if (existing->is_superuser && !IsSuperuser(actor)) {
      return Status::Unauthorized("Only superusers can drop a role with superuser status");
    }
    TESSERA_RETURN_IF_ERROR(store_->DeleteRole(name));
    // Roles it was granted to lose it; its own grants go.
    TESSERA_ASSIGN_OR_RETURN(auto roles, store_->ListRoles());
    for (auto& r : roles) {
      if (r.member_of.erase(name)) TESSERA_RETURN_IF_ERROR(store_->PutRole(r));
    }
    TESSERA_ASSIGN_OR_RETURN(auto grants, store_->GetPermissions(name));
    for (auto& g : grants) TESSERA_RETURN_IF_ERROR(store_->PutPermissions(PermissionGrant{name, g.resource, 0}));
  }
  Invalidate();
  return OnResourceDropped(Resource::Role(name));
}

Status AuthService::GrantRole(const std::string& actor, const std::string& role, const std::string& grantee) {
  TESSERA_RETURN_IF_ERROR(Authorize(actor, Permission::kAuthorize, Resource::Role(role)));
  std::lock_guard<std::mutex> lock(change_mu_);
  RoleRecord granted, target;
  TESSERA_RETURN_IF_ERROR(RequireExisting(role, &granted));
  TESSERA_RETURN_IF_ERROR(RequireExisting(grantee, &target));
  if (target.member_of.count(role)) return Status::InvalidArgument(grantee + " is a member of " + role);
  // No cycles: `role` must not already (transitively) hold `grantee`.
  TESSERA_ASSIGN_OR_RETURN(auto closure, Load(role));
  if (closure.closure.count(grantee)) return Status::InvalidArgument(role + " is a member of " + grantee);
  target.member_of.insert(role);
  TESSERA_RETURN_IF_ERROR(store_->PutRole(target));
  Invalidate();
  return Status::OK();
}

Status AuthService::RevokeRole(const std::string& actor, const std::string& role, const std::string& grantee) {
  TESSERA_RETURN_IF_ERROR(Authorize(actor, Permission::kAuthorize, Resource::Role(role)));
  std::lock_guard<std::mutex> lock(change_mu_);
  RoleRecord target;
  TESSERA_RETURN_IF_ERROR(RequireExisting(role, nullptr));
  TESSERA_RETURN_IF_ERROR(RequireExisting(grantee, &target));
  if (!target.member_of.erase(role)) return Status::InvalidArgument(grantee + " is not a member of " + role);
  TESSERA_RETURN_IF_ERROR(store_->PutRole(target));
  Invalidate();
  return Status::OK();
}

Result<std::vector<RoleRecord>> AuthService::ListRoles(const std::string& actor, const std::optional<std::string>& of,
                                                       bool recursive) {
  const bool see_all = !options_.authorization || Authorize(actor, Permission::kDescribe, Resource::AllRoles()).ok();
  std::set<std::string> wanted;
  if (of || !see_all) {
    const std::string who = of.value_or(actor);
    TESSERA_RETURN_IF_ERROR(RequireExisting(who, nullptr));
    if (!see_all && who != actor) {
      TESSERA_ASSIGN_OR_RETURN(auto mine, Cached(actor));
      if (!mine.closure.count(who)) return Status::Unauthorized("You are not authorized to view roles granted to " + who);
    }
    if (recursive) {
      TESSERA_ASSIGN_OR_RETURN(auto c, Load(who));
      wanted = c.closure;
    } else {
      RoleRecord r;
      TESSERA_RETURN_IF_ERROR(RequireExisting(who, &r));
      wanted = r.member_of;
      wanted.insert(who);
    }
  }
  TESSERA_ASSIGN_OR_RETURN(auto roles, store_->ListRoles());
  if (of || !see_all) std::erase_if(roles, [&](const RoleRecord& r) { return !wanted.count(r.name); });
  return roles;
}

Status AuthService::GrantPermissions(const std::string& actor, PermissionSet permissions, const Resource& resource,
                                     const std::string& grantee) {
  if (!options_.authorization) {
    return Status::InvalidArgument("GRANT operation is not supported by AllowAllAuthorizer");
  }
  if ((permissions & resource.Applicable()) != permissions) {
    return Status::InvalidArgument("Resource type " +
                                   std::string(resource.kind <= Resource::Kind::kTable ? "DataResource" : "RoleResource") +
                                   " does not support the requested permissions: " +
                                   PermissionNames(permissions & ~resource.Applicable()).front());
  }
  TESSERA_RETURN_IF_ERROR(Authorize(actor, Permission::kAuthorize, resource));
  for (int i = 0; i < kPermissionCount; ++i) {
    auto p = static_cast<Permission>(i);
    if (permissions & Bit(p)) TESSERA_RETURN_IF_ERROR(Authorize(actor, p, resource));
  }
  std::lock_guard<std::mutex> lock(change_mu_);
  TESSERA_RETURN_IF_ERROR(RequireExisting(grantee, nullptr));
  TESSERA_ASSIGN_OR_RETURN(auto grants, store_->GetPermissions(grantee));
  PermissionGrant g{grantee, resource, permissions};
  for (const auto& old : grants) {
    if (old.resource == resource) g.permissions |= old.permissions;
  }
  TESSERA_RETURN_IF_ERROR(store_->PutPermissions(g));
  Invalidate();
  return Status::OK();
}

Status AuthService::RevokePermissions(const std::string& actor, PermissionSet permissions, const Resource& resource,
                                      const std::string& grantee) {
  if (!options_.authorization) {
    return Status::InvalidArgument("REVOKE operation is not supported by AllowAllAuthorizer");
  }
  TESSERA_RETURN_IF_ERROR(Authorize(actor, Permission::kAuthorize, resource));
  std::lock_guard<std::mutex> lock(change_mu_);
  TESSERA_RETURN_IF_ERROR(RequireExisting(grantee, nullptr));
  TESSERA_ASSIGN_OR_RETURN(auto grants, store_->GetPermissions(grantee));
  for (const auto& old : grants) {
    if (old.resource == resource) {
      TESSERA_RETURN_IF_ERROR(store_->PutPermissions(PermissionGrant{grantee, resource, old.permissions & ~permissions}));
    }
  }
  Invalidate();
  return Status::OK();
}

Result<std::vector<PermissionRow>> AuthService::ListPermissions(const std::string& actor, PermissionSet permissions,
                                                                const std::optional<Resource>& resource,
                                                                const std::optional<std::string>& of,
                                                                bool recursive) {
  if (!options_.authorization) {
    return Status::InvalidArgument("LIST PERMISSIONS operation is not supported by AllowAllAuthorizer");
  }
  const bool see_all = Authorize(actor, Permission::kDescribe, Resource::AllRoles()).ok();
  std::optional<std::set<std::string>> roles;
  if (of) {
    TESSERA_RETURN_IF_ERROR(RequireExisting(*of, nullptr));
    if (!see_all) {
      TESSERA_ASSIGN_OR_RETURN(auto mine, Cached(actor));
      if (!mine.closure.count(*of)) return Status::Unauthorized("You are not authorized to view " + *of + "'s permissions");
    }
    TESSERA_ASSIGN_OR_RETURN(auto c, Load(*of));
    roles = recursive ? c.closure : std::set<std::string>{*of};
  } else if (!see_all) {
    return Status::Unauthorized("You are not authorized to view everyone's permissions");
  }
  std::set<std::string> resources;  // the resource and, recursively, its parents
  if (resource) {
    for (std::optional<Resource> r = resource; r; r = recursive ? r->Parent() : std::nullopt) resources.insert(r->Name());
  }
  TESSERA_ASSIGN_OR_RETURN(auto all, store_->ListPermissions());
  std::vector<PermissionRow> out;
  for (const auto& g : all) {
    if (roles && !roles->count(g.role)) continue;
    if (resource && !resources.count(g.resource.Name())) continue;
    for (int i = 0; i < kPermissionCount; ++i) {
      auto p = static_cast<Permission>(i);
      if ((g.permissions & permissions & Bit(p))) out.push_back(PermissionRow{g.role, g.resource, p});
    }
  }
  return out;
}

}  // namespace tessera::auth
