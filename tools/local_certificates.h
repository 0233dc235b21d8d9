// Certificates for a local cluster under `tessera cluster start --tls`: a
// CA of the cluster's own and, signed by it, one certificate per name (EC
// P-256 keys, SHA-256 signatures, valid 10 years, extended key usage both
// server and client auth), each naming an IP address as its subject
// alternative name so that peers verify it by address. Made with OpenSSL's
// library (X509 / EVP APIs). For development and tests: the CA's key lives
// beside its certificate.
//
// Files in `dir`: ca.pem, ca-key.pem and, per entry, NAME.pem and
// NAME-key.pem.
//
// Errors: IOError when a file cannot be written or OpenSSL fails.
#pragma once

#include <map>
#include <string>

#include "common/status.h"

namespace tessera::local_cluster {

// names: file name -> IP address it certifies ("node1" -> "127.0.0.1").
Status MakeCertificates(const std::string& dir, const std::map<std::string, std::string>& names);

}  // namespace tessera::local_cluster
