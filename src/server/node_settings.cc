#include "server/node_settings.h"

#include <algorithm>

#include "server/node.h"
#include "storage/storage_engine.h"

namespace tessera::server {

std::vector<std::pair<std::string, std::string>> NodeSettings(const NodeOptions& options, const StorageEngine& engine) {
  auto settings = engine.Settings();
  settings.emplace_back("native_transport_address", options.cql_address);
  settings.emplace_back("native_transport_port", std::to_string(options.cql_port));
  settings.emplace_back("request_threads", std::to_string(options.request_threads));
  settings.emplace_back("waiting_request_threads", std::to_string(options.waiting_request_threads));
  settings.emplace_back("data_file_directories", options.database.data_dir);
  settings.emplace_back("enable_user_defined_functions", options.enable_user_defined_functions ? "true" : "false");
  std::sort(settings.begin(), settings.end());
  return settings;
}

}  // namespace tessera::server
