// The keyspaces Cassandra reserves for itself: system, system_schema,
// system_auth, system_distributed, system_traces, and 4.0's virtual
// system_views and system_virtual_schema. Users cannot modify them
// (access_control), DESCRIBE leaves them out unless asked (describe), and USE
// takes them although the catalog holds only some (query_processor).
//
// Thread safety: pure function.
#pragma once

#include <string_view>

namespace tessera::cql {

inline bool IsSystemKeyspace(std::string_view ks) {
  return ks == "system" || ks == "system_schema" || ks == "system_auth" || ks == "system_views" ||
         ks == "system_virtual_schema" || ks == "system_distributed" || ks == "system_traces";
}

}  // namespace tessera::cql
