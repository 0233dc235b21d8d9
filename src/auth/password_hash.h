// Password hashing with libsodium's Argon2id (crypto_pwhash_str): the
// stored string carries the algorithm, its parameters and a random salt
// ("$argon2id$v=19$m=19456,t=2,p=1$..."), so hashes made with other
// parameters still verify. Parameters: OWASP's Argon2id minimum (19 MiB,
// 2 passes, 1 lane): a check took 50-70 ms on the 2-vCPU test machine
// (bench/RESULTS.md). Passwords are never stored or logged in clear.
//
// Thread safety: all functions are thread-safe (libsodium is initialised
// once, on first use).
#pragma once

#include <string>

#include "common/status.h"

namespace tessera::auth {

// Argon2id's cost. kDefaultHashCost is OWASP's minimum; kFuzzingHashCost
// is libsodium's minimum, for fuzzers only (thousands of logins a second).
struct PasswordHashCost {
  unsigned long long passes = 2;
  size_t memory_bytes = 19 * 1024 * 1024;
};
inline constexpr PasswordHashCost kDefaultHashCost{};
inline constexpr PasswordHashCost kFuzzingHashCost{1, 8 * 1024};

// A new salted hash of `password` (about 100 ASCII bytes). Errors: IOError
// when libsodium cannot initialise or allocate its working memory.
Result<std::string> HashPassword(const std::string& password, PasswordHashCost cost = kDefaultHashCost);

// True when `password` matches `hash` (a HashPassword result). False for a
// wrong password and for a malformed hash. Takes the hash's full cost either way.
bool VerifyPassword(const std::string& hash, const std::string& password);

// A fixed hash of a random password, made once per process: checking a
// login for a role that does not exist against it costs what a real check
// costs, so the time of a failed login does not tell whether the role exists.
// One per cost, made on first use.
std::string DecoyHash(PasswordHashCost cost = kDefaultHashCost);

}  // namespace tessera::auth
