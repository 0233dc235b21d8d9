#include "auth/basic_credentials.h"

#include <sodium.h>

#include <vector>

namespace tessera::auth {

Result<std::pair<std::string, std::string>> ParseBasicAuthorization(const std::string& header) {
  const std::string prefix = "Basic ";
  if (header.size() <= prefix.size() || header.compare(0, prefix.size(), prefix) != 0) {
    return Status::AuthenticationFailed("credentials required (HTTP Basic)");
  }
  const std::string encoded = header.substr(prefix.size());
  std::vector<unsigned char> decoded(encoded.size());
  size_t length = 0;
  if (sodium_init() < 0 ||
      sodium_base642bin(decoded.data(), decoded.size(), encoded.data(), encoded.size(), nullptr, &length, nullptr,
                        sodium_base64_VARIANT_ORIGINAL) != 0) {
    return Status::AuthenticationFailed("malformed HTTP Basic credentials");
  }
  std::string text(reinterpret_cast<const char*>(decoded.data()), length);
  size_t colon = text.find(':');
  if (colon == std::string::npos) return Status::AuthenticationFailed("malformed HTTP Basic credentials");
  return std::make_pair(text.substr(0, colon), text.substr(colon + 1));
}

}  // namespace tessera::auth
