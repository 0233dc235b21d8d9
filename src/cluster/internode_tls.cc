#include "cluster/internode_tls.h"

#include <fstream>
#include <sstream>

namespace tessera::cluster {
namespace {

Result<std::string> ReadPem(const std::string& what, const std::string& path) {
  if (path.empty()) return Status::InvalidArgument("internode encryption needs " + what);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in || text.str().empty()) return Status::InvalidArgument("cannot read " + what + " " + path);
  return text.str();
}

}  // namespace

Result<InternodeTlsMaterial> LoadInternodeTlsFiles(const InternodeTlsOptions& options) {
  InternodeTlsMaterial m;
  TESSERA_ASSIGN_OR_RETURN(m.certificate, ReadPem("a certificate (--internode-certificate)", options.certificate_file));
  TESSERA_ASSIGN_OR_RETURN(m.private_key, ReadPem("a private key (--internode-private-key)", options.private_key_file));
  TESSERA_ASSIGN_OR_RETURN(m.ca, ReadPem("CA certificates (--internode-truststore)", options.ca_file));
  m.require_client_auth = options.require_client_auth;
  return m;
}

}  // namespace tessera::cluster
