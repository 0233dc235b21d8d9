#include "server/tls_context.h"

#include <openssl/ssl.h>

namespace tessera::server {

Result<std::shared_ptr<asio::ssl::context>> MakeServerTlsContext(const TlsOptions& options) {
  if (options.certificate_file.empty() || options.private_key_file.empty()) {
    return Status::InvalidArgument("TLS needs a certificate and a private key (PEM files)");
  }
  auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  std::error_code ec;
  ctx->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1 |
                       asio::ssl::context::single_dh_use,
                   ec);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  SSL_CTX_set_num_tickets(ctx->native_handle(), 0);
  SSL_CTX_set_options(ctx->native_handle(), SSL_OP_NO_TICKET);
  ctx->use_certificate_chain_file(options.certificate_file, ec);
  if (ec) return Status::InvalidArgument("cannot read TLS certificate " + options.certificate_file + ": " + ec.message());
  ctx->use_private_key_file(options.private_key_file, asio::ssl::context::pem, ec);
  if (ec) return Status::InvalidArgument("cannot read TLS private key " + options.private_key_file + ": " + ec.message());
  if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
    return Status::InvalidArgument("TLS private key " + options.private_key_file + " does not match the certificate");
  }
  if (!options.truststore_file.empty()) {
    ctx->load_verify_file(options.truststore_file, ec);
    if (ec) return Status::InvalidArgument("cannot read TLS truststore " + options.truststore_file + ": " + ec.message());
  }
  if (options.require_client_auth) {
    if (options.truststore_file.empty()) return Status::InvalidArgument("require_client_auth needs a truststore");
    ctx->set_verify_mode(asio::ssl::verify_peer | asio::ssl::verify_fail_if_no_peer_cert, ec);
  } else {
    ctx->set_verify_mode(asio::ssl::verify_none, ec);
  }
  return ctx;
}

}  // namespace tessera::server
