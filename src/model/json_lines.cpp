// Lines of a JSON workflow's steps without building a line map.
#include "model/source.h"

namespace baton::model {

std::vector<int> JsonStepLines(std::string_view text) {
  std::vector<int> lines;
  int line = 1;
  int depth = 0;            // containers open at the current byte
  bool in_steps = false;    // inside the top-level "steps" array (at depth 2)
  bool want_value = false;  // in `steps`, the next non-space byte starts an element
  std::string_view last_key;
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (in_steps && depth == 2 && want_value && c != ']') {
      lines.push_back(line);
      want_value = false;
    }
    if (c == '"') {
      // A string: skip to its closing quote. Escapes cannot hide a newline (JSON
      // strings hold none raw), so lines need no care here.
      const size_t start = ++i;
      while (i < n && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      if (depth == 1) last_key = text.substr(start, i - start);
      ++i;
      continue;
    }
    if (c == '{' || c == '[') {
      ++depth;
      if (depth == 2 && c == '[' && last_key == "steps" && lines.empty()) {
        in_steps = true;
        want_value = true;
      }
    } else if (c == '}' || c == ']') {
      if (in_steps && depth == 2) return lines;  // the end of `steps`
      --depth;
    } else if (c == ',' && in_steps && depth == 2) {
      want_value = true;
    }
    ++i;
  }
  return lines;
}

}  // namespace baton::model
