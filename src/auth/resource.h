// Permissions and the resources they are granted on, as Cassandra names
// them (CassandraAuthorizer; org.apache.cassandra.auth.DataResource and
// RoleResource): plain values, no storage.
//
// Resources form two trees. Data: <all keyspaces> ("data") > <keyspace k>
// ("data/k") > <table k.t> ("data/k/t"). Roles: <all roles> ("roles") >
// <role r> ("roles/r"). A permission granted on a resource holds on all of
// its descendants. The "data/..." and "roles/..." names are FROZEN: they are
// stored in system_auth.role_permissions.resource, as Cassandra stores them.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"

namespace tessera::auth {

// Bit positions are not stored (permissions are stored by name).
enum class Permission : uint8_t { kCreate, kAlter, kDrop, kSelect, kModify, kAuthorize, kDescribe };
inline constexpr int kPermissionCount = 7;

using PermissionSet = uint32_t;  // bit (1 << Permission)
inline constexpr PermissionSet Bit(Permission p) { return PermissionSet{1} << static_cast<int>(p); }
inline constexpr PermissionSet kAllPermissions = (PermissionSet{1} << kPermissionCount) - 1;

// "CREATE", "SELECT", ... (FROZEN: stored in role_permissions.permissions).
const char* PermissionName(Permission p);
// Case-insensitive. Errors: InvalidArgument for an unknown name.
Result<Permission> ParsePermission(const std::string& name);
// The names in Permission order.
std::vector<std::string> PermissionNames(PermissionSet set);

struct Resource {
  enum class Kind : uint8_t { kAllKeyspaces, kKeyspace, kTable, kAllRoles, kRole };
  Kind kind = Kind::kAllKeyspaces;
  std::string keyspace;  // kKeyspace, kTable
  std::string table;     // kTable
  std::string role;      // kRole

  static Resource AllKeyspaces() { return {}; }
  static Resource Keyspace(std::string ks) { return {Kind::kKeyspace, std::move(ks), "", ""}; }
  static Resource Table(std::string ks, std::string t) { return {Kind::kTable, std::move(ks), std::move(t), ""}; }
  static Resource AllRoles() { return {Kind::kAllRoles, "", "", ""}; }
  static Resource Role(std::string r) { return {Kind::kRole, "", "", std::move(r)}; }

  // "data", "data/ks", "data/ks/t", "roles", "roles/r" (FROZEN, see above).
  std::string Name() const;
  // Errors: InvalidArgument for a name that is none of the above.
  static Result<Resource> FromName(const std::string& name);
  // "<all keyspaces>", "<keyspace ks>", "<table ks.t>", "<all roles>", "<role r>" (Cassandra's messages).
  std::string Display() const;
  // The enclosing resource; nullopt for the two roots.
  std::optional<Resource> Parent() const;
  // What may be granted on it (Cassandra: tables take no CREATE; roles no SELECT/MODIFY).
  PermissionSet Applicable() const;

  bool operator==(const Resource&) const = default;
};

}  // namespace tessera::auth
