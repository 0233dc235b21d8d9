// CqlConnection: one client connection speaking the CQL native protocol v4
// to a server (Tessera's or Cassandra's) — what `tessera load`, `tessera
// shell` and `tessera demo` use to go through the front door like any
// driver.
//
// Blocking sockets with pipelining: Send() puts a request on a free stream
// id (0..32767) and returns at once; Receive() returns the next response,
// whichever stream it answers. Call() is Send + Receive for one request at a
// time. No compression; no events (REGISTER is not sent).
//
// Errors: IOError for connect, send and receive failures and time-outs
// (ClientOptions), Corruption for an undecodable response. A server ERROR is
// not a Status error: it comes back as a DecodedResponse with is_error();
// ServerErrorStatus() turns it into one when the caller wants that.
//
// Thread safety: one thread per connection.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "client/tls_channel.h"
#include "common/status.h"
#include "cql/protocol/requests.h"
#include "cql/protocol/response_decoding.h"

namespace tessera::client {

struct ClientOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 9042;
  int connect_timeout_ms = 5000;
  int request_timeout_ms = 30000;  // waiting for any response
  // Credentials for a server that answers STARTUP with AUTHENTICATE
  // (PasswordAuthenticator: SASL PLAIN in AUTH_RESPONSE).
  std::string username;
  std::string password;
  ClientTlsOptions tls;  // client_encryption_options of the server
};

class CqlConnection {
 public:
  // Connects (with TLS when options.tls.enabled) and completes STARTUP
  // (CQL_VERSION 3.0.0) and, when the server asks, the login. Errors:
  // IOError, the server's refusal as InvalidArgument (BadCredentials among
  // them), InvalidArgument when the server wants credentials and none are set.
  static Result<std::unique_ptr<CqlConnection>> Connect(const ClientOptions& options);
  ~CqlConnection();
  CqlConnection(const CqlConnection&) = delete;
  CqlConnection& operator=(const CqlConnection&) = delete;

  struct Response {
    int16_t stream = 0;
    cql::DecodedResponse decoded;
  };
  // Queues `request` on a free stream; returns the stream. Queued requests
  // go out together (one write) on Flush() or the next Receive(). `flags`:
  // the frame header's (cql::kFlagTracing: the server traces the request
  // and its response carries the trace's id). Errors: Busy when all 32,768
  // streams are in flight.
  Result<int16_t> Send(const cql::Request& request, uint8_t flags = 0);
  Status Flush();
  // Flushes, then returns the next response. Errors: IOError (closed,
  // time-out), Corruption.
  Result<Response> Receive();
  // Flushes, then waits at most `timeout_micros` for a response to begin
  // arriving: true when it has (Receive() would not wait for its first
  // bytes), false after the time-out. Lets a caller with a schedule (an
  // open-loop load generator) send on time instead of blocking in Receive().
  // Errors: IOError.
  Result<bool> WaitForResponse(int64_t timeout_micros);
  size_t in_flight() const { return in_flight_; }
  // Flushes every connection of `conns`, then waits at most `timeout_micros`
  // for a response to begin arriving on any of them: the index of one that
  // has (Receive() would not wait for its first bytes), or conns.size()
  // after the time-out. A token-aware client holds one connection per node
  // on one thread. Errors: IOError. REQUIRES: no null entries.
  static Result<size_t> WaitForAny(const std::vector<CqlConnection*>& conns, int64_t timeout_micros);

  // One request and its answer. REQUIRES: nothing else in flight.
  Result<cql::DecodedResponse> Call(const cql::Request& request);
  // QUERY `cql` with `params`; a server error is returned as Status (ServerErrorStatus).
  Result<cql::DecodedResponse> Query(const std::string& cql, cql::QueryParameters params = {});
  Result<cql::DecodedPrepared> Prepare(const std::string& cql);

 private:
  explicit CqlConnection(int fd, ClientOptions options) : fd_(fd), options_(std::move(options)) {}
  Status WriteAll(const std::string& bytes);
  Status ReadExactly(size_t n, std::string* out);
  Status Login(const cql::DecodedResponse& authenticate);

  int fd_ = -1;
  std::unique_ptr<TlsChannel> tls_;
  ClientOptions options_;
  std::string out_;  // requests not yet written
  std::vector<bool> busy_ = std::vector<bool>(32768, false);
  int16_t next_stream_ = 0;
  size_t in_flight_ = 0;
};

// A server ERROR as a Status whose message starts with the code, e.g.
// "Error 0x2200 (Invalid): ...". Kinds: SyntaxError (0x2000), Busy for the
// retryable codes (Unavailable 0x1000, Overloaded 0x1001, IsBootstrapping
// 0x1002, WriteTimeout 0x1100, ReadTimeout 0x1200), AuthenticationFailed
// (0x0100), Unauthorized (0x2100), InvalidArgument otherwise.
Status ServerErrorStatus(const cql::DecodedResponse& response);
bool IsRetryable(int32_t error_code);

}  // namespace tessera::client
