#include "tools/local_certificates.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <filesystem>
#include <memory>

namespace tessera::local_cluster {
namespace {

struct Freer {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
  void operator()(X509_EXTENSION* p) const { X509_EXTENSION_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Freer>;
using Cert = std::unique_ptr<X509, Freer>;

Status Fail(const std::string& what) { return Status::IOError("making certificates: " + what); }

Key NewKey() { return Key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256")); }

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  std::unique_ptr<X509_EXTENSION, Freer> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()));
  return ext && X509_add_ext(cert, ext.get(), -1) == 1;
}

// A certificate for `key` named `common_name`, signed by issuer/issuer_key
// (itself when null).
Cert NewCertificate(EVP_PKEY* key, const std::string& common_name, X509* issuer, EVP_PKEY* issuer_key,
                    const std::string& ip) {
  Cert cert(X509_new());
  if (!cert) return nullptr;
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof serial) != 1) return nullptr;
  serial[0] &= 0x7F;  // positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof serial, nullptr);
  ASN1_INTEGER* sn = BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get()));
  BN_free(bn);
  if (sn == nullptr) return nullptr;
  X509_set_version(cert.get(), 2);  // v3
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("Tessera local cluster"),
                             -1, -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()),
                             -1, -1, 0);
  X509* signer = issuer != nullptr ? issuer : cert.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(signer));
  bool ok;
  if (issuer == nullptr) {
    ok = AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:TRUE") &&
         AddExtension(cert.get(), signer, NID_key_usage, "critical,keyCertSign,cRLSign") &&
         AddExtension(cert.get(), signer, NID_subject_key_identifier, "hash");
  } else {
    ok = AddExtension(cert.get(), signer, NID_basic_constraints, "critical,CA:FALSE") &&
         AddExtension(cert.get(), signer, NID_key_usage, "critical,digitalSignature,keyEncipherment") &&
         AddExtension(cert.get(), signer, NID_ext_key_usage, "serverAuth,clientAuth") &&
         AddExtension(cert.get(), signer, NID_subject_alt_name, "IP:" + ip);
  }
  if (!ok || X509_sign(cert.get(), issuer_key != nullptr ? issuer_key : key, EVP_sha256()) == 0) return nullptr;
  return cert;
}

Status WritePem(const std::string& path, X509* cert, EVP_PKEY* key) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return Fail("cannot write " + path);
  const bool ok = cert != nullptr ? PEM_write_X509(f, cert) == 1
                                  : PEM_write_PrivateKey(f, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  const bool closed = std::fclose(f) == 0;
  if (!ok || !closed) return Fail("cannot write " + path);
  if (key != nullptr) std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return Status::OK();
}

}  // namespace

Status MakeCertificates(const std::string& dir, const std::map<std::string, std::string>& names) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Fail("cannot create " + dir);
  Key ca_key = NewKey();
  if (!ca_key) return Fail("EC key generation failed");
  Cert ca = NewCertificate(ca_key.get(), "Tessera local cluster CA", nullptr, nullptr, "");
  if (!ca) return Fail("the CA certificate");
  TESSERA_RETURN_IF_ERROR(WritePem(dir + "/ca.pem", ca.get(), nullptr));
  TESSERA_RETURN_IF_ERROR(WritePem(dir + "/ca-key.pem", nullptr, ca_key.get()));
  for (const auto& [name, ip] : names) {
    Key key = NewKey();
    if (!key) return Fail("EC key generation failed");
    Cert cert = NewCertificate(key.get(), name, ca.get(), ca_key.get(), ip);
    if (!cert) return Fail("the certificate of " + name);
    TESSERA_RETURN_IF_ERROR(WritePem(dir + "/" + name + ".pem", cert.get(), nullptr));
    TESSERA_RETURN_IF_ERROR(WritePem(dir + "/" + name + "-key.pem", nullptr, key.get()));
  }
  return Status::OK();
}

}  // namespace tessera::local_cluster
