// HTTP Basic credentials (RFC 7617): "Basic base64(user:password)" from an
// Authorization header, decoded with libsodium's base64.
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <utility>

#include "common/status.h"

namespace tessera::auth {

// Returns {user, password}. Errors: AuthenticationFailed for a header that
// is not Basic, not base64, or has no ':'.
Result<std::pair<std::string, std::string>> ParseBasicAuthorization(const std::string& header);

}  // namespace tessera::auth
