#include "tools/security_options.h"

namespace tessera {
namespace {

// "PasswordAuthenticator" or "org.apache.cassandra.auth.PasswordAuthenticator".
bool Names(const std::string& value, const std::string& cls) {
  return value == cls || value == "org.apache.cassandra.auth." + cls;
}

}  // namespace

void AddSecurityOptions(CLI::App* cmd, SecurityConfig* c) {
  cmd->add_option("--authenticator", c->authenticator, "AllowAllAuthenticator or PasswordAuthenticator")
      ->capture_default_str();
  cmd->add_option("--authorizer", c->authorizer, "AllowAllAuthorizer or CassandraAuthorizer")->capture_default_str();
  cmd->add_option("--permissions-validity-ms", c->permissions_validity_ms, "how long cached permissions stay valid")
      ->capture_default_str();
  cmd->add_option("--max-failed-logins", c->max_failed_logins,
                  "failed logins per client address and window before logins are refused (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--failed-login-window-seconds", c->failed_login_window_seconds)->capture_default_str();
  auto& t = c->client_tls;
  cmd->add_flag("--client-encryption", t.enabled, "TLS on the CQL port (client_encryption_options.enabled)");
  cmd->add_flag("--client-encryption-optional", t.optional, "also accept plaintext clients on the CQL port");
  cmd->add_option("--tls-certificate", t.certificate_file, "PEM certificate (chain) of the server");
  cmd->add_option("--tls-private-key", t.private_key_file, "PEM private key of the server");
  cmd->add_option("--tls-truststore", t.truststore_file, "PEM CA certificates that client certificates must chain to");
  cmd->add_flag("--require-client-auth", t.require_client_auth, "refuse clients without a trusted certificate");
  cmd->add_flag("--admin-tls", c->admin_tls, "the admin port speaks HTTPS with the server's certificate");
  cmd->add_flag("--admin-metrics-require-auth", c->admin_metrics_require_auth,
                "with authentication, /metrics needs credentials too");
  auto& i = c->internode_tls;
  cmd->add_option("--internode-encryption", c->internode_encryption,
                  "none or all: TLS between nodes (server_encryption_options.internode_encryption)")
      ->capture_default_str();
  cmd->add_option("--internode-certificate", i.certificate_file, "PEM certificate (chain) of this node, for peers");
  cmd->add_option("--internode-private-key", i.private_key_file, "PEM private key of --internode-certificate");
  cmd->add_option("--internode-truststore", i.ca_file, "PEM CA certificates peers' certificates must chain to");
  cmd->add_flag("--internode-require-client-auth", i.require_client_auth,
                "refuse peers without a certificate signed by --internode-truststore");
  cmd->add_option("--etcd-ca", c->etcd_ca_file, "PEM CA certificates of etcd's certificate (an https --etcd)");
  cmd->add_option("--etcd-cert", c->etcd_certificate_file, "PEM client certificate presented to etcd");
  cmd->add_option("--etcd-key", c->etcd_private_key_file, "PEM private key of --etcd-cert");
  auto& l = c->limits;
  cmd->add_option("--native-transport-max-concurrent-connections", l.max_connections, "0: no bound")
      ->capture_default_str();
  cmd->add_option("--native-transport-max-concurrent-connections-per-ip", l.max_connections_per_address,
                  "0: no bound")->capture_default_str();
  cmd->add_option("--native-transport-max-requests-per-connection", l.max_requests_per_connection,
                  "requests in flight on one connection before Overloaded (0: no bound)")->capture_default_str();
  cmd->add_option("--native-transport-max-requests-in-flight", l.max_requests_in_flight,
                  "requests in flight on the server before Overloaded (0: no bound)")->capture_default_str();
}

Status ApplySecurityConfig(const SecurityConfig& c, server::NodeOptions* options) {
  if (Names(c.authenticator, "PasswordAuthenticator")) {
    options->auth.authentication = true;
  } else if (!Names(c.authenticator, "AllowAllAuthenticator")) {
    return Status::InvalidArgument("unknown authenticator " + c.authenticator +
                                   " (AllowAllAuthenticator or PasswordAuthenticator)");
  }
  if (Names(c.authorizer, "CassandraAuthorizer")) {
    options->auth.authorization = true;
  } else if (!Names(c.authorizer, "AllowAllAuthorizer")) {
    return Status::InvalidArgument("unknown authorizer " + c.authorizer + " (AllowAllAuthorizer or CassandraAuthorizer)");
  }
  options->auth.permissions_validity_micros = c.permissions_validity_ms * 1000;
  options->auth.max_failed_logins = c.max_failed_logins;
  options->auth.failed_login_window_micros = static_cast<int64_t>(c.failed_login_window_seconds * 1e6);
  options->client_tls = c.client_tls;
  if (c.client_tls.optional || c.client_tls.require_client_auth) options->client_tls.enabled = true;
  options->admin_tls = c.admin_tls;
  options->admin_metrics_require_auth = c.admin_metrics_require_auth;
  options->limits = c.limits;
  if (c.internode_encryption != "none" && c.internode_encryption != "all") {
    return Status::InvalidArgument("--internode-encryption takes none or all, got " + c.internode_encryption);
  }
  options->cluster.internode_tls = c.internode_tls;
  options->cluster.internode_tls.enabled = c.internode_encryption == "all";
  options->cluster.etcd_ca_file = c.etcd_ca_file;
  options->cluster.etcd_certificate_file = c.etcd_certificate_file;
  options->cluster.etcd_private_key_file = c.etcd_private_key_file;
  return Status::OK();
}

}  // namespace tessera
