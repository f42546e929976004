// Test-only: a sample scope shaped like an execution's state, shared by the expr tests.
#pragma once

#include "expr/condition.h"
#include "expr/path.h"

#include <gtest/gtest.h>

#include <string>

namespace baton::expr::testing_util {

inline const Json& SampleRoot() {
  static const Json kRoot = Json::parse(R"({
    "inputs": {
      "name": "llama", "count": 3, "ratio": 0.5, "big": 3.0, "flag": true, "off": false,
      "tags": ["gpu", "fast"], "nums": [1, 2, 3], "blank": "", "none": [], "obj0": {},
      "nothing": null, "meta": {"owner": "ops", "level": 2}, "bad_re": "(",
      "type": "integer"
    },
    "steps": {
      "a": {
        "output": {
          "x": 3, "f": 3.0, "path": "/models/llama-7b", "port": 8080,
          "items": [{"name": "first"}, {"name": "second", "tags": ["x"]}],
          "matrix": [[1, 2], [3, 4]],
          "evil": "{{ inputs.name }}"
        },
        "status": "completed"
      },
      "1st": {"output": 7, "status": "completed"},
      "my-step": {"output": {"ok": true}, "status": "failed"}
    },
    "execution": {"id": "ex-1"}
  })");
  return kRoot;
}

inline const Scope& SampleScope() {
  static const JsonScope kScope(SampleRoot());
  return kScope;
}

// A `when` written as text: JSON when it starts with '{' (or is true/false), else an
// expression string.
inline Json When(const std::string& text) {
  if (!text.empty() && (text[0] == '{' || text == "true" || text == "false")) {
    return Json::parse(text);
  }
  return Json(text);
}

// Compiles and evaluates against the sample scope; compile errors are returned as is.
inline Result<bool> Eval(const std::string& text) {
  Result<Condition> cond = CompileCondition(When(text));
  if (!cond.ok()) return cond.status();
  return cond->Evaluate(SampleScope());
}

}  // namespace baton::expr::testing_util
