#include "store/postgres/pg_arrays.h"

namespace baton::pg {

void ArrayLiteral::AddText(std::string_view s) {
  std::string& out = Separate();
  out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  size_t run = 0;  // copy the stretches between escapes in one go
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"' || s[i] == '\\') {
      out.append(s.substr(run, i - run));
      out.push_back('\\');
      run = i;
    }
  }
  out.append(s.substr(run));
  out.push_back('"');
}

std::string TextArray(const std::vector<std::string>& values) {
  ArrayLiteral a;
  for (const std::string& v : values) a.AddText(v);
  return a.Finish();
}

std::string IntArray(const std::vector<int64_t>& values) {
  ArrayLiteral a;
  for (int64_t v : values) a.AddInt(v);
  return a.Finish();
}

}  // namespace baton::pg
