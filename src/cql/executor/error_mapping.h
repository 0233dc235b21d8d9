// The one table that maps internal Status codes to CQL error codes
// (native protocol v4 §9), as Cassandra reports the same conditions:
//   SyntaxError      -> 0x2000 Syntax error
//   InvalidArgument  -> 0x2200 Invalid (bad value, bad restriction, ...)
//   NotFound         -> 0x2200 Invalid ("unconfigured table t", unknown keyspace)
//   AlreadyExists    -> 0x2400 Already exists (keyspace / table filled in by the caller)
//   Busy             -> 0x1001 Overloaded (drivers retry on another host)
//   Unauthorized     -> 0x2100 Unauthorized ("User u has no SELECT permission on <table k.t> ...")
//   AuthenticationFailed -> 0x0100 Bad credentials ("Provided username u and/or password are incorrect")
//   Unavailable      -> 0x1000 Unavailable (consistency, required, alive from Status::shortfall())
//   WriteTimeout     -> 0x1100 Write timeout (consistency, received, blockfor, write type)
//   ReadTimeout      -> 0x1200 Read timeout (consistency, received, blockfor, data_present)
//   FunctionFailure  -> 0x1400 Function failure (keyspace, function, argument types)
//   Corruption, IOError, anything else -> 0x0000 Server error
//
// Thread safety: pure function.
#pragma once

#include "common/status.h"
#include "cql/protocol/responses.h"

namespace tessera::cql {

// REQUIRES: !status.ok().
ErrorResponse ToErrorResponse(const Status& status);

}  // namespace tessera::cql
