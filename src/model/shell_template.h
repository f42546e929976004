// Templates inside a shell script string never become shell text.
//
// `run: "echo {{ inputs.x }}"` used to paste the value into the script that /bin/sh
// parses, so an input of `$(touch pwned)` ran. Instead each template is replaced by a
// positional parameter that the shell expands as data (`"${1}"`, quoted for the place
// it stands in), and the template itself moves to the step's `args`, rendered like any
// other field and passed as `sh -c SCRIPT baton ARG1 ARG2 ...`.
//
// Internal to the model module (the builder rewrites shell steps with it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace baton::model {

struct ShellTemplateSplit {
  std::string script;             // the templates replaced by parameter references
  std::vector<std::string> args;  // "{{ ... }}" of each, in order ($first, $first+1, ...)
};

// Rewrites every `{{ ... }}` of `script`. Parameters are numbered from `first` (after the
// step's own `args`). The quoting follows a small shell lexer: outside quotes
// `"${N}"`, inside double quotes and unquoted here-documents `${N}`, inside single
// quotes `'"${N}"'` (close, insert, reopen). An unclosed `{{` is left as it is (the
// template checks report it).
ShellTemplateSplit SplitShellTemplates(std::string_view script, size_t first);

}  // namespace baton::model
