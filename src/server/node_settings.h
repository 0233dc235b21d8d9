// The settings a node runs with, as Cassandra's system_views.settings shows
// them: (name, value) texts, one per setting, in name order. The storage
// engine's (StorageEngine::Settings: commitlog_sync and its period or window,
// block cache, bloom filters, ...) and the node's own (native transport,
// request threads). Shown by system_views.settings and GET /settings on the
// admin port.
//
// Thread safety: pure function.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tessera {
class StorageEngine;
}

namespace tessera::server {

struct NodeOptions;

std::vector<std::pair<std::string, std::string>> NodeSettings(const NodeOptions& options, const StorageEngine& engine);

}  // namespace tessera::server
