// CqlServer: the CQL native protocol v4 listener.
//
// Per connection: frames are read and decoded (cql/protocol); STARTUP
// (CQL_VERSION, COMPRESSION lz4|snappy, other options ignored), OPTIONS
// (SUPPORTED) and REGISTER are answered here; QUERY, PREPARE, EXECUTE, BATCH
// and AUTH_RESPONSE go to the RequestProcessor. Every reply carries its
// request's stream id. After STARTUP negotiated compression, every frame but
// READY and AUTHENTICATE is compressed both ways.
//
// Authentication (native protocol v4 §4.2.3): when the processor names an
// authenticator, STARTUP is answered AUTHENTICATE and the connection takes
// only AUTH_RESPONSE (and OPTIONS) until one succeeds; anything else is a
// protocol error.
//
// TLS (options.tls): the handshake comes first; with `optional`, a
// connection whose first byte is not a TLS handshake record (0x16) stays
// plaintext. A failed handshake (a plaintext client on a TLS-only port, a
// client without the certificate require_client_auth wants) closes the
// connection.
//
// Limits (options.limits, connection_limits.h): a connection past the total
// or per-address bound is closed at once; a request past the in-flight bound
// of its connection or of the server is answered ERROR Overloaded 0x1001 and
// not run. A connection's buffers go back to the allocator when it closes.
//
// Errors on the wire (native protocol v4 §9, and what drivers expect —
// shared reference cql-driver-requirements.md):
//  - a frame of another protocol version (the drivers' 0x42 and 5 probes):
//    ERROR 0x000A "Invalid or unsupported protocol version (N); supported
//    versions are (4/v4)" on the same stream, then the connection closes;
//  - a malformed frame or body, or a request before STARTUP: ERROR 0x000A,
//    then that connection (only) closes; other connections carry on.
//
// Threads: an asio io_context run by max(threads, request_threads) threads
// reads, decodes and writes, each connection on its strand. With
// request_threads > 0, QUERY, PREPARE, EXECUTE and BATCH run off the strand,
// on the same threads: the requests of one connection run concurrently and
// each reply goes out as soon as its request completes, by stream id and so
// out of order (native protocol v4 §2.3, as Cassandra and ScyllaDB answer);
// a request held up (a slow replica, a failpoint) holds one thread, never its
// connection. request_threads = 0 runs them inline on the connection's strand,
// in arrival order (the former behaviour). The default is one thread per core:
// 8 threads on 2 cores cost 35-40% of point-read throughput (contention and
// task switching), 2 measured on par with inline execution (bench/RESULTS.md).
// On a cluster, writes (counter increments, writes with index entries or
// view rows, lightweight transactions among them), row reads, slices, scans,
// GROUP BY and SERIAL reads answer from the thread of the replica answer that
// completes them; the requests that still wait for replicas on their thread
// (ANN searches, GROUP BY through an index, reads of tables with buckets, a
// list operation's read before its write) hold one of these threads,
// unless waiting_threads > 0: then a request the processor says may wait
// (RequestProcessor::MayWait: all but the EXECUTEs of statements whose runs
// answered from replica answers) runs on waiting_threads threads of its
// own, and request_threads can stay at one per core (bench/RESULTS.md:
// 8 threads on 2 cores cost the cluster's writes 5-30%).
//
// Thread safety: Start/Stop from one thread; BroadcastSchemaChange and the
// accessors from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/latency_histogram.h"
#include "common/status.h"
#include "cql/protocol/responses.h"
#include "cql/protocol/request_processor.h"
#include "server/connection_limits.h"
#include "server/tls_options.h"

namespace tessera::server {

// One per core (std::thread::hardware_concurrency), at least 2.
int DefaultRequestThreads();

struct CqlServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 9042;      // 0: any free port (tests)
  int threads = 2;
  int request_threads = DefaultRequestThreads();  // see "Threads" above; 0: inline on the strand
  int waiting_threads = 0;  // see "Threads" above; 0: none (requests that wait hold request threads)
  std::string cql_version = "3.4.5";
  TlsOptions tls;
  ConnectionLimits limits;
};

class CqlServer {
 public:
  // REQUIRES: processor outlives the server.
  CqlServer(CqlServerOptions options, cql::RequestProcessor* processor);
  ~CqlServer();  // Stop()

  // Binds and starts serving. Errors: IOError (address in use, bad address),
  // InvalidArgument (TLS files that cannot be read).
  Status Start();
  // Stops accepting, closes every connection and joins the threads. Idempotent.
  void Stop();
  uint16_t port() const;
  size_t connection_count() const;
  // Every QUERY, PREPARE, EXECUTE and BATCH answered, from the read that
  // completed its frame to the write that sent its reply (microseconds): the
  // front door's view of a request, queueing on the node included; a client
  // seeing more than this waits in its own process or the network.
  const LatencyHistogram& request_latency() const;
  // Sends an EVENT SCHEMA_CHANGE (stream -1) to connections that REGISTERed for it.
  void BroadcastSchemaChange(const cql::SchemaChange& change);
  // Sends TOPOLOGY_CHANGE (kNewNode, kRemovedNode) or STATUS_CHANGE (kUp,
  // kDown) about the node at address_bytes (4 or 16 bytes) and cql_port to
  // every connection REGISTERed for that event type (native protocol v4 §4.2.6).
  enum class NodeEvent { kNewNode, kRemovedNode, kUp, kDown };
  void BroadcastNodeEvent(NodeEvent event, std::string_view address_bytes, int32_t cql_port);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::server
