// ParseWorkflow: the document's top level (name, inputs, defaults, ...), then steps,
// graph and references, all diagnostics collected in one pass.
#include "model/builder.h"

#include "common/json_parse.h"
#include "expr/condition.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <string_view>
#include <unordered_map>

namespace baton {
namespace model {

bool IsWorkflowName(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameBytes) return false;
  auto lower_or_digit = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (!lower_or_digit(s[0])) return false;
  for (char c : s) {
    if (!lower_or_digit(c) && c != '_' && c != '.' && c != '-') return false;
  }
  return true;
}

namespace {

ConcurrencySpec ParseConcurrency(const Json& c, Diags& d, const Where& w) {
  ConcurrencySpec spec;
  if (!ExpectObject(c, d, w)) return spec;
  CheckFields(c, {"limit", "key", "policy"}, d, w);
  if (c.contains("limit")) {
    std::optional<int64_t> v = GetInt(c["limit"], d, w.Key("limit"));
    if (v && (*v < 1 || *v > 1'000'000)) {
      d.Add(w.Key("limit"), "must be an integer from 1 to 1000000");
    } else if (v) {
      spec.limit = static_cast<int>(*v);
    }
  }
  if (c.contains("key")) {
    if (auto key = GetString(c["key"], d, w.Key("key"))) {
      if (key->size() > 1024) d.Add(w.Key("key"), "longer than 1024 bytes");
      spec.key = *key;
    }
  }
  if (c.contains("policy")) {
    if (auto p = GetString(c["policy"], d, w.Key("policy"))) {
      if (*p == "queue") {
        spec.policy = ConcurrencyPolicy::kQueue;
      } else if (*p == "cancel_newest") {
        spec.policy = ConcurrencyPolicy::kCancelNewest;
      } else if (*p == "cancel_oldest") {
        spec.policy = ConcurrencyPolicy::kCancelOldest;
      } else {
        d.Add(w.Key("policy"), "unknown policy '" + Abbreviated(*p) +
                                   "' (expected queue, cancel_newest or cancel_oldest)");
      }
    }
  }
  return spec;
}

// Input names are path identifiers, so `{{ inputs.NAME }}` can reach them.
bool IsIdentifier(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameBytes) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s) {
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '-') return false;
  }
  return true;
}

void ParseInputs(const Json& inputs, Diags& d, const Where& where, WorkflowDef* wf) {
  if (!ExpectObject(inputs, d, where)) return;
  for (const auto& [name, decl_json] : inputs.items()) {
    Where w = where.Key(name);
    if (!IsIdentifier(name)) {
      d.Add(w, "invalid input name '" + Abbreviated(name) +
                   "' (expected letters, digits, '_' or '-', starting with a letter or '_', at "
                   "most 253 bytes)");
    }
    InputDecl decl;
    decl.name = name;
    if (decl_json.is_string()) {  // shorthand: `name: integer`
      decl.type = decl_json.get<std::string>();
      if (!IsInputType(decl.type)) {
        d.Add(w, "unknown input type '" + decl.type + "' (valid: " + InputTypeList() + ")");
      }
      wf->inputs.push_back(std::move(decl));
      continue;
    }
    if (decl_json.is_null()) {
      wf->inputs.push_back(std::move(decl));
      continue;
    }
    if (!ExpectObject(decl_json, d, w)) continue;
    CheckFields(decl_json, {"type", "required", "default", "description"}, d, w);
    bool type_ok = true;
    if (decl_json.contains("type")) {
      Where tw = w.Key("type");
      std::optional<std::string> type = GetString(decl_json["type"], d, tw);
      if (type && IsInputType(*type)) {
        decl.type = *type;
      } else {
        type_ok = false;
        if (type) d.Add(tw, "unknown input type '" + *type + "' (valid: " + InputTypeList() + ")");
      }
    } else if (decl_json.contains("default")) {
      // No declared type: the default's type is the input's.
      const Json& def = decl_json["default"];
      std::string t = TypeName(def);
      if (IsInputType(t)) decl.type = t;
    }
    if (decl_json.contains("required")) {
      if (auto b = GetBool(decl_json["required"], d, w.Key("required"))) decl.required = *b;
    }
    if (decl_json.contains("description")) {
      if (auto s = GetString(decl_json["description"], d, w.Key("description"))) {
        decl.description = *s;
      }
    }
    if (decl_json.contains("default")) {
      const Json& def = decl_json["default"];
      if (type_ok && !MatchesInputType(def, decl.type)) {
        d.Add(w.Key("default"), "default does not match type " + decl.type + ": expected " +
                                    decl.type + ", got " + TypeName(def));
      }
      decl.default_value = def;
    }
    wf->inputs.push_back(std::move(decl));
  }
}

// The terminal events a notification may be sent for.
constexpr const char* kNotifyEvents[] = {"execution.cancelled", "execution.completed",
                                         "execution.failed", "execution.timed_out"};

void ParseNotify(const Json& v, Diags& d, const Where& where) {
  if (!ExpectArray(v, d, where)) return;
  for (size_t i = 0; i < v.size(); ++i) {
    Where w = where.Index(i);
    const Json& entry = v[i];
    if (!ExpectObject(entry, d, w)) continue;
    CheckFields(entry, {"url", "events"}, d, w);
    if (!entry.contains("url")) {
      MissingField("url", d, w);
    } else if (auto url = GetString(entry["url"], d, w.Key("url"))) {
      // Templates are not rendered here: the URL is used as written.
      if (url->rfind("http://", 0) != 0 && url->rfind("https://", 0) != 0) {
        d.Add(w.Key("url"), "expected an http:// or https:// URL, got '" + *url + "'");
      }
    }
    if (entry.contains("events")) {
      Where ew = w.Key("events");
      if (ExpectArray(entry["events"], d, ew)) {
        for (size_t k = 0; k < entry["events"].size(); ++k) {
          auto event = GetString(entry["events"][k], d, ew.Index(k));
          if (event && std::find(std::begin(kNotifyEvents), std::end(kNotifyEvents), *event) ==
                           std::end(kNotifyEvents)) {
            d.Add(ew.Index(k), "unknown event '" + *event +
                                   "' (valid: execution.cancelled, execution.completed, "
                                   "execution.failed, execution.timed_out)");
          }
        }
      }
    }
  }
}

}  // namespace

StepDefaults ParseDefaults(const Json& v, Diags& d, const Where& where) {
  StepDefaults out;
  if (!ExpectObject(v, d, where)) return out;
  CheckFields(v,
              {"timeout", "heartbeat_timeout", "retry", "priority", "trigger_rule", "optional",
               "circuit_breaker"},
              d, where);
  if (v.contains("timeout")) out.timeout = GetTimeout(v["timeout"], d, where.Key("timeout"));
  if (v.contains("heartbeat_timeout")) {
    out.heartbeat_timeout = GetTimeout(v["heartbeat_timeout"], d, where.Key("heartbeat_timeout"));
  }
  if (v.contains("retry")) ApplyRetry(v["retry"], &out.retry, d, where.Key("retry"));
  if (v.contains("priority")) {
    if (auto p = GetPriority(v["priority"], d, where.Key("priority"))) out.priority = *p;
  }
  if (v.contains("trigger_rule")) {
    if (auto r = GetTriggerRule(v["trigger_rule"], d, where.Key("trigger_rule"))) {
      out.trigger_rule = *r;
    }
  }
  if (v.contains("optional")) {
    if (auto b = GetBool(v["optional"], d, where.Key("optional"))) out.optional = *b;
  }
  if (v.contains("circuit_breaker")) {
    CircuitBreakerSpec breaker;
    ApplyCircuitBreaker(v["circuit_breaker"], &breaker, d, where.Key("circuit_breaker"));
    out.circuit_breaker = breaker;
  }
  return out;
}

ParseOutcome BuildWorkflow(Json doc, const LineMap& lines, const std::string& file,
                           std::vector<Diagnostic> earlier, PreparsedSteps* preparsed,
                           std::shared_ptr<const std::string> source) {
  Diags d(file, &lines);
  d.Append(std::move(earlier));
  Where root;
  if (doc.is_null()) {
    d.Add(root, "empty workflow document");
    return ParseOutcome{std::nullopt, d.Take()};
  }
  if (!doc.is_object()) {
    d.Add(root, std::string("expected an object at the top level, got ") + TypeName(doc));
    return ParseOutcome{std::nullopt, d.Take()};
  }
  WorkflowDef wf;
  wf.source_name = file;
  CheckFields(doc,
              {"name", "version", "description", "inputs", "timeout", "max_parallel", "priority",
               "fail_fast", "concurrency", "vars", "defaults", "steps", "output", "notify"},
              d, root);
  if (!doc.contains("name")) {
    MissingField("name", d, root);
  } else if (auto name = GetString(doc["name"], d, root.Key("name"))) {
    if (!IsWorkflowName(*name)) {
      d.Add(root.Key("name"), "invalid workflow name '" + Abbreviated(*name) +
                                  "' (expected [a-z0-9][a-z0-9_.-]*, at most 253 bytes)");
    }
    wf.name = *name;
  }
  if (doc.contains("version")) {
    Where w = root.Key("version");
    std::optional<int64_t> v = GetInt(doc["version"], d, w);
    if (v && (*v < 1 || *v > std::numeric_limits<int>::max())) {
      d.Add(w, "must be an integer >= 1");
    } else if (v) {
      wf.version = static_cast<int>(*v);
    }
  }
  if (doc.contains("description")) {
    if (auto s = GetString(doc["description"], d, root.Key("description"))) wf.description = *s;
  }
  bool inputs_declared = doc.contains("inputs") && !doc["inputs"].is_null();
  if (inputs_declared) ParseInputs(doc["inputs"], d, root.Key("inputs"), &wf);
  if (doc.contains("timeout")) wf.timeout = GetTimeout(doc["timeout"], d, root.Key("timeout"));
  if (doc.contains("max_parallel")) {
    Where w = root.Key("max_parallel");
    std::optional<int64_t> v = GetInt(doc["max_parallel"], d, w);
    if (v && (*v < 1 || *v > std::numeric_limits<int>::max())) {
      d.Add(w, "must be an integer >= 1");
    } else if (v) {
      wf.max_parallel = static_cast<int>(*v);
    }
  }
  if (doc.contains("priority")) {
    if (auto p = GetPriority(doc["priority"], d, root.Key("priority"))) wf.priority = *p;
  }
  if (doc.contains("fail_fast")) {
    if (auto b = GetBool(doc["fail_fast"], d, root.Key("fail_fast"))) wf.fail_fast = *b;
  }
  if (doc.contains("vars")) {
    if (ExpectObject(doc["vars"], d, root.Key("vars"))) wf.vars = doc["vars"];
  }
  if (doc.contains("concurrency")) {
    wf.concurrency = ParseConcurrency(doc["concurrency"], d, root.Key("concurrency"));
  }
  StepDefaults defaults;
  if (doc.contains("defaults")) defaults = ParseDefaults(doc["defaults"], d, root.Key("defaults"));
  if (doc.contains("output")) wf.output = doc["output"];
  if (doc.contains("notify")) {
    ParseNotify(doc["notify"], d, root.Key("notify"));
    wf.notify = doc["notify"];
  }
  std::vector<StepSite> sites;
  if (!doc.contains("steps")) {
    MissingField("steps", d, root);
  } else {
    Where w = root.Key("steps");
    const Json& steps = doc["steps"];
    if (ExpectArray(steps, d, w)) {
      if (preparsed != nullptr ? preparsed->steps.empty() : steps.empty()) {
        d.Add(w, "a workflow needs at least one step");
      } else if (preparsed != nullptr) {
        wf.steps = std::move(preparsed->steps);
        sites = std::move(preparsed->sites);
      } else {
        ParseSteps(steps, defaults, d, &wf, &sites);
      }
    }
  }
  // One index and one graph for every check, kept in the plan when the checks pass.
  const StepIndex index = IndexSteps(wf);
  StepGraph graph = GraphOf(wf, index, nullptr);
  ValidateGraph(wf, sites, index, graph, d);
  std::vector<std::unique_ptr<const expr::Condition>> conditions =
      ValidateReferences(wf, sites, index, graph, inputs_declared, d);
  // The one child-workflow cycle a single file shows: a step starting its own workflow
  // (longer cycles need the other files: the engine checks them when a child starts).
  for (size_t i = 0; i < wf.steps.size() && i < sites.size(); ++i) {
    const StepDef& step = wf.steps[i];
    auto child = step.spec.find("workflow");
    if (step.type == StepType::kWorkflow && child != step.spec.end() && *child == wf.name) {
      d.Add(sites[i].where.Key("workflow"),
            "starts its own workflow '" + wf.name + "' as a child: a cycle");
    }
  }
  if (d.size() > 0) return ParseOutcome{std::nullopt, d.Take()};
  Result<std::shared_ptr<const WorkflowPlan>> plan =
      FinishPlan(wf, std::move(graph), std::move(conditions));
  if (!plan.ok()) {  // validation has ruled out what FinishPlan refuses: a bug if seen
    d.Add(root, "internal error: " + plan.status().message());
    return ParseOutcome{std::nullopt, d.Take()};
  }
  wf.plan = std::move(plan).value();
  wf.source = source ? std::move(source) : std::make_shared<const std::string>(doc.dump());
  return ParseOutcome{std::move(wf), {}};
}

}  // namespace model

namespace {

// `snapshot`, when given, holds `text` and becomes the definition's snapshot as it is.
ParseOutcome ParseWorkflowText(std::string_view text, std::string_view source_name,
                               std::shared_ptr<const std::string> snapshot) {
  std::string file(source_name);
  try {
    // A valid JSON document is read a step at a time; anything else takes the path below,
    // which reports every problem with its line.
    // (`snapshot` is copied, not moved: it may own `text`, which the path below reads.)
    if (auto fast = model::ParseJsonWorkflow(text, file, snapshot)) {
      return std::move(*fast);
    }
    model::SourceDoc doc = model::ParseSource(text, file);
    if (doc.syntax_error) return ParseOutcome{std::nullopt, std::move(doc.diagnostics)};
    return model::BuildWorkflow(std::move(doc.value), doc.lines, file, std::move(doc.diagnostics),
                                nullptr, nullptr);
  } catch (const std::exception& e) {
    // A bug, not bad input; still a value, never an exception across the module boundary.
    return ParseOutcome{std::nullopt,
                        {Diagnostic{file, 0, "", "", std::string("internal error: ") + e.what()}}};
  }
}

}  // namespace

ParseOutcome ParseWorkflow(std::string_view text, std::string_view source_name) {
  return ParseWorkflowText(text, source_name, nullptr);
}

ParseOutcome LoadWorkflowFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return ParseOutcome{std::nullopt,
                        {Diagnostic{path, 0, "", "", "cannot read file: it is a directory"}}};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return ParseOutcome{
        std::nullopt,
        {Diagnostic{path, 0, "", "", std::string("cannot read file: ") + std::strerror(errno)}}};
  }
  // Read straight into one string of the file's size (a stream copy doubles the peak),
  // which a valid JSON definition then keeps as its snapshot, uncopied.
  auto text = std::make_shared<std::string>();
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec) text->reserve(static_cast<size_t>(size));
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text->append(chunk, static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) {
    return ParseOutcome{std::nullopt, {Diagnostic{path, 0, "", "", "cannot read file"}}};
  }
  const std::string_view view = *text;
  return ParseWorkflowText(view, path, std::move(text));
}

Result<WorkflowDef> WorkflowFromSnapshot(const Json& source, std::string_view source_name) {
  std::string file(source_name);
  ParseOutcome outcome;
  try {
    model::LineMap no_lines;
    outcome = model::BuildWorkflow(source, no_lines, file, {}, nullptr, nullptr);
  } catch (const std::exception& e) {
    return Status(errc::kValidation, std::string("internal error: ") + e.what());
  }
  if (!outcome.ok()) return outcome.ToStatus();
  return std::move(*outcome.workflow);
}

Result<WorkflowDef> WorkflowFromSnapshot(std::shared_ptr<const std::string> source,
                                         std::string_view source_name) {
  std::string file(source_name);
  if (!source) return Status(errc::kValidation, file + ": no stored definition");
  ParseOutcome outcome;
  try {
    if (auto fast = model::ParseJsonWorkflow(*source, file, source))
      return std::move(*fast->workflow);
    Json doc;
    JsonParseError error;
    if (!ParseJsonText(*source, &doc, &error)) {
      return Status(errc::kValidation,
                    file + ": the stored definition is not valid JSON: " + error.Describe());
    }
    model::LineMap no_lines;
    outcome = model::BuildWorkflow(std::move(doc), no_lines, file, {}, nullptr, std::move(source));
  } catch (const std::exception& e) {
    return Status(errc::kValidation, std::string("internal error: ") + e.what());
  }
  if (!outcome.ok()) return outcome.ToStatus();
  return std::move(*outcome.workflow);
}

}  // namespace baton
