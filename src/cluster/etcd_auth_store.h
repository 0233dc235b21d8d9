// EtcdAuthStore: the cluster's roles and permissions, kept in etcd so that
// every node reads the same ones (as ScyllaDB 6 keeps auth in group 0
// rather than in node-local tables). A cluster node's AuthService runs
// over it; the single node keeps SystemAuthStore (system_auth tables).
//
// Layout under `prefix` (FROZEN: stored in etcd, read by every node):
//   <prefix>roles/<role name>        -> {"can_login": bool, "is_superuser": bool,
//                                        "member_of": [role, ...], "salted_hash": text,
//                                        "options": {text: text}}
//   <prefix>permissions/<role name>  -> {"<resource name>": ["SELECT", ...], ...}
// Resource and permission names are Cassandra's (auth/resource.h). The
// role's key is the whole name, so any name is a key; each role's
// permissions are one key, changed by compare-and-swap on its mod revision
// so that two nodes granting at once both land.
//
// Consistency: every call reads or writes etcd (linearizable reads), so a
// change made through one node is visible to the next read through any
// other; AuthService's permission cache bounds how long a node may still
// act on what it read before (permissions_validity_in_ms).
//
// Errors: IOError when etcd cannot be reached; InvalidArgument for a role
// name, option or hash that is not valid UTF-8 (JSON holds only UTF-8);
// Corruption for a stored value that is not this layout; Busy when a
// permissions change lost its compare-and-swap 16 times in a row.
//
// Thread safety: thread-safe (EtcdClient is).
#pragma once

#include <memory>
#include <string>

#include "auth/auth_store.h"
#include "cluster/etcd_client.h"

namespace tessera::cluster {

// The prefix a cluster keeps auth under.
inline constexpr const char* kAuthPrefix = "/tessera/auth/";

class EtcdAuthStore : public auth::AuthStore {
 public:
  // REQUIRES: etcd outlives the store.
  explicit EtcdAuthStore(EtcdClient* etcd, std::string prefix = kAuthPrefix)
      : etcd_(etcd), prefix_(std::move(prefix)) {}

  Result<std::optional<auth::RoleRecord>> GetRole(const std::string& name) override;
  Result<std::vector<auth::RoleRecord>> ListRoles() override;
  Status PutRole(const auth::RoleRecord& role) override;
  Result<bool> PutRoleIfAbsent(const auth::RoleRecord& role) override;
  Status DeleteRole(const std::string& name) override;
  Result<std::vector<auth::PermissionGrant>> GetPermissions(const std::string& role) override;
  Result<std::vector<auth::PermissionGrant>> ListPermissions() override;
  Status PutPermissions(const auth::PermissionGrant& grant) override;

 private:
  std::string RoleKey(const std::string& name) const { return prefix_ + "roles/" + name; }
  std::string PermissionsKey(const std::string& role) const { return prefix_ + "permissions/" + role; }

  EtcdClient* etcd_;
  const std::string prefix_;
};

}  // namespace tessera::cluster
