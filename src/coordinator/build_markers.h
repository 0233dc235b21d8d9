// The meta keys (storage/storage_engine.h MetaPut) that record an index or
// view build not finished yet, so that a restarted node resumes it
// (Coordinator::Start). FROZEN: a node reads the markers an older release
// wrote. Value: the base table's name.
#pragma once

#include <string>

namespace tessera::build_markers {

inline constexpr const char* kIndexPrefix = "index_build/";  // FROZEN
inline constexpr const char* kViewPrefix = "view_build/";    // FROZEN

inline std::string IndexKey(const std::string& keyspace, const std::string& index) {
  return kIndexPrefix + keyspace + "/" + index;
}

inline std::string ViewKey(const std::string& keyspace, const std::string& view) {
  return kViewPrefix + keyspace + "/" + view;
}

}  // namespace tessera::build_markers
