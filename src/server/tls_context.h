// Builds the asio (OpenSSL) server context from TlsOptions: TLS 1.2 or
// newer only, the certificate chain and key from PEM files, the truststore
// for client certificates, and peer verification when client auth is
// required. Session tickets are off (a CQL connection is long-lived, and no
// ticket is written after the handshake while requests are in flight).
//
// Errors: InvalidArgument naming the file that cannot be read or the key
// that does not match the certificate.
//
// Thread safety: the returned context is shared, read-only, by every
// connection of a listener.
#pragma once

#include <asio/ssl.hpp>

#include <memory>

#include "common/status.h"
#include "server/tls_options.h"

namespace tessera::server {

Result<std::shared_ptr<asio::ssl::context>> MakeServerTlsContext(const TlsOptions& options);

}  // namespace tessera::server
