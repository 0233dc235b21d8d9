#include "auth/password_hash.h"

#include <sodium.h>

#include <map>
#include <mutex>
#include <utility>

namespace tessera::auth {
namespace {

bool Initialised() {
  static const bool ok = sodium_init() >= 0;
  return ok;
}

}  // namespace

Result<std::string> HashPassword(const std::string& password, PasswordHashCost cost) {
  if (!Initialised()) return Status::IOError("libsodium failed to initialise");
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, password.data(), password.size(), cost.passes, cost.memory_bytes) != 0) {
    return Status::IOError("password hashing ran out of memory");
  }
  return std::string(out);
}

bool VerifyPassword(const std::string& hash, const std::string& password) {
  if (!Initialised() || hash.empty() || hash.size() >= crypto_pwhash_STRBYTES) return false;
  return crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
}

std::string DecoyHash(PasswordHashCost cost) {
  static std::mutex mu;
  static std::map<std::pair<unsigned long long, size_t>, std::string> decoys;
  std::lock_guard<std::mutex> lock(mu);
  std::string& decoy = decoys[{cost.passes, cost.memory_bytes}];
  if (decoy.empty()) {
    unsigned char random[16];
    if (Initialised()) randombytes_buf(random, sizeof random);
    auto h = HashPassword(std::string(reinterpret_cast<const char*>(random), sizeof random), cost);
    if (h.ok()) decoy = *h;
  }
  return decoy;
}

}  // namespace tessera::auth
