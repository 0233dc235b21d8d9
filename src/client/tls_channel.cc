#include "client/tls_channel.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace tessera::client {
namespace {

std::string OpenSslError() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "unknown error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

}  // namespace

struct TlsChannel::Impl {
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  ~Impl() {
    if (ssl) {
      SSL_shutdown(ssl);
      SSL_free(ssl);
    }
    if (ctx) SSL_CTX_free(ctx);
  }
};

TlsChannel::TlsChannel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TlsChannel::~TlsChannel() = default;

Result<std::unique_ptr<TlsChannel>> TlsChannel::Handshake(int fd, const std::string& host,
                                                          const ClientTlsOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->ctx = SSL_CTX_new(TLS_client_method());
  if (!impl->ctx) return Status::IOError("TLS: " + OpenSslError());
  SSL_CTX_set_min_proto_version(impl->ctx, TLS1_2_VERSION);
  // Read what the socket has, not one record header then one record body
  // (two system calls per record; bench/RESULTS.md).
  SSL_CTX_set_read_ahead(impl->ctx, 1);
  if (!options.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(impl->ctx, options.ca_file.c_str(), nullptr) != 1) {
      return Status::IOError("TLS: cannot read CA file " + options.ca_file + ": " + OpenSslError());
    }
    SSL_CTX_set_verify(impl->ctx, SSL_VERIFY_PEER, nullptr);
  }
  if (!options.certificate_file.empty()) {
    if (SSL_CTX_use_certificate_chain_file(impl->ctx, options.certificate_file.c_str()) != 1 ||
        SSL_CTX_use_PrivateKey_file(impl->ctx, options.private_key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
      return Status::IOError("TLS: cannot read client certificate or key: " + OpenSslError());
    }
  }
  impl->ssl = SSL_new(impl->ctx);
  if (!impl->ssl) return Status::IOError("TLS: " + OpenSslError());
  SSL_set_fd(impl->ssl, fd);
  if (!options.ca_file.empty() && options.verify_host) {
    X509_VERIFY_PARAM* param = SSL_get0_param(impl->ssl);
    in6_addr v6;
    in_addr v4;
    if (inet_pton(AF_INET, host.c_str(), &v4) == 1 || inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
      X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
    } else {
      X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
      SSL_set_tlsext_host_name(impl->ssl, host.c_str());
    }
  }
  if (SSL_connect(impl->ssl) != 1) {
    std::string why = OpenSslError();
    long verify = SSL_get_verify_result(impl->ssl);
    if (verify != X509_V_OK) why += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
    return Status::IOError("TLS handshake with " + host + " failed: " + why);
  }
  return std::unique_ptr<TlsChannel>(new TlsChannel(std::move(impl)));
}

Status TlsChannel::Write(const char* data, size_t size) {
  size_t off = 0;
  while (off < size) {
    size_t written = 0;
    if (SSL_write_ex(impl_->ssl, data + off, size - off, &written) != 1) {
      return Status::IOError("TLS write: " + OpenSslError());
    }
    off += written;
  }
  return Status::OK();
}

Result<size_t> TlsChannel::Read(char* data, size_t size) {
  size_t n = 0;
  if (SSL_read_ex(impl_->ssl, data, size, &n) == 1) return n;
  int err = SSL_get_error(impl_->ssl, 0);
  if (err == SSL_ERROR_ZERO_RETURN) return size_t{0};
  if (err == SSL_ERROR_SYSCALL && ERR_peek_error() == 0) return size_t{0};  // closed without close_notify
  return Status::IOError("TLS read: " + OpenSslError());
}

// SSL_has_pending also counts bytes read ahead and not yet decrypted.
bool TlsChannel::HasBuffered() const { return SSL_has_pending(impl_->ssl) == 1; }

}  // namespace tessera::client
