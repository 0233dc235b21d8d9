// The flags `tessera shell`, `tessera load` and `tessera bench` share to
// reach a server with authentication and TLS: -u/--username,
// -p/--password, --ssl, --ssl-ca, --ssl-certificate, --ssl-private-key,
// --ssl-no-verify-host (cqlsh's names where it has them).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "client/cql_connection.h"

namespace tessera {

struct ClientFlags {
  std::string username;
  std::string password;
  client::ClientTlsOptions tls;
  bool no_verify_host = false;
};

inline void AddClientFlags(CLI::App* cmd, ClientFlags* f) {
  cmd->add_option("-u,--username", f->username, "role to log in as (PasswordAuthenticator)");
  cmd->add_option("-p,--password", f->password, "its password");
  cmd->add_flag("--ssl", f->tls.enabled, "connect over TLS");
  cmd->add_option("--ssl-ca", f->tls.ca_file, "PEM CA certificates to verify the server with");
  cmd->add_option("--ssl-certificate", f->tls.certificate_file, "PEM client certificate (require_client_auth)");
  cmd->add_option("--ssl-private-key", f->tls.private_key_file, "PEM private key of the client certificate");
  cmd->add_flag("--ssl-no-verify-host", f->no_verify_host, "do not check the server certificate's name");
}

inline void ApplyClientFlags(const ClientFlags& f, client::ClientOptions* o) {
  o->username = f.username;
  o->password = f.password;
  o->tls = f.tls;
  o->tls.verify_host = !f.no_verify_host;
  if (!f.tls.ca_file.empty() || !f.tls.certificate_file.empty()) o->tls.enabled = true;
}

}  // namespace tessera
