// The `http` step runner (DESIGN.md §3): one HTTP/1.1 request per attempt, on one I/O
// thread (an Asio io_context) shared by every request. No Boost in this header.
//
// Spec fields: src/runners/http_spec.h. Plain http:// only (https:// fails with
// VALIDATION "https is not supported yet").
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
//                 or a redirect cannot be followed (a bad or https Location).
//                 NETWORK: DNS failure, connection refused or reset, a malformed
//                 response, an egress-guard refusal (runners/egress_guard.h), or a body
//                 over max_output: the request fails, "response body over max_output
//                 (1048576 bytes)", output holds status and headers but no body,
//                 error_details {"max_output": N}. (No truncation: a cut JSON body would
//                 be worse than none.)
//                 TIMEOUT: request.timeout passed (the whole exchange, redirects
//                 included). CANCELLED: Cancel() or Shutdown(). VALIDATION: a bad spec.
//
// Redirects: 301, 302, 303, 307 and 308 with a Location are followed up to
// max_redirects (default 5); 303 turns the request into a GET without a body (HEAD stays
// HEAD), the others keep method and body. Every hop is resolved and checked by the
// egress guard again; Authorization, Cookie and Proxy-Authorization are dropped when a
// redirect leaves the original host and port.
//
// Requests carry Host, User-Agent (unless given), Connection: close, Content-Length
// when there is a body; a spec's Content-Length, Transfer-Encoding and Connection
// headers are ignored. Responses: headers up to 64 KiB.
//
// Threading: Start() and Cancel() are thread-safe and return at once; on_started (when
// the request begins) and on_done run on the I/O thread and must not block or call
// Shutdown(). Start() after Shutdown() calls on_done at once, on the calling thread,
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
};

// Options with `allow` from the environment variable BATON_HTTP_ALLOW (CIDRs separated
// by commas or spaces, e.g. "127.0.0.0/8,::1/128"). A bad entry is a VALIDATION error
// naming the variable and the entry.
Result<HttpRunnerOptions> HttpRunnerOptionsFromEnv();

std::unique_ptr<Runner> NewHttpRunner(const HttpRunnerOptions& options = {});

}  // namespace baton
