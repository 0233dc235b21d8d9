#include "auth/resource.h"

#include "common/bytes.h"

namespace tessera::auth {
namespace {

constexpr const char* kNames[kPermissionCount] = {"CREATE", "ALTER", "DROP", "SELECT", "MODIFY", "AUTHORIZE", "DESCRIBE"};

}  // namespace

const char* PermissionName(Permission p) { return kNames[static_cast<int>(p)]; }

Result<Permission> ParsePermission(const std::string& name) {
  const std::string upper = AsciiUpper(name);
  for (int i = 0; i < kPermissionCount; ++i) {
    if (upper == kNames[i]) return static_cast<Permission>(i);
  }
  return Status::InvalidArgument("Unknown permission " + name);
}

std::vector<std::string> PermissionNames(PermissionSet set) {
  std::vector<std::string> out;
  for (int i = 0; i < kPermissionCount; ++i) {
    if (set & Bit(static_cast<Permission>(i))) out.push_back(kNames[i]);
  }
  return out;
}

std::string Resource::Name() const {
  switch (kind) {
    case Kind::kAllKeyspaces: return "data";
    case Kind::kKeyspace: return "data/" + keyspace;
    case Kind::kTable: return "data/" + keyspace + "/" + table;
    case Kind::kAllRoles: return "roles";
    case Kind::kRole: return "roles/" + role;
  }
  return "";
}

Result<Resource> Resource::FromName(const std::string& name) {
  if (name == "data") return AllKeyspaces();
  if (name == "roles") return AllRoles();
  if (name.rfind("roles/", 0) == 0 && name.size() > 6) return Role(name.substr(6));
  if (name.rfind("data/", 0) == 0 && name.size() > 5) {
    std::string rest = name.substr(5);
    size_t slash = rest.find('/');
    if (slash == std::string::npos) return Keyspace(rest);
    if (slash > 0 && slash + 1 < rest.size()) return Table(rest.substr(0, slash), rest.substr(slash + 1));
  }
  return Status::InvalidArgument("not a resource name: " + name);
}

std::string Resource::Display() const {
  switch (kind) {
    case Kind::kAllKeyspaces: return "<all keyspaces>";
    case Kind::kKeyspace: return "<keyspace " + keyspace + ">";
    case Kind::kTable: return "<table " + keyspace + "." + table + ">";
    case Kind::kAllRoles: return "<all roles>";
    case Kind::kRole: return "<role " + role + ">";
  }
  return "";
}

std::optional<Resource> Resource::Parent() const {
  switch (kind) {
    case Kind::kKeyspace: return AllKeyspaces();
    case Kind::kTable: return Keyspace(keyspace);
    case Kind::kRole: return AllRoles();
    default: return std::nullopt;
  }
}

PermissionSet Resource::Applicable() const {
  using P = Permission;
  const PermissionSet data = Bit(P::kCreate) | Bit(P::kAlter) | Bit(P::kDrop) | Bit(P::kSelect) | Bit(P::kModify) |
                             Bit(P::kAuthorize);
  switch (kind) {
    case Kind::kAllKeyspaces:
    case Kind::kKeyspace: return data;
    case Kind::kTable: return data & ~Bit(P::kCreate);
    case Kind::kAllRoles: return Bit(P::kCreate) | Bit(P::kAlter) | Bit(P::kDrop) | Bit(P::kAuthorize) | Bit(P::kDescribe);
    case Kind::kRole: return Bit(P::kAlter) | Bit(P::kDrop) | Bit(P::kAuthorize);
  }
  return 0;
}

}  // namespace tessera::auth
