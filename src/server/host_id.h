// The node's host id: a random (version 4) uuid made at the first start and
// kept in <data_dir>/HOST_ID as its text form (frozen on disk), so that the
// node keeps its identity in system.local and in the cluster across restarts.
//
// Errors: IOError when the file cannot be read or written; Corruption when
// it does not hold a uuid.
#pragma once

#include <string>

#include "common/status.h"

namespace tessera::server {

// Returns the 16 bytes. REQUIRES: data_dir exists.
Result<std::string> LoadOrCreateHostId(const std::string& data_dir);

}  // namespace tessera::server
