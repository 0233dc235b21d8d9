// The seam between the CQL server (connections, frames) and statement
// execution: the server decodes frames and handles the connection-level
// messages (STARTUP, OPTIONS, REGISTER) itself; everything else goes to a
// RequestProcessor.
//
// Thread safety: Process may be called concurrently for different
// connections; calls for one connection may also overlap (many streams in
// flight), so implementations must be thread-safe.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "cql/protocol/frame.h"
#include "cql/protocol/requests.h"

namespace tessera::server {

// Per-connection state shared with the processor.
class ConnectionState {
 public:
  std::string keyspace() const {
    std::lock_guard<std::mutex> lock(mu_);
    return keyspace_;
  }
  void set_keyspace(std::string ks) {
    std::lock_guard<std::mutex> lock(mu_);
    keyspace_ = std::move(ks);
  }

 private:
  mutable std::mutex mu_;
  std::string keyspace_;  // USE ks
};

struct Reply {
  cql::Opcode opcode = cql::Opcode::kResult;
  std::string body;
  std::vector<std::string> warnings;  // sent with the Warning flag (§2.2)
};

class RequestProcessor {
 public:
  virtual ~RequestProcessor() = default;
  // QUERY, PREPARE, EXECUTE, BATCH or AUTH_RESPONSE. Never throws; errors are
  // ERROR replies.
  virtual Reply Process(ConnectionState& connection, const cql::Request& request) = 0;
};

}  // namespace tessera::server
