// `tessera server`'s security flags (and config-file keys), named after
// cassandra.yaml: authenticator, authorizer, permissions_validity_in_ms,
// client_encryption_options, native_transport_max_concurrent_connections
// (and _per_ip), the in-flight request bounds, server_encryption_options
// (internode TLS) and etcd's TLS files.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "common/status.h"
#include "server/node.h"

namespace tessera {

struct SecurityConfig {
  std::string authenticator = "AllowAllAuthenticator";  // or PasswordAuthenticator
  std::string authorizer = "AllowAllAuthorizer";        // or CassandraAuthorizer
  int64_t permissions_validity_ms = 2000;
  int max_failed_logins = 10;
  double failed_login_window_seconds = 60;
  server::TlsOptions client_tls;
  bool admin_tls = false;
  bool admin_metrics_require_auth = false;
  server::ConnectionLimits limits;
  // server_encryption_options: internode_encryption none|all, PEM files.
  std::string internode_encryption = "none";
  cluster::InternodeTlsOptions internode_tls;
  // etcd over TLS with a client certificate.
  std::string etcd_ca_file, etcd_certificate_file, etcd_private_key_file;
};

void AddSecurityOptions(CLI::App* cmd, SecurityConfig* config);

// Fills the node's auth, TLS and limit options. Errors: InvalidArgument
// for an unknown authenticator or authorizer class or internode_encryption.
Status ApplySecurityConfig(const SecurityConfig& config, server::NodeOptions* options);

}  // namespace tessera
