// Internode encryption and authentication, as Cassandra's
// server_encryption_options: internode_encryption none|all, the node's
// certificate and private key and the CA certificates peers must chain to,
// all PEM files, and require_client_auth. With `enabled`, the internode
// listener speaks only TLS (gRPC's SSL credentials, TLS 1.2+) and a client
// verifies the server's certificate against the CA and its address
// (subject alternative name); with `require_client_auth` the listener also
// refuses any peer that does not present a certificate signed by the CA.
//
// Plain values; the gRPC credentials are made in internode_client.cc and
// internode_service.cc (gRPC headers stay out of this one).
//
// Errors (from InternodeServer::Start and LoadInternodeTlsFiles):
// InvalidArgument naming a file that cannot be read.
#pragma once

#include <string>

#include "common/status.h"

namespace tessera::cluster {

struct InternodeTlsOptions {
  bool enabled = false;            // internode_encryption: all (true) or none
  std::string certificate_file;    // PEM certificate (chain) of this node
  std::string private_key_file;    // PEM private key of this node
  std::string ca_file;             // PEM CA certificates peers' certificates must chain to
  bool require_client_auth = false;
};

// The three PEM files' contents, and require_client_auth.
struct InternodeTlsMaterial {
  std::string certificate;
  std::string private_key;
  std::string ca;
  bool require_client_auth = false;
};
Result<InternodeTlsMaterial> LoadInternodeTlsFiles(const InternodeTlsOptions& options);

}  // namespace tessera::cluster
