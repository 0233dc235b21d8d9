// CqlServer: the CQL native protocol v4 listener.
//
// Per connection: frames are read and decoded (cql/protocol); STARTUP
// (CQL_VERSION, COMPRESSION lz4|snappy, other options ignored), OPTIONS
// (SUPPORTED) and REGISTER are answered here; QUERY, PREPARE, EXECUTE, BATCH
// and AUTH_RESPONSE go to the RequestProcessor. Every reply carries its
// request's stream id. After STARTUP negotiated compression, every frame but
// READY is compressed both ways.
//
// Errors on the wire (native protocol v4 §9, and what drivers expect —
// shared reference cql-driver-requirements.md):
//  - a frame of another protocol version (the drivers' 0x42 and 5 probes):
//    ERROR 0x000A "Invalid or unsupported protocol version (N); supported
//    versions are (4/v4)" on the same stream, then the connection closes;
//  - a malformed frame or body, or a request before STARTUP: ERROR 0x000A,
//    then that connection (only) closes; other connections carry on.
//
// Threads: an asio io_context run by `threads` threads. Requests of one
// connection are handled in arrival order on that connection's strand;
// different connections run in parallel.
//
// Thread safety: Start/Stop from one thread; BroadcastSchemaChange and the
// accessors from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "cql/protocol/responses.h"
#include "cql/protocol/request_processor.h"

namespace tessera::server {

struct CqlServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 9042;      // 0: any free port (tests)
  int threads = 2;
  std::string cql_version = "3.4.5";
};

class CqlServer {
 public:
  // REQUIRES: processor outlives the server.
  CqlServer(CqlServerOptions options, cql::RequestProcessor* processor);
  ~CqlServer();  // Stop()

  // Binds and starts serving. Errors: IOError (address in use, bad address).
  Status Start();
  // Stops accepting, closes every connection and joins the threads. Idempotent.
  void Stop();
  uint16_t port() const;
  size_t connection_count() const;
  // Sends an EVENT SCHEMA_CHANGE (stream -1) to connections that REGISTERed for it.
  void BroadcastSchemaChange(const cql::SchemaChange& change);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::server
