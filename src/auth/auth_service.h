// AuthService: Cassandra's security model — the
// PasswordAuthenticator (SASL PLAIN logins against Argon2id hashes), the
// CassandraRoleManager (roles that can log in, be superusers and be granted
// to one another) and the CassandraAuthorizer (permissions on keyspaces,
// tables and roles, inherited down the resource tree and through granted
// roles). Data lives in an AuthStore (system_auth tables on one node, etcd
// on a cluster: cluster/etcd_auth_store.h).
//
// Follows Cassandra 4 (org.apache.cassandra.auth): messages, the default
// superuser cassandra/cassandra created on first start when no role exists,
// creators getting every applicable permission on what they create,
// superusers passing every check, and a permission cache whose entries live
// `permissions_validity_micros` (permissions_validity_in_ms) and are dropped
// at once by any role or permission change made through this service.
//
// Errors: Unauthorized (0x2100) for a missing permission, AuthenticationFailed
// (0x0100) for a failed login, InvalidArgument for a bad statement (an
// unknown role, a role that already exists), storage errors from the store.
//
// Thread safety: every method is thread-safe; changes are serialised.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "auth/auth_store.h"
#include "auth/password_hash.h"
#include "auth/resource.h"
#include "common/status.h"

namespace tessera::auth {

struct AuthOptions {
  bool authentication = false;  // authenticator: PasswordAuthenticator (else AllowAllAuthenticator)
  bool authorization = false;   // authorizer: CassandraAuthorizer (else AllowAllAuthorizer); needs authentication
  int64_t permissions_validity_micros = 2'000'000;  // Cassandra's permissions_validity_in_ms default, 2000
  // Failed-login rate limit per client address: after this many failures in
  // the window, logins from that address are refused without a check until
  // the window has passed. 0: no limit.
  int max_failed_logins = 10;
  int64_t failed_login_window_micros = 60'000'000;
  std::function<int64_t()> now_micros;  // unset: the steady clock
  PasswordHashCost hash_cost = kDefaultHashCost;  // of new hashes (kFuzzingHashCost in fuzzers only)
};

// CREATE / ALTER ROLE options; unset fields are left as they are.
struct RoleChanges {
  std::optional<std::string> password;
  std::optional<bool> login;
  std::optional<bool> superuser;
  std::optional<std::map<std::string, std::string>> options;
};

// A row of LIST PERMISSIONS.
struct PermissionRow {
  std::string role;
  Resource resource;
  Permission permission;
};

// The name Cassandra gives the built-in superuser.
inline constexpr const char* kDefaultSuperuser = "cassandra";
// The authenticator class AUTHENTICATE names (drivers match on it).
inline constexpr const char* kPasswordAuthenticatorClass = "org.apache.cassandra.auth.PasswordAuthenticator";

// Errors: InvalidArgument for an authorizer without an authenticator
// (Cassandra refuses CassandraAuthorizer with AllowAllAuthenticator).
Status ValidateAuthOptions(const AuthOptions& options);

class AuthService {
 public:
  // REQUIRES: store outlives the service.
  AuthService(AuthStore* store, AuthOptions options);

  // Creates cassandra/cassandra (LOGIN, SUPERUSER) when no role exists yet
  // (through PutRoleIfAbsent: once, when several nodes share the store).
  // Errors: those of ValidateAuthOptions; storage errors.
  Status Setup();

  bool authentication_required() const { return options_.authentication; }
  bool authorization_enabled() const { return options_.authorization; }

  // --- PasswordAuthenticator ---
  // A SASL PLAIN token ("authzid\0user\0password", RFC 4616) from
  // AUTH_RESPONSE. Returns the role logged in. Errors: AuthenticationFailed
  // ("Provided username u and/or password are incorrect", "u is not
  // permitted to log in", "Too many failed login attempts from a; ...").
  Result<std::string> Authenticate(const std::string& sasl_plain, const std::string& client_address);
  Result<std::string> Login(const std::string& user, const std::string& password, const std::string& client_address);

  // --- CassandraAuthorizer ---
  // OK when authorization is off, `role` is a superuser, or `role` (or a
  // role granted to it) holds `permission` on `resource` or a parent.
  // Errors: Unauthorized ("User u has no SELECT permission on <table k.t> or any of its parents").
  Status Authorize(const std::string& role, Permission permission, const Resource& resource);
  bool IsSuperuser(const std::string& role);
  // A new keyspace, table or role: `creator` gets every applicable permission on it.
  Status OnResourceCreated(const std::string& creator, const Resource& resource);
  // A dropped keyspace (and its tables), table or role: its grants go.
  Status OnResourceDropped(const Resource& resource);

  // --- role statements (`actor` is the logged-in role; checks as Cassandra's) ---
  Status CreateRole(const std::string& actor, const std::string& name, const RoleChanges& changes, bool if_not_exists);
  Status AlterRole(const std::string& actor, const std::string& name, const RoleChanges& changes);
  Status DropRole(const std::string& actor, const std::string& name, bool if_exists);
  Status GrantRole(const std::string& actor, const std::string& role, const std::string& grantee);
  Status RevokeRole(const std::string& actor, const std::string& role, const std::string& grantee);
  // LIST ROLES [OF r] [NORECURSIVE]: without `of`, every role for a
  // superuser or a holder of DESCRIBE on <all roles>, else the actor's own.
  Result<std::vector<RoleRecord>> ListRoles(const std::string& actor, const std::optional<std::string>& of,
                                            bool recursive);
  Status GrantPermissions(const std::string& actor, PermissionSet permissions, const Resource& resource,
                          const std::string& grantee);
  Status RevokePermissions(const std::string& actor, PermissionSet permissions, const Resource& resource,
                           const std::string& grantee);
  // LIST <permissions> [ON resource] [OF role] [NORECURSIVE]: with a
  // resource, its grants and (recursively) those of its parents.
  Result<std::vector<PermissionRow>> ListPermissions(const std::string& actor, PermissionSet permissions,
                                                     const std::optional<Resource>& resource,
                                                     const std::optional<std::string>& of, bool recursive);

 private:
  struct CachedRole {
    int64_t expires_micros = 0;
    bool superuser = false;
    std::set<std::string> closure;                     // the role and every role granted to it, transitively
    std::map<std::string, PermissionSet> permissions;  // resource name -> union over the closure
  };
  int64_t Now() const;
  Result<CachedRole> Load(const std::string& role);
  Result<CachedRole> Cached(const std::string& role);
  void Invalidate();
  Status RequireExisting(const std::string& name, RoleRecord* out);
  // Sets what `changes` sets (hashing a new password). Errors: InvalidArgument for an empty password.
  Status ApplyChanges(const RoleChanges& changes, RoleRecord* r) const;
  Status CheckFailedLogins(const std::string& address);
  void RecordFailedLogin(const std::string& address);

  AuthStore* store_;
  AuthOptions options_;
  std::mutex change_mu_;  // serialises changes
  std::mutex cache_mu_;
  std::map<std::string, CachedRole> cache_;
  std::mutex login_mu_;
  std::map<std::string, std::vector<int64_t>> failed_logins_;  // address -> failure times in the window
};

}  // namespace tessera::auth
