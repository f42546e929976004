// Templates: `{{ inputs.model_id }}` inside strings of a step's fields.
//
// A string that is exactly one template (surrounding spaces allowed) becomes the
// referenced value with its JSON type; templates inside longer text are converted to
// text (strings as-is, numbers/booleans/null as JSON, objects/arrays as compact JSON).
// Substituted text is never parsed again, so values cannot inject templates.
#pragma once

#include "expr/path.h"

#include <vector>

namespace baton::expr {

// True when any string inside `value` (recursively) contains "{{".
bool HasTemplates(const Json& value);

// Renders every string inside `value`, recursively through arrays and objects (object
// keys are not rendered). A reference that does not resolve is an error with code
// TEMPLATE_ERROR whose message names it: "unresolved reference 'steps.a.output.x'".
// A malformed template ("{{ a. }}", unclosed "{{") is TEMPLATE_ERROR too.
Result<Json> Render(const Json& value, const Scope& scope);

// The paths referenced by every template inside `value`, in order of appearance.
// Malformed templates are VALIDATION errors naming the template text.
Status CollectReferences(const Json& value, std::vector<Path>* out);

}  // namespace baton::expr
