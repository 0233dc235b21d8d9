// TLS settings of a listener, named after Cassandra's
// client_encryption_options (cassandra.yaml), with PEM files in the place of
// Java keystores. Plain values; the asio ssl context is built in
// tls_context.cc, so only that file and the listeners include OpenSSL.
#pragma once

#include <string>

namespace tessera::server {

struct TlsOptions {
  bool enabled = false;          // client_encryption_options.enabled
  // optional: true: the same port also takes plaintext connections (told apart
  // by their first byte: 0x16 opens a TLS handshake, a CQL frame starts with
  // its version); false: plaintext is refused.
  bool optional = false;
  std::string certificate_file;  // keystore: the server's PEM certificate (chain)
  std::string private_key_file;  // keystore: its PEM private key
  std::string truststore_file;   // PEM CA certificates client certificates must chain to
  bool require_client_auth = false;  // refuse a client without a certificate signed by the truststore
};

}  // namespace tessera::server
