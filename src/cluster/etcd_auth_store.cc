#include "cluster/etcd_auth_store.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace tessera::cluster {
namespace {

using json = nlohmann::json;

// JSON holds only UTF-8: a name or value that is not is refused, not mangled.
Result<std::string> Dump(const json& j) {
  try {
    return j.dump();
  } catch (const json::exception&) {
    return Status::InvalidArgument("a role's name, options and password hash must be valid UTF-8");
  }
}

Result<json> Parse(const EtcdKeyValue& kv) {
  json j = json::parse(kv.value, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::Corruption("auth entry " + kv.key + " is not a JSON object");
  return j;
}

Result<auth::RoleRecord> RoleOf(std::string name, const EtcdKeyValue& kv) {
  TESSERA_ASSIGN_OR_RETURN(json j, Parse(kv));
  auth::RoleRecord r;
  r.name = std::move(name);
  try {
    r.can_login = j.value("can_login", false);
    r.is_superuser = j.value("is_superuser", false);
    if (auto m = j.find("member_of"); m != j.end()) r.member_of = m->get<std::set<std::string>>();
    r.salted_hash = j.value("salted_hash", std::string());
    if (auto o = j.find("options"); o != j.end()) r.options = o->get<std::map<std::string, std::string>>();
  } catch (const json::exception& e) {
    return Status::Corruption("auth entry " + kv.key + ": " + e.what());
  }
  return r;
}

Result<std::string> RoleValue(const auth::RoleRecord& r) {
  json j = {{"can_login", r.can_login},
            {"is_superuser", r.is_superuser},
            {"member_of", r.member_of},
            {"salted_hash", r.salted_hash},
            {"options", r.options}};
  return Dump(j);
}

// resource name -> permission set, as stored.
using Grants = std::map<std::string, auth::PermissionSet>;

Result<Grants> GrantsOf(const EtcdKeyValue& kv) {
  TESSERA_ASSIGN_OR_RETURN(json j, Parse(kv));
  Grants out;
  try {
    for (const auto& [resource, names] : j.items()) {
      auth::PermissionSet set = 0;
      for (const auto& n : names) {
        auto p = auth::ParsePermission(n.get<std::string>());
        if (p.ok()) set |= auth::Bit(*p);  // a permission this version does not know is skipped
      }
      if (set) out[resource] = set;
    }
  } catch (const json::exception& e) {
    return Status::Corruption("auth entry " + kv.key + ": " + e.what());
  }
  return out;
}

void AppendGrants(const std::string& role, const Grants& grants, std::vector<auth::PermissionGrant>* out) {
  for (const auto& [name, set] : grants) {
    auto resource = auth::Resource::FromName(name);
    if (!resource.ok()) continue;  // a resource kind this version does not know
    out->push_back(auth::PermissionGrant{role, *resource, set});
  }
}

}  // namespace

Result<std::optional<auth::RoleRecord>> EtcdAuthStore::GetRole(const std::string& name) {
  TESSERA_ASSIGN_OR_RETURN(auto range, etcd_->Range(RoleKey(name)));
  if (range.kvs.empty()) return std::optional<auth::RoleRecord>();
  TESSERA_ASSIGN_OR_RETURN(auto role, RoleOf(name, range.kvs[0]));
  return std::optional<auth::RoleRecord>(std::move(role));
}

Result<std::vector<auth::RoleRecord>> EtcdAuthStore::ListRoles() {
  const std::string prefix = prefix_ + "roles/";
  TESSERA_ASSIGN_OR_RETURN(auto range, etcd_->Range(prefix, EtcdPrefixEnd(prefix)));
  std::vector<auth::RoleRecord> out;
  for (const auto& kv : range.kvs) {
    TESSERA_ASSIGN_OR_RETURN(auto role, RoleOf(kv.key.substr(prefix.size()), kv));
    out.push_back(std::move(role));
  }
  return out;  // etcd returns keys in byte order, which is name order
}

Status EtcdAuthStore::PutRole(const auth::RoleRecord& role) {
  TESSERA_ASSIGN_OR_RETURN(auto value, RoleValue(role));
  return etcd_->Put(RoleKey(role.name), value).status();
}

Result<bool> EtcdAuthStore::PutRoleIfAbsent(const auth::RoleRecord& role) {
  TESSERA_ASSIGN_OR_RETURN(auto value, RoleValue(role));
  EtcdCompare absent;
  absent.key = RoleKey(role.name);
  absent.target = EtcdCompare::Target::kCreateRevision;
  absent.revision = 0;
  TESSERA_ASSIGN_OR_RETURN(auto txn, etcd_->Txn({absent}, {EtcdOp::Put(RoleKey(role.name), value)}));
  return txn.succeeded;
}

Status EtcdAuthStore::DeleteRole(const std::string& name) {
  return etcd_->Txn({}, {EtcdOp::Delete(RoleKey(name)), EtcdOp::Delete(PermissionsKey(name))}).status();
}

Result<std::vector<auth::PermissionGrant>> EtcdAuthStore::GetPermissions(const std::string& role) {
  TESSERA_ASSIGN_OR_RETURN(auto range, etcd_->Range(PermissionsKey(role)));
  std::vector<auth::PermissionGrant> out;
  if (range.kvs.empty()) return out;
  TESSERA_ASSIGN_OR_RETURN(auto grants, GrantsOf(range.kvs[0]));
  AppendGrants(role, grants, &out);
  return out;
}

Result<std::vector<auth::PermissionGrant>> EtcdAuthStore::ListPermissions() {
  const std::string prefix = prefix_ + "permissions/";
  TESSERA_ASSIGN_OR_RETURN(auto range, etcd_->Range(prefix, EtcdPrefixEnd(prefix)));
  std::vector<auth::PermissionGrant> out;
  for (const auto& kv : range.kvs) {
    TESSERA_ASSIGN_OR_RETURN(auto grants, GrantsOf(kv));
    AppendGrants(kv.key.substr(prefix.size()), grants, &out);
  }
  return out;
}

Status EtcdAuthStore::PutPermissions(const auth::PermissionGrant& grant) {
  const std::string key = PermissionsKey(grant.role);
  for (int attempt = 0; attempt < 16; ++attempt) {
    TESSERA_ASSIGN_OR_RETURN(auto range, etcd_->Range(key));
    Grants grants;
    int64_t seen = 0;  // mod revision read; 0: absent
    if (!range.kvs.empty()) {
      TESSERA_ASSIGN_OR_RETURN(grants, GrantsOf(range.kvs[0]));
      seen = range.kvs[0].mod_revision;
    }
    const std::string resource = grant.resource.Name();
    if (grant.permissions) {
      grants[resource] = grant.permissions;
    } else {
      grants.erase(resource);
    }
    EtcdCompare unchanged;
    unchanged.key = key;
    unchanged.target = EtcdCompare::Target::kModRevision;
    unchanged.revision = seen;
    EtcdOp write = EtcdOp::Delete(key);
    if (!grants.empty()) {
      json j = json::object();
      for (const auto& [name, set] : grants) j[name] = auth::PermissionNames(set);
      TESSERA_ASSIGN_OR_RETURN(auto value, Dump(j));
      write = EtcdOp::Put(key, value);
    }
    TESSERA_ASSIGN_OR_RETURN(auto txn, etcd_->Txn({unchanged}, {write}));
    if (txn.succeeded) return Status::OK();
  }
  return Status::Busy("the permissions of role " + grant.role + " kept changing under this grant; try again");
}

}  // namespace tessera::cluster
