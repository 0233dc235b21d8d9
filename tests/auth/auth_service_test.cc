// AuthService over an in-memory AuthStore with a manual clock: logins,
// permissions through parents and granted roles, the permission cache's
// validity, role statements' checks, and the failed-login limit.
#include "auth/auth_service.h"

#include <gtest/gtest.h>

#include <map>

#include "auth/password_hash.h"
#include "common/bytes.h"

namespace tessera::auth {
namespace {

class MemoryStore : public AuthStore {
 public:
  Result<std::optional<RoleRecord>> GetRole(const std::string& name) override {
    auto it = roles.find(name);
    if (it == roles.end()) return std::optional<RoleRecord>();
    return std::optional<RoleRecord>(it->second);
  }
  Result<std::vector<RoleRecord>> ListRoles() override {
    std::vector<RoleRecord> out;
    for (const auto& [_, r] : roles) out.push_back(r);
    return out;
  }
  Status PutRole(const RoleRecord& role) override {
    roles[role.name] = role;
    return Status::OK();
  }
  Status DeleteRole(const std::string& name) override {
    roles.erase(name);
    return Status::OK();
  }
  Result<std::vector<PermissionGrant>> GetPermissions(const std::string& role) override {
    std::vector<PermissionGrant> out;
    for (const auto& g : grants) {
      if (g.first.first == role) out.push_back(g.second);
    }
    return out;
  }
  Result<std::vector<PermissionGrant>> ListPermissions() override {
    std::vector<PermissionGrant> out;
    for (const auto& g : grants) out.push_back(g.second);
    return out;
  }
  Status PutPermissions(const PermissionGrant& g) override {
    if (g.permissions == 0) grants.erase({g.role, g.resource.Name()});
    else grants[{g.role, g.resource.Name()}] = g;
    return Status::OK();
  }
  std::map<std::string, RoleRecord> roles;
  std::map<std::pair<std::string, std::string>, PermissionGrant> grants;
};

class AuthServiceTest : public ::testing::Test {
 protected:
  AuthServiceTest() {
    AuthOptions o;
    o.authentication = o.authorization = true;
    o.permissions_validity_micros = 2'000'000;
    o.max_failed_logins = 3;
    o.failed_login_window_micros = 60'000'000;
    o.now_micros = [this] { return now; };
    o.hash_cost = kFuzzingHashCost;  // fast; the cost does not change the logic
    auth = std::make_unique<AuthService>(&store, o);
    EXPECT_TRUE(auth->Setup().ok());
  }
  RoleChanges Login(const std::string& password) {
    RoleChanges c;
    c.password = password;
    c.login = true;
    return c;
  }
  int64_t now = 1'000'000;
  MemoryStore store;
  std::unique_ptr<AuthService> auth;
};

TEST(ResourceTest, NamesParentsAndApplicablePermissions) {
  EXPECT_EQ(Resource::Table("ks", "t").Name(), "data/ks/t");
  EXPECT_EQ(Resource::Table("ks", "t").Display(), "<table ks.t>");
  EXPECT_EQ(*Resource::Table("ks", "t").Parent(), Resource::Keyspace("ks"));
  EXPECT_EQ(*Resource::Keyspace("ks").Parent(), Resource::AllKeyspaces());
  EXPECT_FALSE(Resource::AllKeyspaces().Parent().has_value());
  EXPECT_EQ(*Resource::Role("r").Parent(), Resource::AllRoles());
  for (const auto& r : {Resource::AllKeyspaces(), Resource::Keyspace("k"), Resource::Table("k", "t"),
                        Resource::AllRoles(), Resource::Role("r")}) {
    EXPECT_EQ(*Resource::FromName(r.Name()), r) << r.Name();
  }
  EXPECT_FALSE(Resource::FromName("functions/x").ok());
  EXPECT_FALSE(Resource::Table("k", "t").Applicable() & Bit(Permission::kCreate));
  EXPECT_FALSE(Resource::Role("r").Applicable() & Bit(Permission::kSelect));
  EXPECT_EQ(PermissionNames(Bit(Permission::kSelect) | Bit(Permission::kModify)),
            (std::vector<std::string>{"SELECT", "MODIFY"}));
}

TEST(PasswordHashTest, Argon2idSaltedAndVerified) {
  auto a = HashPassword("secret", kFuzzingHashCost);
  auto b = HashPassword("secret", kFuzzingHashCost);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->rfind("$argon2id$", 0), 0u);
  EXPECT_NE(*a, *b);  // salted
  EXPECT_EQ(a->find("secret"), std::string::npos);
  EXPECT_TRUE(VerifyPassword(*a, "secret"));
  EXPECT_FALSE(VerifyPassword(*a, "Secret"));
  EXPECT_FALSE(VerifyPassword("not a hash", "secret"));
  EXPECT_FALSE(VerifyPassword(DecoyHash(kFuzzingHashCost), ""));
}

TEST_F(AuthServiceTest, DefaultSuperuserOnFirstStartOnly) {
  ASSERT_EQ(store.roles.count("cassandra"), 1u);
  EXPECT_TRUE(store.roles["cassandra"].is_superuser);
  EXPECT_TRUE(auth->Login("cassandra", "cassandra", "a").ok());
  ASSERT_TRUE(auth->AlterRole("cassandra", "cassandra", RoleChanges{std::string("changed"), {}, {}, {}}).ok());
  ASSERT_TRUE(auth->Setup().ok());  // a restart does not bring the default password back
  EXPECT_FALSE(auth->Login("cassandra", "cassandra", "b").ok());
  EXPECT_TRUE(auth->Login("cassandra", "changed", "b").ok());
}

TEST_F(AuthServiceTest, SaslPlainLoginsAndTheirErrors) {
  ASSERT_TRUE(auth->CreateRole("cassandra", "alice", Login("pw"), false).ok());
  ASSERT_TRUE(auth->CreateRole("cassandra", "group", RoleChanges{std::string("pw"), false, {}, {}}, false).ok());
  EXPECT_EQ(*auth->Authenticate(std::string("\0alice\0pw", 9), "a"), "alice");
  EXPECT_EQ(*auth->Authenticate(std::string("authz\0alice\0pw", 14), "a"), "alice");  // authzid ignored
  auto wrong = auth->Authenticate(std::string("\0alice\0no", 9), "b");
  EXPECT_EQ(wrong.status().code(), Status::Code::kAuthenticationFailed);
  EXPECT_EQ(wrong.status().message(), "Provided username alice and/or password are incorrect");
  EXPECT_EQ(auth->Authenticate(std::string("\0ghost\0pw", 9), "c").status().message(),
            "Provided username ghost and/or password are incorrect");
  EXPECT_EQ(auth->Authenticate(std::string("\0group\0pw", 9), "c").status().message(), "group is not permitted to log in");
  EXPECT_FALSE(auth->Authenticate("no separators", "c").ok());
  // Found by fuzz/auth_fuzzer.cc: a user name that is not UTF-8 reached the
  // system_auth lookup and came back Invalid (0x2200) instead of Bad credentials.
  auto not_utf8 = auth->Authenticate(std::string("\0\xfclice\0pw", 9), "c");
  EXPECT_EQ(not_utf8.status().code(), Status::Code::kAuthenticationFailed);
  EXPECT_TRUE(IsValidUtf8(not_utf8.status().message()));
  EXPECT_FALSE(auth->Authenticate(std::string("\0\0pw", 4), "c").ok());
}

TEST_F(AuthServiceTest, FailedLoginsAreLimitedPerAddressWithinTheWindow) {
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(auth->Login("cassandra", "wrong", "10.0.0.1").ok());
  auto refused = auth->Login("cassandra", "cassandra", "10.0.0.1");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("Too many failed login attempts from 10.0.0.1"), std::string::npos);
  EXPECT_TRUE(auth->Login("cassandra", "cassandra", "10.0.0.2").ok());  // another address
  now += 61'000'000;
  EXPECT_TRUE(auth->Login("cassandra", "cassandra", "10.0.0.1").ok());
}

TEST_F(AuthServiceTest, PermissionsHoldOnDescendantsAndThroughGrantedRoles) {
  ASSERT_TRUE(auth->CreateRole("cassandra", "alice", Login("pw"), false).ok());
  ASSERT_TRUE(auth->CreateRole("cassandra", "readers", {}, false).ok());
  const auto table = Resource::Table("shop", "orders");
  auto denied = auth->Authorize("alice", Permission::kSelect, table);
  EXPECT_EQ(denied.code(), Status::Code::kUnauthorized);
  EXPECT_EQ(denied.message(), "User alice has no SELECT permission on <table shop.orders> or any of its parents");
  ASSERT_TRUE(auth->GrantPermissions("cassandra", Bit(Permission::kSelect), Resource::Keyspace("shop"), "readers").ok());
  EXPECT_FALSE(auth->Authorize("alice", Permission::kSelect, table).ok());
  ASSERT_TRUE(auth->GrantRole("cassandra", "readers", "alice").ok());
  EXPECT_TRUE(auth->Authorize("alice", Permission::kSelect, table).ok());
  EXPECT_FALSE(auth->Authorize("alice", Permission::kModify, table).ok());
  EXPECT_FALSE(auth->Authorize("alice", Permission::kSelect, Resource::Table("other", "t")).ok());
  EXPECT_TRUE(auth->Authorize("cassandra", Permission::kDrop, Resource::AllKeyspaces()).ok());  // superuser
  ASSERT_TRUE(auth->RevokeRole("cassandra", "readers", "alice").ok());
  EXPECT_FALSE(auth->Authorize("alice", Permission::kSelect, table).ok());
}

TEST_F(AuthServiceTest, CachedPermissionsLiveTheirValidity) {
  ASSERT_TRUE(auth->CreateRole("cassandra", "alice", Login("pw"), false).ok());
  ASSERT_TRUE(auth->GrantPermissions("cassandra", Bit(Permission::kSelect), Resource::AllKeyspaces(), "alice").ok());
  const auto table = Resource::Table("k", "t");
  EXPECT_TRUE(auth->Authorize("alice", Permission::kSelect, table).ok());
  // A revoke that does not go through this service (another node's) is seen
  // once the cached entry expires, and not before.
  store.grants.clear();
  now += 1'999'000;
  EXPECT_TRUE(auth->Authorize("alice", Permission::kSelect, table).ok());
  now += 2'000;
  EXPECT_FALSE(auth->Authorize("alice", Permission::kSelect, table).ok());
  // A change through the service is seen at once.
  ASSERT_TRUE(auth->GrantPermissions("cassandra", Bit(Permission::kSelect), table, "alice").ok());
  EXPECT_TRUE(auth->Authorize("alice", Permission::kSelect, table).ok());
  ASSERT_TRUE(auth->RevokePermissions("cassandra", Bit(Permission::kSelect), table, "alice").ok());
  EXPECT_FALSE(auth->Authorize("alice", Permission::kSelect, table).ok());
}

TEST_F(AuthServiceTest, RoleStatementsAreCheckedAsCassandraChecksThem) {
  ASSERT_TRUE(auth->CreateRole("cassandra", "alice", Login("pw"), false).ok());
  EXPECT_EQ(auth->CreateRole("cassandra", "alice", {}, false).message(), "alice already exists");
  EXPECT_TRUE(auth->CreateRole("cassandra", "alice", {}, true).ok());
  EXPECT_EQ(auth->CreateRole("alice", "bob", {}, false).code(), Status::Code::kUnauthorized);
  ASSERT_TRUE(auth->GrantPermissions("cassandra", Bit(Permission::kCreate), Resource::AllRoles(), "alice").ok());
  ASSERT_TRUE(auth->CreateRole("alice", "bob", Login("b"), false).ok());
  // The creator holds every permission on the new role.
  EXPECT_TRUE(auth->Authorize("alice", Permission::kAlter, Resource::Role("bob")).ok());
  RoleChanges super;
  super.superuser = true;
  EXPECT_EQ(auth->CreateRole("alice", "eve", super, false).message(),
            "Only superusers can create a role with superuser status");
  EXPECT_EQ(auth->AlterRole("alice", "alice", super).message(), "You aren't allowed to alter your own superuser status");
  EXPECT_TRUE(auth->AlterRole("bob", "bob", RoleChanges{std::string("new"), {}, {}, {}}).ok());  // own password
  EXPECT_EQ(auth->AlterRole("bob", "alice", RoleChanges{std::string("x"), {}, {}, {}}).code(), Status::Code::kUnauthorized);
  EXPECT_EQ(auth->DropRole("cassandra", "cassandra", false).message(), "Cannot DROP primary role for current login");
  // No cycles of granted roles.
  ASSERT_TRUE(auth->GrantRole("cassandra", "bob", "alice").ok());
  EXPECT_EQ(auth->GrantRole("cassandra", "alice", "bob").message(), "alice is a member of bob");
  EXPECT_EQ(auth->GrantRole("cassandra", "bob", "alice").message(), "alice is a member of bob");
  // Dropping a role takes it out of the roles it was granted to, and its grants go.
  ASSERT_TRUE(auth->DropRole("cassandra", "bob", false).ok());
  EXPECT_TRUE(store.roles["alice"].member_of.empty());
  EXPECT_EQ(auth->DropRole("cassandra", "bob", false).message(), "bob doesn't exist");
  EXPECT_TRUE(auth->DropRole("cassandra", "bob", true).ok());
  for (const auto& g : store.grants) EXPECT_NE(g.second.resource, Resource::Role("bob"));
}

TEST_F(AuthServiceTest, ListingRolesAndPermissions) {
  ASSERT_TRUE(auth->CreateRole("cassandra", "alice", Login("pw"), false).ok());
  ASSERT_TRUE(auth->CreateRole("cassandra", "readers", {}, false).ok());
  ASSERT_TRUE(auth->CreateRole("cassandra", "carol", Login("pw"), false).ok());
  ASSERT_TRUE(auth->GrantRole("cassandra", "readers", "alice").ok());
  EXPECT_EQ(auth->ListRoles("cassandra", std::nullopt, true)->size(), 4u);
  auto mine = auth->ListRoles("alice", std::nullopt, true);  // a plain role sees its own
  ASSERT_TRUE(mine.ok());
  ASSERT_EQ(mine->size(), 2u);
  EXPECT_EQ(auth->ListRoles("alice", std::string("carol"), true).status().code(), Status::Code::kUnauthorized);
  ASSERT_TRUE(auth->GrantPermissions("cassandra", Bit(Permission::kSelect), Resource::Keyspace("k"), "readers").ok());
  ASSERT_TRUE(auth->GrantPermissions("cassandra", Bit(Permission::kModify), Resource::Table("k", "t"), "alice").ok());
  auto rows = auth->ListPermissions("cassandra", kAllPermissions, Resource::Table("k", "t"), std::string("alice"), true);
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 2u);  // MODIFY on the table, SELECT on its keyspace through readers
  auto direct = auth->ListPermissions("cassandra", kAllPermissions, Resource::Table("k", "t"), std::string("alice"), false);
  ASSERT_EQ(direct->size(), 1u);
  EXPECT_EQ(direct->front().permission, Permission::kModify);
  EXPECT_EQ(auth->ListPermissions("carol", kAllPermissions, std::nullopt, std::nullopt, true).status().code(),
            Status::Code::kUnauthorized);
  EXPECT_EQ(auth->GrantPermissions("cassandra", Bit(Permission::kCreate), Resource::Table("k", "t"), "alice").code(),
            Status::Code::kInvalidArgument);
}

TEST(AuthServiceSetupTest, SuperuserStatusIsGuardedWithoutAnAuthorizer) {
  MemoryStore store;
  AuthOptions o;
  o.authentication = true;  // AllowAllAuthorizer: permissions are not checked, superuser status still is
  o.hash_cost = kFuzzingHashCost;
  AuthService auth(&store, o);
  ASSERT_TRUE(auth.Setup().ok());
  RoleChanges login;
  login.password = "pw";
  login.login = true;
  ASSERT_TRUE(auth.CreateRole("cassandra", "alice", login, false).ok());
  EXPECT_TRUE(auth.Authorize("alice", Permission::kDrop, Resource::AllKeyspaces()).ok());
  RoleChanges super;
  super.superuser = true;
  EXPECT_EQ(auth.AlterRole("alice", "alice", super).code(), Status::Code::kUnauthorized);
  EXPECT_EQ(auth.CreateRole("alice", "eve", super, false).code(), Status::Code::kUnauthorized);
  EXPECT_EQ(auth.DropRole("alice", "cassandra", false).code(), Status::Code::kUnauthorized);
  EXPECT_TRUE(auth.CreateRole("alice", "bob", login, false).ok());
}

TEST(AuthServiceSetupTest, AuthorizerNeedsAnAuthenticator) {
  MemoryStore store;
  AuthOptions o;
  o.authorization = true;
  AuthService auth(&store, o);
  EXPECT_FALSE(auth.Setup().ok());
}

}  // namespace
}  // namespace tessera::auth
