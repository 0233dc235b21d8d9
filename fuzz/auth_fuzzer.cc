// libFuzzer target: the AUTH_RESPONSE path and the role and permission
// statements, behind QueryProcessor with PasswordAuthenticator and
// CassandraAuthorizer over system_auth in an in-process database. Argon2id
// runs at libsodium's minimum cost here (kFuzzingHashCost) so that
// thousands of logins a second are tried; the server uses OWASP's.
//
// Input: the bytes up to the first newline are an AUTH_RESPONSE body as it
// arrives in a frame (decoded by cql/protocol/requests.h); every further
// line (at most 16) is a CQL statement run as the role that logged in, or,
// when the login failed, as the role the first byte picks (the superuser
// cassandra or the plain role alice). Properties:
//  - no crash, no hang, no sanitizer report;
//  - the login answers AUTH_SUCCESS or ERROR Bad credentials (0x0100), and
//    AUTH_SUCCESS only when the token's password verifies against the
//    role's stored hash and the role may log in;
//  - every statement's reply decodes and is never ServerError (0x0000).
// Before each input, cassandra and alice are put back as they started.
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "auth/auth_service.h"
#include "auth/password_hash.h"
#include "cql/executor/query_processor.h"
#include "cql/executor/system_auth_store.h"
#include "cql/protocol/requests.h"
#include "cql/protocol/response_decoding.h"
#include "db/database.h"
#include "fuzz/fuzz_support.h"

namespace {

using namespace tessera;
using namespace tessera::cql;

struct Harness {
  std::unique_ptr<Database> db;
  std::unique_ptr<Coordinator> coordinator;  // above db: the processors write through it
  std::unique_ptr<SystemAuthStore> store;
  std::unique_ptr<auth::AuthService> auth;
  std::unique_ptr<QueryProcessor> processor;
  auth::RoleRecord cassandra, alice;
  uint64_t inputs = 0;
};

Harness* harness = nullptr;

// AUTH_SUCCESS only for a token whose password the stored hash accepts.
void CheckLogin(const std::optional<std::string>& token, const DecodedResponse& r) {
  if (r.is_error()) {
    if (r.error_code != 0x0100) {
      fprintf(stderr, "login failed with 0x%04x, not Bad credentials: %s\n", r.error_code, r.error_message.c_str());
      abort();
    }
    return;
  }
  if (r.opcode != Opcode::kAuthSuccess || !token) abort();
  const size_t a = token->find('\0');
  const size_t b = token->find('\0', a + 1);
  if (a == std::string::npos || b == std::string::npos) abort();
  auto role = harness->store->GetRole(token->substr(a + 1, b - a - 1));
  if (!role.ok() || !*role || !(*role)->can_login || !auth::VerifyPassword((*role)->salted_hash, token->substr(b + 1))) {
    fprintf(stderr, "AUTH_SUCCESS for a token that should fail\n");
    abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  harness = new Harness;
  harness->db = fuzz::OpenScratchDatabase("auth_fuzz");
  harness->coordinator = std::make_unique<Coordinator>(harness->db.get());
  harness->store = std::make_unique<SystemAuthStore>(harness->coordinator.get());
  if (!harness->store->CreateSchema().ok()) abort();
  auth::AuthOptions ao;
  ao.authentication = ao.authorization = true;
  ao.max_failed_logins = 0;
  ao.hash_cost = auth::kFuzzingHashCost;
  harness->auth = std::make_unique<auth::AuthService>(harness->store.get(), ao);
  if (!harness->auth->Setup().ok()) abort();
  harness->cassandra = **harness->store->GetRole("cassandra");
  harness->alice.name = "alice";
  harness->alice.can_login = true;
  harness->alice.salted_hash = *auth::HashPassword("alice-pw", auth::kFuzzingHashCost);
  NodeInfo node;
  node.rpc_address = "127.0.0.1";
  harness->processor = std::make_unique<QueryProcessor>(harness->coordinator.get(), node, nullptr, harness->auth.get());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // Every input rewrites a few rows; compacting now and then folds their merge operands.
  if (++harness->inputs % 200 == 0 && !harness->db->Compact().ok()) abort();
  // Start from the two roles and no grants: nothing carried over from earlier inputs.
  auto& store = *harness->store;
  auto roles = store.ListRoles();
  auto grants = store.ListPermissions();
  if (!roles.ok() || !grants.ok()) abort();
  for (const auto& r : *roles) {
    if (r.name != "cassandra" && r.name != "alice" && !store.DeleteRole(r.name).ok()) abort();
  }
  for (const auto& g : *grants) {
    if (!store.PutPermissions(auth::PermissionGrant{g.role, g.resource, 0}).ok()) abort();
  }
  // Rewritten only when an input changed them: every write of a row is one
  // more merge operand that each later read of it reconciles.
  for (const auth::RoleRecord* want : {&harness->cassandra, &harness->alice}) {
    auto now = store.GetRole(want->name);
    if (!now.ok()) abort();
    const auto& r = *now;
    if (r && r->can_login == want->can_login && r->is_superuser == want->is_superuser &&
        r->member_of == want->member_of && r->salted_hash == want->salted_hash && r->options == want->options) {
      continue;
    }
    if (!store.PutRole(*want).ok()) abort();
  }

  size_t newline = input.find('\n');
  std::string_view body = input.substr(0, newline);
  ConnectionState conn("127.0.0." + std::to_string(size % 7));
  auto request = DecodeRequest(static_cast<uint8_t>(Opcode::kAuthResponse), body, kProtocolV4);
  if (request.ok()) {
    const auto& auth_response = std::get<AuthResponseRequest>(*request);
    CheckLogin(auth_response.token, fuzz::DecodeReplyOrAbort(harness->processor->Process(conn, *request, {})));
  }
  if (conn.user().empty()) conn.set_user(!input.empty() && (input[0] & 1) ? "cassandra" : "alice");
  size_t start = newline == std::string_view::npos ? input.size() : newline + 1;
  for (int n = 0; n < 16 && start < input.size(); ++n) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    std::string statement(input.substr(start, end - start));
    start = end + 1;
    fuzz::DecodeReplyOrAbort(harness->processor->Process(conn, QueryRequest{statement, {}}, {}));
  }
  return 0;
}
