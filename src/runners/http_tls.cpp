#include "runners/http_tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "runners/egress_guard.h"

namespace baton::runners {
namespace {

// The oldest error in this thread's OpenSSL queue, and clears the queue.
std::string OpenSslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "unknown OpenSSL error";
  char text[256];
  ERR_error_string_n(code, text, sizeof text);
  return text;
}

// "cannot read CA file 'PATH': REASON".
Status InvalidCaFile(const std::string& what, const std::string& path,
                     const std::string& reason = "") {
  return Status(errc::kValidation,
                what + " CA file '" + path + "'" + (reason.empty() ? "" : ": " + reason));
}

// Reads the certificates of a PEM file into `store` (nullptr: only checks them).
Status LoadCaFile(const std::string& path, X509_STORE* store) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (!file) return InvalidCaFile("cannot read", path, std::strerror(errno));
  std::string pem;
  char buf[16384];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, file)) > 0) pem.append(buf, n);
  const bool failed = std::ferror(file);
  const int read_errno = errno;
  std::fclose(file);
  if (failed) return InvalidCaFile("cannot read", path, std::strerror(read_errno));

  ERR_clear_error();
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (!bio) return InvalidCaFile("cannot read", path, OpenSslError());
  int count = 0;
  Status status;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    ++count;
    if (store && X509_STORE_add_cert(store, cert) != 1) {
      status = InvalidCaFile("cannot use a certificate of", path, OpenSslError());
    }
    X509_free(cert);
    if (!status.ok()) break;
  }
  BIO_free(bio);
  ERR_clear_error();  // the read that ends the loop fails at the end of the text
  if (status.ok() && count == 0) status = InvalidCaFile("no PEM certificate in", path);
  return status;
}

}  // namespace

void SslCtxFree::operator()(ssl_ctx_st* ctx) const {
  SSL_CTX_free(ctx);
}

Result<SslCtxPtr> NewTlsClientContext(const std::string& ca_file) {
  ERR_clear_error();
  SslCtxPtr ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return Status(errc::kNetwork, "TLS: cannot create a context: " + OpenSslError());
  if (SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION) != 1 ||
      SSL_CTX_set_default_verify_paths(ctx.get()) != 1) {
    return Status(errc::kNetwork, "TLS: cannot set up the context: " + OpenSslError());
  }
  SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
  if (!ca_file.empty()) {
    Status loaded = LoadCaFile(ca_file, SSL_CTX_get_cert_store(ctx.get()));
    if (!loaded.ok()) return loaded;
  }
  return ctx;
}

Status CheckCaFile(const std::string& path) {
  return LoadCaFile(path, nullptr);
}

Status PrepareTlsClient(ssl_st* ssl, const std::string& host) {
  ERR_clear_error();
  std::string name = host;
  if (name.size() > 1 && name.back() == '.') name.pop_back();  // "example.com." is absolute
  bool ok;
  if (ParseIpAddress(name)) {
    ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name.c_str()) == 1;
  } else {
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    ok = SSL_set1_host(ssl, name.c_str()) == 1 && SSL_set_tlsext_host_name(ssl, name.c_str()) == 1;
  }
  if (!ok)
    return Status(errc::kNetwork,
                  "TLS: cannot prepare a connection to " + host + ": " + OpenSslError());
  return Status();
}

std::string TlsHandshakeFailure(ssl_st* ssl, const std::string& host, const std::string& error) {
  const long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    return "TLS: certificate verify failed for " + host + ": " +
           X509_verify_cert_error_string(verify);
  }
  return "TLS handshake with " + host + " failed: " + error;
}

}  // namespace baton::runners
