// The seam between the CQL server (connections, frames; src/server) and
// statement execution (src/cql/executor), kept here so that neither depends
// on the other: the server decodes frames and handles the connection-level
// messages (STARTUP, OPTIONS, REGISTER) itself; everything else goes to a
// RequestProcessor.
//
// Thread safety: Process may be called concurrently for different
// connections; calls for one connection may also overlap (many streams in
// flight), so implementations must be thread-safe.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cql/protocol/frame.h"
#include "cql/protocol/requests.h"

namespace tessera::cql {

struct ErrorResponse;  // responses.h

// Per-connection state shared with the processor.
class ConnectionState {
 public:
  ConnectionState() = default;
  explicit ConnectionState(std::string client_address) : client_address_(std::move(client_address)) {}
  // The same client, user and protocol version as `of`, in `keyspace`: a
  // statement that runs in another keyspace than its connection's (a
  // prepared statement's, v5's keyspace per query).
  ConnectionState(const ConnectionState& of, std::string keyspace)
      : keyspace_(std::move(keyspace)), user_(of.user()), client_address_(of.client_address()),
        protocol_version_(of.protocol_version()) {}

  std::string keyspace() const {
    std::lock_guard<std::mutex> lock(mu_);
    return keyspace_;
  }
  void set_keyspace(std::string ks) {
    std::lock_guard<std::mutex> lock(mu_);
    keyspace_ = std::move(ks);
  }
  // The role logged in by AUTH_RESPONSE; empty before (and without an authenticator).
  std::string user() const {
    std::lock_guard<std::mutex> lock(mu_);
    return user_;
  }
  void set_user(std::string user) {
    std::lock_guard<std::mutex> lock(mu_);
    user_ = std::move(user);
  }
  // The peer's IP address, as text (failed-login rate limits key on it). Set once.
  const std::string& client_address() const { return client_address_; }
  // The protocol version STARTUP chose (kProtocolV4 or kProtocolV5): what
  // replies are encoded for.
  uint8_t protocol_version() const { return protocol_version_.load(std::memory_order_relaxed); }
  void set_protocol_version(uint8_t version) { protocol_version_.store(version, std::memory_order_relaxed); }

 private:
  mutable std::mutex mu_;
  std::string keyspace_;  // USE ks
  std::string user_;
  const std::string client_address_;
  std::atomic<uint8_t> protocol_version_{kProtocolV4};
};

struct Reply {
  Opcode opcode = Opcode::kResult;
  std::string body;
  std::vector<std::string> warnings;  // sent with the Warning flag (§2.2)
  std::string tracing_id;             // 16 bytes when traced: sent first, with the Tracing flag (§2.2)
  // An ERROR reply's fields, when its body depends on the protocol version
  // (v5's reason map, CAS contentions): `body` is the v4 encoding and the
  // server encodes this for a v5 connection (EncodeError). Null otherwise.
  std::shared_ptr<const ErrorResponse> error;
};

// What a request's frame header says beyond its message (§2.2).
struct RequestFlags {
  bool tracing = false;  // the Tracing flag: trace this request and answer its tracing id
};

class RequestProcessor {
 public:
  virtual ~RequestProcessor() = default;
  // QUERY, PREPARE, EXECUTE, BATCH or AUTH_RESPONSE. Never throws; errors are
  // ERROR replies. AUTH_RESPONSE answers AUTH_SUCCESS (and sets the
  // connection's user) or ERROR BadCredentials.
  virtual Reply Process(ConnectionState& connection, const Request& request, RequestFlags flags) = 0;
  // As Process, but answers through `done`, exactly once: on this thread, or
  // later on the thread where the request's last awaited replica answer
  // arrives (a write on a cluster), so that no thread waits for another
  // node. `connection` and `request` are used only before this returns.
  // The default answers Process's reply here.
  virtual void ProcessAsync(ConnectionState& connection, const Request& request, RequestFlags flags,
                            std::function<void(Reply)> done) {
    done(Process(connection, request, flags));
  }
  // Whether `request` may hold its thread while it waits for other nodes
  // (a statement not yet asynchronous on a cluster): the server then runs
  // it on its threads for waiting requests (CqlServerOptions::
  // waiting_threads), so that it never holds one that reads connections and
  // runs the requests that do not wait. A guess from earlier runs, never
  // wrong for long: a request that waits anyway holds its thread until its
  // replicas answer or time out. Called on a connection's thread before
  // ProcessAsync. The default: true (every request may wait).
  virtual bool MayWait(const ConnectionState& /*connection*/, const Request& /*request*/) { return true; }
  // The authenticator class STARTUP must be answered with (AUTHENTICATE),
  // or empty when no login is needed (READY).
  virtual std::string Authenticator() const { return ""; }
};

}  // namespace tessera::cql
