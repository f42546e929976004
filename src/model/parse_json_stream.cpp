// ParseJsonWorkflow: a valid JSON workflow read a step at a time.
//
// A whole-document DOM costs ~430 bytes per noop step (one std::map node per member), more
// than the parsed StepDef itself, and it was kept for the life of the definition as its
// snapshot. Here each element of `steps` is parsed into its StepDef as soon as the reader
// has it and dropped, unless a later check must read it again (templates, set_vars,
// for_each); the snapshot is the text itself. Only valid documents take this path: at the
// first problem it gives up, and the DOM path, which names every problem with its line,
// reads the text again. Errors are rare; the second read is their cost.
#include "common/json_parse.h"
#include "model/builder.h"

#include <algorithm>

namespace baton::model {
std::optional<ParseOutcome> ParseJsonWorkflow(std::string_view text, const std::string& file,
                                              std::shared_ptr<const std::string> snapshot) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos || text[first] != '{') return std::nullopt;
  if (FindInvalidUtf8(text) != std::string_view::npos ||
      FindControlCharacter(text) != std::string_view::npos) {
    return std::nullopt;
  }
  // One line per element of `steps`: also how many StepDefs to reserve, so the vector
  // never holds two copies while it grows. Only the steps' lines: a diagnostic here only
  // sends the document to the whole read, which finds every other line itself.
  std::vector<int> step_lines = JsonStepLines(text);
  // The text is not known to be JSON yet: the count is trusted once the first element
  // is an object, and never beyond what the text can hold (a step takes 20 bytes at the
  // least: {"id":"a","type":"x"}).
  const size_t expected_steps = std::min(step_lines.size(), text.size() / 20);
  PreparsedSteps pre;
  LineMap lines;
  if (!snapshot) lines.SetLazy(std::move(step_lines), nullptr);
  Diags d(file, &lines);

  StepDefaults defaults;
  bool defaults_read = false;  // `defaults` came before `steps`, as the steps need it
  const Where list{"/steps", "", "steps"};
  JsonArrayStream stream{
      "steps", [&](const Json& root, size_t index, Json& s) {
        if (index == 0) {
          if (auto it = root.find("defaults"); it != root.end()) {
            // Its problems are the top level's to report.
            Diags unused(file, nullptr);
            defaults = ParseDefaults(*it, unused, Where{});
            defaults_read = true;
          }
        }
        if (!s.is_object()) return false;
        if (index == 0) {
          pre.steps.reserve(expected_steps);
          pre.sites.reserve(expected_steps);
        }
        StepSite& site = pre.sites.emplace_back(StepSite{list.Index(index), nullptr, false});
        ParseStep(s, defaults, d, &site, pre.steps.emplace_back());
        if (d.size() > 0) return false;
        if (HasTemplate(s) || s.contains("set_vars") || s.contains("for_each")) {
          site.json = &pre.kept.emplace_back(std::move(s));
        }
        return true;
      }};
  Json doc;
  JsonParseLimits limits;
  limits.refuse_duplicate_keys = true;
  if (!ParseJsonText(text, &doc, nullptr, limits, stream)) return std::nullopt;
  if (!doc.is_object()) return std::nullopt;
  // Steps parsed without the defaults written after them: read again, whole.
  if (!pre.steps.empty() && doc.contains("defaults") && !defaults_read) return std::nullopt;
  // The text as written is the snapshot: valid JSON, and read again the same way.
  if (!snapshot) snapshot = std::make_shared<const std::string>(text);
  ParseOutcome outcome = BuildWorkflow(std::move(doc), lines, file, {}, &pre, std::move(snapshot));
  if (!outcome.ok()) return std::nullopt;
  return outcome;
}

}  // namespace baton::model
