// InternodeServer: this node's gRPC listener for internode requests
// (cluster/proto/internode.proto): other nodes, coordinating a client
// request, apply writes to and read key ranges and keys from the replicas
// this node holds. Tables are named by uuid and mapped to this node's table
// id; a table this node does not know (yet) is NOT_FOUND, so the
// coordinator counts no answer from it.
//
// Runs on gRPC's own threads, never on the CQL listener's, so a node
// waiting for a replica never blocks the replica's serving of it: gRPC's
// callback API, each request served inline on the gRPC thread that read it
// (a memtable write, a point or short range read) and answered there. Start
// binds `address:port` (port 0: any free one, see port()); Stop shuts down
// (in-flight calls get 1 s) and is explicit; the destructor calls it.
//
// With TLS material (internode_tls.h) the listener speaks only TLS and, with
// require_client_auth, refuses peers without a certificate from its CA.
//
// Errors from Start: IOError when the address cannot be bound.
// Thread safety: Start/Stop from one thread; counters from any.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "cluster/internode_tls.h"
#include "common/status.h"

namespace tessera {
class Database;
}

namespace tessera::cluster {

class InternodeServer {
 public:
  explicit InternodeServer(Database* db);
  ~InternodeServer();
  // tls: nullptr for plaintext; else the listener speaks only TLS
  // (internode_tls.h), and with require_client_auth refuses peers without a
  // certificate signed by its CA.
  Status Start(const std::string& address, uint16_t port, const InternodeTlsMaterial* tls = nullptr);
  void Stop();
  uint16_t port() const { return port_; }
  // Requests served and bytes of their payloads (writes and values returned).
  uint64_t requests_served() const;
  uint64_t bytes_served() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
};

}  // namespace tessera::cluster
