// CREATE / ALTER / DROP ROLE and USER, GRANT and REVOKE (roles and
// permissions), LIST ROLES / USERS / permissions — Cassandra 4's grammar
// (cql3/Cql.g: createRoleStatement, grantPermissionsStatement, ...).
#include "cql/parser/parser_core.h"

#include <algorithm>

namespace tessera::cql::internal {
namespace {

constexpr const char* kPermissionWords[] = {"create", "alter", "drop", "select", "modify", "authorize", "describe"};

bool IsPermissionWord(const Token& t) {
  if (t.kind != TokenKind::kIdentifier) return false;
  return std::any_of(std::begin(kPermissionWords), std::end(kPermissionWords), [&](const char* w) { return t.text == w; });
}

}  // namespace

bool ParserCore::AtRoleStatement() const {
  return (AtKeyword("create") || AtKeyword("alter") || AtKeyword("drop")) && (AtKeyword("role", 1) || AtKeyword("user", 1));
}

// A role name: an identifier (lower-cased unless "quoted") or a 'string'.
Status ParserCore::RoleName(std::string* out) {
  const Token& t = Peek();
  if (t.kind == TokenKind::kString || t.kind == TokenKind::kQuotedIdentifier || t.kind == TokenKind::kIdentifier) {
    *out = Next().text;
    return Status::OK();
  }
  return Unexpected("a role name");
}

Status ParserCore::ParseRoleOptions(RoleOptions* out, bool user_form) {
  if (user_form) {
    // CREATE / ALTER USER name [WITH PASSWORD 'p'] [SUPERUSER | NOSUPERUSER]
    if (AcceptKeyword("with")) {
      TESSERA_RETURN_IF_ERROR(ExpectKeyword("password"));
      if (Peek().kind != TokenKind::kString) return Unexpected("a password string");
      out->password = Next().text;
    }
    if (AcceptKeyword("superuser")) out->superuser = true;
    else if (AcceptKeyword("nosuperuser")) out->superuser = false;
    return Status::OK();
  }
  if (!AcceptKeyword("with")) return Status::OK();
  do {
    const Token& name = Peek();
    if (name.kind != TokenKind::kIdentifier) return Unexpected("PASSWORD, LOGIN, SUPERUSER or OPTIONS");
    const std::string option = Next().text;
    TESSERA_RETURN_IF_ERROR(ExpectPunct("="));
    if (option == "password") {
      if (Peek().kind != TokenKind::kString) return Unexpected("a password string");
      out->password = Next().text;
    } else if (option == "login" || option == "superuser") {
      bool value;
      if (AcceptKeyword("true")) value = true;
      else if (AcceptKeyword("false")) value = false;
      else return Unexpected("true or false");
      (option == "login" ? out->login : out->superuser) = value;
    } else if (option == "options") {
      TESSERA_RETURN_IF_ERROR(ExpectPunct("{"));
      out->options.emplace();
      if (!AcceptPunct("}")) {
        do {
          if (Peek().kind != TokenKind::kString) return Unexpected("an option name string");
          std::string key = Next().text;
          TESSERA_RETURN_IF_ERROR(ExpectPunct(":"));
          if (Peek().kind != TokenKind::kString) return Unexpected("an option value string");
          out->options->emplace_back(key, Next().text);
        } while (AcceptPunct(","));
        TESSERA_RETURN_IF_ERROR(ExpectPunct("}"));
      }
    } else {
      return Status::SyntaxError("line " + std::to_string(name.position.line) + ":" +
                                 std::to_string(name.position.column) + " unknown role option " + name.raw);
    }
  } while (AcceptKeyword("and"));
  return Status::OK();
}

Status ParserCore::ParseCreateRole(RawStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("create"));
  const bool user_form = AcceptKeyword("user");
  if (!user_form) TESSERA_RETURN_IF_ERROR(ExpectKeyword("role"));
  CreateRoleStatement s;
  TESSERA_RETURN_IF_ERROR(ParseIfNotExists(&s.if_not_exists));
  TESSERA_RETURN_IF_ERROR(RoleName(&s.role));
  TESSERA_RETURN_IF_ERROR(ParseRoleOptions(&s.options, user_form));
  if (user_form) {
    s.options.login = true;  // a user is a role that can log in
    if (!s.options.superuser) s.options.superuser = false;
  }
  *out = std::move(s);
  return Status::OK();
}

Status ParserCore::ParseAlterRole(RawStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("alter"));
  const bool user_form = AcceptKeyword("user");
  if (!user_form) TESSERA_RETURN_IF_ERROR(ExpectKeyword("role"));
  AlterRoleStatement s;
  TESSERA_RETURN_IF_ERROR(RoleName(&s.role));
  TESSERA_RETURN_IF_ERROR(ParseRoleOptions(&s.options, user_form));
  *out = std::move(s);
  return Status::OK();
}

Status ParserCore::ParseDropRole(RawStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("drop"));
  if (!AcceptKeyword("user")) TESSERA_RETURN_IF_ERROR(ExpectKeyword("role"));
  DropRoleStatement s;
  if (AcceptKeyword("if")) {
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("exists"));
    s.if_exists = true;
  }
  TESSERA_RETURN_IF_ERROR(RoleName(&s.role));
  *out = std::move(s);
  return Status::OK();
}

// ALL [PERMISSIONS] | perm [PERMISSION] (one permission per statement, as Cassandra's grammar).
Status ParserCore::ParsePermissions(std::vector<std::string>* out) {
  if (AcceptKeyword("all")) {
    AcceptKeyword("permissions");
    return Status::OK();
  }
  if (!IsPermissionWord(Peek())) return Unexpected("a permission (ALL, CREATE, ALTER, DROP, SELECT, MODIFY, AUTHORIZE, DESCRIBE)");
  out->push_back(Next().text);
  AcceptKeyword("permission");
  return Status::OK();
}

Status ParserCore::ParseResource(ResourceName* out) {
  if (AtKeyword("all") && AtKeyword("keyspaces", 1)) {
    Next();
    Next();
    out->kind = ResourceName::Kind::kAllKeyspaces;
    return Status::OK();
  }
  if (AtKeyword("all") && AtKeyword("roles", 1)) {
    Next();
    Next();
    out->kind = ResourceName::Kind::kAllRoles;
    return Status::OK();
  }
  if (AcceptKeyword("keyspace")) {
    out->kind = ResourceName::Kind::kKeyspace;
    return Identifier(&out->name.name, "a keyspace name");
  }
  if (AcceptKeyword("role")) {
    out->kind = ResourceName::Kind::kRole;
    return RoleName(&out->name.name);
  }
  if (!AcceptKeyword("table")) AcceptKeyword("columnfamily");
  out->kind = ResourceName::Kind::kTable;
  return QualifiedTableName(&out->name);
}

Status ParserCore::ParseGrantOrRevoke(RawStatement* out) {
  const bool revoke = AtKeyword("revoke");
  Next();
  const char* to = revoke ? "from" : "to";
  // GRANT <permission> ON ... or GRANT <role> TO ...: a permission is
  // followed by ON, PERMISSION or PERMISSIONS; a role name by TO / FROM.
  const bool permission_form = (IsPermissionWord(Peek()) || AtKeyword("all")) && !AtKeyword(to, 1);
  if (permission_form) {
    PermissionStatement s;
    s.revoke = revoke;
    TESSERA_RETURN_IF_ERROR(ParsePermissions(&s.permissions));
    TESSERA_RETURN_IF_ERROR(ExpectKeyword("on"));
    TESSERA_RETURN_IF_ERROR(ParseResource(&s.resource));
    TESSERA_RETURN_IF_ERROR(ExpectKeyword(to));
    TESSERA_RETURN_IF_ERROR(RoleName(&s.role));
    *out = std::move(s);
    return Status::OK();
  }
  GrantRoleStatement s;
  s.revoke = revoke;
  TESSERA_RETURN_IF_ERROR(RoleName(&s.role));
  TESSERA_RETURN_IF_ERROR(ExpectKeyword(to));
  TESSERA_RETURN_IF_ERROR(RoleName(&s.grantee));
  *out = std::move(s);
  return Status::OK();
}

Status ParserCore::ParseList(RawStatement* out) {
  TESSERA_RETURN_IF_ERROR(ExpectKeyword("list"));
  if (AcceptKeyword("roles") || AtKeyword("users")) {
    ListRolesStatement s;
    s.users_form = AcceptKeyword("users");
    if (!s.users_form && AcceptKeyword("of")) {
      s.of.emplace();
      TESSERA_RETURN_IF_ERROR(RoleName(&*s.of));
    }
    if (!s.users_form && AcceptKeyword("norecursive")) s.recursive = false;
    *out = std::move(s);
    return Status::OK();
  }
  ListPermissionsStatement s;
  TESSERA_RETURN_IF_ERROR(ParsePermissions(&s.permissions));
  if (AcceptKeyword("on")) {
    s.resource.emplace();
    TESSERA_RETURN_IF_ERROR(ParseResource(&*s.resource));
  }
  if (AcceptKeyword("of")) {
    s.of.emplace();
    TESSERA_RETURN_IF_ERROR(RoleName(&*s.of));
  }
  if (AcceptKeyword("norecursive")) s.recursive = false;
  *out = std::move(s);
  return Status::OK();
}

}  // namespace tessera::cql::internal
