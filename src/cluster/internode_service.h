// InternodeServer: this node's gRPC listener for internode requests
// (cluster/proto/internode.proto): other nodes, coordinating a client
// request, apply writes to and read key ranges and keys from the replicas
// this node holds, through its ReplicaService (cluster/replica_service.h),
// which also counts what it served.
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
// Thread safety: Start/Stop from one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "cluster/internode_tls.h"
#include "common/status.h"

namespace tessera::cluster {

class ReplicaService;

class InternodeServer {
 public:
  // REQUIRES: replica outlives this object.
  explicit InternodeServer(ReplicaService* replica);
  ~InternodeServer();
  // tls: nullptr for plaintext; else the listener speaks only TLS
  // (internode_tls.h), and with require_client_auth refuses peers without a
  // certificate signed by its CA.
  Status Start(const std::string& address, uint16_t port, const InternodeTlsMaterial* tls = nullptr);
  void Stop();
  uint16_t port() const { return port_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
};

}  // namespace tessera::cluster
