// The `http` step runner (DESIGN.md §3): one HTTP/1.1 request per attempt, on one I/O
// thread (an Asio io_context) shared by every request. No Boost in this header.
//
// Spec fields: src/runners/http_spec.h. http:// and https:// URLs.
//
// https: TLS 1.2 or later (OpenSSL, runners/http_tls.h), with SNI for host names. The
// server's certificate must chain to the system trust store (/etc/ssl/certs on Debian,
// package ca-certificates) or to a certificate in HttpRunnerOptions::ca_file, and carry
// the URL's host name or IP address (RFC 6125). There is no way to turn verification
// off. After the response the client sends close_notify and waits up to 500 ms for the
// server's (a close without it is fine once the response is whole; a body that runs to
// the close must end with close_notify).
//
// Result:
//   output        {"status": 200, "headers": {lower-case name: value}, "body": ...};
//                 a repeated header's values are joined with ", ". body: the response
//                 parsed as JSON when its Content-Type is JSON (application/json,
//                 */*+json) or absent and the text is one valid JSON value; otherwise the
//                 text (invalid UTF-8 becomes U+FFFD); "" when empty (and for HEAD).
//                 Set on success and on HTTP_STATUS.
//   status        ok when the final status is 2xx or listed in `accept`.
//                 HTTP_STATUS "GET http://x/y returned 503" otherwise (output set,
//                 error_details {"status": 503}); also when more than max_redirects
//                 redirects were offered ("... stopped after 5 redirects: 302 to URL")
//                 or a redirect cannot be followed (a bad Location).
//                 NETWORK: DNS failure, connection refused or reset, a malformed
//                 response, an egress-guard refusal (runners/egress_guard.h), a TLS
//                 failure ("TLS: certificate verify failed for HOST: REASON", "TLS
//                 handshake with HOST failed: ERROR"), or a body over max_output: the
//                 request fails, "response body over max_output (1048576 bytes)",
//                 output holds status and headers but no body, error_details
//                 {"max_output": N}. (No truncation: a cut JSON body would be worse
//                 than none.)
//                 TIMEOUT: request.timeout passed (the whole exchange: every hop's
//                 DNS lookup, connection, TLS handshake, request and response; the
//                 bounded wait for close_notify after a complete response does not
//                 turn it into a timeout): "GET URL: no response within 10s", with
//                 " (TLS handshake)" when it passed during one. CANCELLED: Cancel() or Shutdown(),
//                 at any point, the TLS handshake included. VALIDATION: a bad spec, or an unusable
//                 ca_file (for https requests).
//
// Redirects: 301, 302, 303, 307 and 308 with a Location are followed up to
// max_redirects (default 5); 303 turns the request into a GET without a body (HEAD stays
// HEAD), the others keep method and body. Every hop is resolved and checked by the
// egress guard again; http -> https and https -> http are followed. Authorization,
// Cookie and Proxy-Authorization are dropped when a redirect changes the scheme, host or
// port.
//
// Requests carry Host, User-Agent (unless given), Connection: close, Content-Length
// when there is a body; a spec's Content-Length, Transfer-Encoding and Connection
// headers are ignored. Responses: headers up to 64 KiB.
//
// Threading: Start() and Cancel() are thread-safe and return at once; Started() (when
// the request begins) and Done() run on the I/O thread and must not block or call
// Shutdown(). Start() after Shutdown() calls Done() at once, on the calling thread,
// with CANCELLED.
#pragma once

#include <baton/clock.h>
#include <baton/runner.h>
#include <baton/status.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runners/egress_guard.h"

namespace baton {

struct HttpRunnerOptions {
  // Addresses the egress guard lets through although they are loopback, private, ...
  std::vector<runners::Cidr> allow;
  size_t default_max_output = 1 << 20;  // response body bytes
  Duration default_timeout{0};          // per request when the spec has none; 0 = none
  std::string user_agent = "baton/0.1";
  // A PEM file of CA certificates trusted for https besides the system trust store
  // (private CAs); empty for none.
  std::string ca_file;
};

// Options with `allow` from the environment variable BATON_HTTP_ALLOW (CIDRs separated
// by commas or spaces, e.g. "127.0.0.0/8,::1/128") and `ca_file` from BATON_CA_FILE. A
// bad entry, or a CA file that cannot be read or holds no PEM certificate, is a
// VALIDATION error naming the variable and the entry or path.
Result<HttpRunnerOptions> HttpRunnerOptionsFromEnv();

std::unique_ptr<Runner> NewHttpRunner(const HttpRunnerOptions& options = {});

}  // namespace baton
