// TLS for https steps, on OpenSSL alone (no Boost): the client context a runner's https
// connections share, each connection's peer checks, and what a failed handshake is
// reported as. The runner hands the context to Asio (runners/http_runner.cpp).
#pragma once

#include <baton/status.h>

#include <memory>
#include <string>

struct ssl_ctx_st;  // OpenSSL's SSL_CTX
struct ssl_st;      // OpenSSL's SSL

namespace baton::runners {

struct SslCtxFree {
  void operator()(ssl_ctx_st* ctx) const;
};
using SslCtxPtr = std::unique_ptr<ssl_ctx_st, SslCtxFree>;

// A client context: TLS 1.2 or later; the server's certificate must chain to the system
// trust store (OpenSSL's default locations: /etc/ssl/certs from Debian's
// ca-certificates; SSL_CERT_FILE and SSL_CERT_DIR override them) or, when `ca_file` is
// not empty, to a certificate in that PEM file. Errors (from CheckCaFile) are
// VALIDATION.
Result<SslCtxPtr> NewTlsClientContext(const std::string& ca_file);

// OK when `path` is a readable PEM file holding at least one certificate; otherwise
// VALIDATION "cannot read CA file 'PATH': REASON" or "no PEM certificate in CA file
// 'PATH'".
Status CheckCaFile(const std::string& path);

// Prepares one connection to `host` (a name, or an IP address without brackets): SNI
// for a name (RFC 6066 has none for addresses), and the name or address the
// certificate must carry (RFC 6125 rules as OpenSSL implements them, without partial
// wildcards such as "w*.example.com"). Errors are NETWORK.
Status PrepareTlsClient(ssl_st* ssl, const std::string& host);

// The message for a failed handshake with `host`: "TLS: certificate verify failed for
// HOST: REASON" when the certificate was refused (REASON e.g. "unable to get local
// issuer certificate", "hostname mismatch"), else "TLS handshake with HOST failed:
// ERROR".
std::string TlsHandshakeFailure(ssl_st* ssl, const std::string& host, const std::string& error);

}  // namespace baton::runners
