// `tessera server`: opens the embedded single-node database, serves CQL
// (native protocol v4) on the listen address until SIGINT or SIGTERM, then
// stops the listener and closes the database cleanly.
#pragma once

#include <string>

namespace tessera {

struct ServerConfig {
  std::string data_dir = "./data";
  std::string listen = "127.0.0.1:9042";  // address:port of the CQL listener
  bool exit_after_start = false;  // open, report, close: used by tests
};

// Returns the process exit code (0 on clean shutdown).
int RunServer(const ServerConfig& config);

}  // namespace tessera
