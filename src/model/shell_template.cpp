#include "model/shell_template.h"

namespace baton::model {
namespace {

enum class Quote { kNone, kSingle, kDouble, kHereDoc };

struct Frame {
  Quote quote = Quote::kNone;
  int parens = 0;  // open `(` inside this $( ... ) or subshell
};

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

}  // namespace

ShellTemplateSplit SplitShellTemplates(std::string_view s, size_t first) {
  ShellTemplateSplit out;
  std::vector<Frame> stack = {Frame{}};
  std::vector<std::string> pending_heredocs;  // delimiters whose bodies start next line
  std::string heredoc_end;                    // inside a here-document body
  size_t i = 0;
  auto reference = [&](Quote q) {
    std::string n = "${" + std::to_string(first + out.args.size()) + "}";
    switch (q) {
      case Quote::kNone:
        return "\"" + n + "\"";
      case Quote::kSingle:
        return "'\"" + n + "\"'";
      case Quote::kDouble:
      case Quote::kHereDoc:
        return n;
    }
    return n;
  };
  while (i < s.size()) {
    Quote q = heredoc_end.empty() ? stack.back().quote : Quote::kHereDoc;
    if (s.compare(i, 2, "{{") == 0) {
      size_t close = s.find("}}", i + 2);
      if (close == std::string_view::npos) {
        out.script.append(s.substr(i));
        break;
      }
      out.script += reference(q);
      out.args.emplace_back(s.substr(i, close + 2 - i));
      i = close + 2;
      continue;
    }
    char c = s[i];
    if (q == Quote::kHereDoc) {
      // A body line that is exactly the delimiter (tabs allowed before it) ends it.
      size_t line_end = s.find('\n', i);
      if (line_end == std::string_view::npos) line_end = s.size();
      bool at_line_start = i == 0 || s[i - 1] == '\n';
      if (at_line_start) {
        std::string_view line = s.substr(i, line_end - i);
        while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
        if (line == heredoc_end) {
          out.script.append(s.substr(i, line_end - i));
          i = line_end;
          heredoc_end.clear();
          if (!pending_heredocs.empty()) {
            heredoc_end = pending_heredocs.front();
            pending_heredocs.erase(pending_heredocs.begin());
            if (i < s.size()) out.script += s[i++];  // the newline; the next body starts
          }
          continue;
        }
      }
      out.script += c;
      ++i;
      continue;
    }
    out.script += c;
    ++i;
    switch (q) {
      case Quote::kSingle:
        if (c == '\'') stack.back().quote = Quote::kNone;
        break;
      case Quote::kDouble:
        if (c == '\\' && i < s.size()) {
          out.script += s[i++];
        } else if (c == '"') {
          stack.back().quote = Quote::kNone;
        } else if (c == '$' && i < s.size() && s[i] == '(') {
          out.script += s[i++];
          stack.push_back(Frame{});
        }
        break;
      case Quote::kNone:
      case Quote::kHereDoc:
        if (c == '\\' && i < s.size()) {
          out.script += s[i++];
        } else if (c == '\'') {
          stack.back().quote = Quote::kSingle;
        } else if (c == '"') {
          stack.back().quote = Quote::kDouble;
        } else if (c == '$' && i < s.size() && s[i] == '(') {
          out.script += s[i++];
          stack.push_back(Frame{});
        } else if (c == '(') {
          ++stack.back().parens;
        } else if (c == ')') {
          if (stack.back().parens > 0) {
            --stack.back().parens;
          } else if (stack.size() > 1) {
            stack.pop_back();
          }
        } else if (c == '<' && i < s.size() && s[i] == '<' &&
                   (i + 1 >= s.size() || s[i + 1] != '<')) {
          // <<WORD, <<-WORD, <<'WORD', <<"WORD": the body starts after this line.
          out.script += s[i++];
          if (i < s.size() && s[i] == '-') out.script += s[i++];
          while (i < s.size() && s[i] == ' ') out.script += s[i++];
          std::string word;
          while (i < s.size() && (IsWordChar(s[i]) || s[i] == '\'' || s[i] == '"')) {
            if (s[i] != '\'' && s[i] != '"') word += s[i];
            out.script += s[i++];
          }
          if (!word.empty()) pending_heredocs.push_back(word);
        } else if (c == '\n' && !pending_heredocs.empty()) {
          heredoc_end = pending_heredocs.front();
          pending_heredocs.erase(pending_heredocs.begin());
        }
        break;
    }
  }
  return out;
}

}  // namespace baton::model
