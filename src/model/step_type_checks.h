// The fields of a step's type, checked (step_type_checks.cpp). Private to the model.
#pragma once

#include "model/builder.h"

namespace baton::model {

// Adds to `d` what is wrong in `spec`, the fields of a step of `type` (its common fields
// were read already); `w` is the step's place.
void CheckTypeFields(StepType type, const Json& spec, Diags& d, const Where& w);

}  // namespace baton::model
