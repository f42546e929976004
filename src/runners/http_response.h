// What the http runner makes of a response, without any I/O (and without Boost): the
// step output, and whether and where a redirect leads. Contract: runners/http_runner.h.
#pragma once

#include <baton/json.h>
#include <baton/status.h>

#include <string>
#include <utility>
#include <vector>

#include "runners/http_spec.h"

namespace baton::runners {

// Response header fields as received, in order.
using HttpFields = std::vector<std::pair<std::string, std::string>>;

// {"status": N, "headers": {lower-case name: value}, "body": ...}: a repeated header's
// values joined with ", "; the body parsed as JSON when the Content-Type is JSON or
// absent and the text is JSON, else text (invalid UTF-8 as U+FFFD), "" when empty. No
// "body" when `body` is nullptr.
Json ResponseOutput(int status, const HttpFields& fields, const std::string* body);

bool IsRedirect(int status);

// Where a redirect response leads.
struct RedirectPlan {
  enum Kind {
    kFinal,   // not followed (no Location): the response is the result as it is
    kFollow,  // `spec` now describes the next hop
    kRefuse,  // fails with HTTP_STATUS: `message`
  };
  Kind kind = kFinal;
  std::string message;
};

// For a redirect status with `location` (nullptr when absent), after `followed`
// redirects: updates `spec` for the next hop (URL; 303 makes a GET without a body;
// credentials dropped when scheme, host or port change) or says why not.
RedirectPlan PlanRedirect(HttpSpec& spec, int followed, int status, const std::string* location);

}  // namespace baton::runners
