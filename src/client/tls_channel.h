// TlsChannel: TLS (OpenSSL) over a connected blocking socket, for Tessera's
// own client (client/cql_connection.h): TLS 1.2 or newer, the server's
// certificate verified against a CA file (and its name or IP address
// checked against `host`), an optional client certificate for servers that
// require client auth.
//
// Errors: IOError naming the failed step (CA file, client certificate,
// handshake with OpenSSL's reason, read or write).
//
// Thread safety: one thread per channel.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "common/status.h"

namespace tessera::client {

struct ClientTlsOptions {
  bool enabled = false;
  std::string ca_file;           // PEM CAs to verify the server with; empty: do not verify (not advised)
  std::string certificate_file;  // PEM client certificate, for require_client_auth servers
  std::string private_key_file;
  bool verify_host = true;       // check the certificate names `host` (DNS name or IP address)
};

class TlsChannel {
 public:
  // REQUIRES: fd is a connected blocking socket that outlives the channel.
  static Result<std::unique_ptr<TlsChannel>> Handshake(int fd, const std::string& host, const ClientTlsOptions& options);
  ~TlsChannel();
  // Bytes written (all of them) or an error.
  Status Write(const char* data, size_t size);
  // Up to `size` bytes (> 0), or IOError; 0 when the server closed.
  Result<size_t> Read(char* data, size_t size);
  // Decrypted bytes waiting inside the channel (no need to poll the socket).
  bool HasBuffered() const;

 private:
  struct Impl;
  explicit TlsChannel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::client
