// `tessera server`: opens the embedded single-node database and serves until
// SIGINT or SIGTERM, then closes it cleanly (memtables stay recoverable from
// the WAL). The CQL listener arrives with the CQL front-door issue; until
// then the server hosts the storage core and reports its state.
#pragma once

#include <string>

namespace tessera {

struct ServerConfig {
  std::string data_dir = "./data";
  bool exit_after_start = false;  // open, report, close: used by tests
};

// Returns the process exit code (0 on clean shutdown).
int RunServer(const ServerConfig& config);

}  // namespace tessera
