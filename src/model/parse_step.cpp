// One step: common fields, defaults inheritance, and the fields of its type.
#include "model/builder.h"
#include "model/shell_template.h"
#include "model/step_type_checks.h"

#include <algorithm>
#include <cctype>
#include <unordered_set>

namespace baton::model {
namespace {

// The fields every step type takes. As bits: a step's keys are matched against them
// once, then each "is it there" in ParseStep is a bit test, not a search of the step's
// map (~20 per step).
constexpr std::string_view kCommonFieldBits[] = {"id",
                                                 "name",
                                                 "description",
                                                 "type",
                                                 "depends_on",
                                                 "when",
                                                 "trigger_rule",
                                                 "optional",
                                                 "timeout",
                                                 "heartbeat_timeout",
                                                 "retry",
                                                 "priority",
                                                 "with",
                                                 "for_each",
                                                 "cache",
                                                 "set_vars",
                                                 "expected_duration",
                                                 "circuit_breaker",
                                                 "pool",
                                                 "pool_slots"};

const std::vector<std::string> kCommonFields(std::begin(kCommonFieldBits),
                                             std::end(kCommonFieldBits));

const std::vector<std::string>& TypeFields(StepType type) {
  static const std::vector<std::string> kNoop;
  static const std::vector<std::string> kShell = {"run",   "args",       "env",    "cwd",
                                                  "stdin", "max_output", "memory", "cpu_time"};
  static const std::vector<std::string> kHttp = {"request", "accept"};
  static const std::vector<std::string> kWait = {"duration", "until", "signal", "schema"};
  static const std::vector<std::string> kCommand = {"command", "resource", "target", "data"};
  static const std::vector<std::string> kWorkflow = {"workflow", "version", "input"};
  switch (type) {
    case StepType::kNoop:
      return kNoop;
    case StepType::kShell:
      return kShell;
    case StepType::kHttp:
      return kHttp;
    case StepType::kWait:
      return kWait;
    case StepType::kCommand:
      return kCommand;
    case StepType::kWorkflow:
      return kWorkflow;
  }
  return kNoop;
}

// The bit of a common field; a name not in the table does not compile.
consteval int Bit(std::string_view name) {
  for (size_t i = 0; i < std::size(kCommonFieldBits); ++i) {
    if (kCommonFieldBits[i] == name) return static_cast<int>(i);
  }
  throw "not a common step field";
}

class CommonKeys {
 public:
  explicit CommonKeys(const Json& step) {
    for (const auto& [key, value] : step.items()) {
      size_t i = 0;
      while (i < std::size(kCommonFieldBits) && kCommonFieldBits[i] != key) ++i;
      if (i < std::size(kCommonFieldBits)) {
        bits_ |= uint64_t{1} << i;
      } else {
        all_common_ = false;
      }
    }
  }
  bool has(int bit) const { return (bits_ >> bit) & 1; }
  // Every key is a common field (then no type's field list needs a look).
  bool all_common() const { return all_common_; }

 private:
  uint64_t bits_ = 0;
  bool all_common_ = true;
};

// A string `run`'s templates become positional parameters (see shell_template.h).
void MoveShellTemplatesToArgs(Json* spec) {
  auto run = spec->find("run");
  if (run == spec->end() || !run->is_string() || !HasTemplate(*run)) return;
  Json& args = (*spec)["args"];
  if (args.is_null()) args = Json::array();
  if (!args.is_array()) return;  // reported by CheckShell
  ShellTemplateSplit split =
      SplitShellTemplates(run->get_ref<const std::string&>(), args.size() + 1);
  *run = std::move(split.script);
  for (std::string& t : split.args) args.push_back(std::move(t));
}

constexpr StepType kAllTypes[] = {StepType::kNoop, StepType::kShell,   StepType::kHttp,
                                  StepType::kWait, StepType::kCommand, StepType::kWorkflow};

bool IsStepId(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameBytes) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

// A runtime variable's name: what `{{ vars.NAME }}` can reach.
bool IsVarName(const std::string& name) {
  if (name.empty() || name.size() > 64 || std::isdigit(static_cast<unsigned char>(name[0]))) {
    return false;
  }
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

void ParseSetVars(const Json& v, Diags& d, const Where& w, StepDef* step) {
  if (!ExpectObject(v, d, w)) return;
  if (v.empty()) return d.Add(w, "expected at least one variable");
  for (const auto& [name, value] : v.items()) {
    if (!IsVarName(name)) {
      d.Add(w.Key(name),
            "a variable name is 1 to 64 letters, digits or '_', not starting "
            "with a digit");
    }
  }
  step->edit_extra().set_vars = v;
}

void ParseDependsOn(const Json& v, Diags& d, const At& w, StepDef* step) {
  std::vector<std::string>& deps = step->depends_on;
  // Repeats are dropped: by a scan while the list is short (the common case allocates
  // nothing), by a set once it is long.
  std::unordered_set<std::string_view> seen;
  auto add = [&deps, &seen](const std::string& id) {
    if (deps.size() < 32) {
      if (std::find(deps.begin(), deps.end(), id) != deps.end()) return;
    } else {
      if (seen.empty()) seen.insert(deps.begin(), deps.end());
      if (!seen.insert(id).second) return;
    }
    deps.push_back(id);
  };
  if (v.is_string()) {
    add(v.get<std::string>());
    return;
  }
  if (!v.is_array()) {
    d.Add(w, std::string("expected array of step ids or a string, got ") + TypeName(v));
    return;
  }
  deps.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i].is_string()) {
      add(v[i].get_ref<const std::string&>());
    } else {
      GetString(v[i], d, At(w, i));  // reports it
    }
  }
}

void ParseCache(const Json& v, Diags& d, const Where& w, StepDef* step) {
  if (!ExpectObject(v, d, w)) return;
  CheckFields(v, {"ttl", "key"}, d, w);
  CacheSpec cache;
  if (v.contains("ttl")) cache.ttl = GetTimeout(v["ttl"], d, {w, "ttl"});
  if (v.contains("key")) {
    cache.key = v["key"];
    if (!cache.key.is_null() && !cache.key.is_string()) {
      d.Add(w.Key("key"), std::string("expected string, got ") + TypeName(cache.key));
    }
  }
  step->edit_extra().cache = std::move(cache);
}

// The step's own circuit_breaker over the defaults' (which only http and command steps
// take: they are the ones calling a dependency the breaker can stand for).
void ParseStepBreaker(const Json& s, const CommonKeys& keys, const StepDefaults& defaults, Diags& d,
                      const Where& w, StepDef* step) {
  const bool calls_out = step->type == StepType::kHttp || step->type == StepType::kCommand;
  if (calls_out && defaults.circuit_breaker) {
    step->edit_extra().circuit_breaker = defaults.circuit_breaker;
  }
  if (!keys.has(Bit("circuit_breaker"))) return;
  CircuitBreakerSpec breaker = step->extra().circuit_breaker.value_or(CircuitBreakerSpec{});
  const size_t before = d.size();
  Where bw = w.Key("circuit_breaker");
  ApplyCircuitBreaker(s["circuit_breaker"], &breaker, d, bw);
  if (d.size() != before) return;
  if (breaker.key.empty() && !calls_out) {
    d.Add(bw.Key("key"), std::string("required for a ") + ToString(step->type) +
                             " step (only http and command steps have a default key: the "
                             "host, the command)");
    return;
  }
  step->edit_extra().circuit_breaker = breaker;
}

}  // namespace

void ParseStep(const Json& s, const StepDefaults& defaults, Diags& d, StepSite* site,
               StepDef& step) {
  Where& w = site->where;
  const CommonKeys keys(s);
  step.line = d.LineOf(w.pointer);
  if (!keys.has(Bit("id"))) {
    MissingField("id", d, w);
  } else if (auto id = GetString(s["id"], d, {w, "id"})) {
    if (!id->empty()) {
      step.id = *id;
      site->has_id = true;
      w.step = *id;
      w.field.clear();
    }
    if (!IsStepId(*id)) {
      d.Add(w.Key("id"), "invalid step id '" + Abbreviated(*id) +
                             "' (expected letters, digits, '_' or '-', at most 253 bytes)");
    }
  }
  std::optional<StepType> type;
  if (!keys.has(Bit("type"))) {
    MissingField("type", d, w);
  } else if (auto t = GetString(s["type"], d, {w, "type"})) {
    type = ParseStepType(*t);
    if (!type) {
      d.Add(w.Key("type"),
            "unknown step type '" + *t + "' (valid: noop, shell, http, wait, command, workflow)");
    }
  }
  if (type && (keys.all_common() || FieldsKnown(s, {&kCommonFields, &TypeFields(*type)}))) {
    step.type = *type;
  } else if (type) {
    std::vector<std::string> valid = kCommonFields;
    const auto& extra = TypeFields(*type);
    valid.insert(valid.end(), extra.begin(), extra.end());
    CheckFields(s, valid, d, w, std::string("for step type '") + ToString(*type) + "'");
    step.type = *type;
  } else {
    std::vector<std::string> valid = kCommonFields;
    // Without a known type, only fields no type accepts are reported.
    for (StepType t : kAllTypes) {
      const auto& extra = TypeFields(t);
      valid.insert(valid.end(), extra.begin(), extra.end());
    }
    CheckFields(s, valid, d, w);
  }
  if (keys.has(Bit("name"))) {
    if (auto v = GetString(s["name"], d, {w, "name"})) step.name = *v;
  }
  if (keys.has(Bit("description"))) {
    if (auto v = GetString(s["description"], d, {w, "description"})) {
      step.edit_extra().description = *v;
    }
  }
  if (keys.has(Bit("depends_on"))) ParseDependsOn(s["depends_on"], d, At(w, "depends_on"), &step);
  if (keys.has(Bit("when"))) {
    const Json& when = s["when"];
    if (when.is_string() || when.is_object()) {
      step.when = when;
    } else {
      d.Add(w.Key("when"), std::string("expected string or object, got ") + TypeName(when));
    }
  }
  step.trigger_rule = defaults.trigger_rule;
  if (keys.has(Bit("trigger_rule"))) {
    if (auto r = GetTriggerRule(s["trigger_rule"], d, {w, "trigger_rule"})) {
      step.trigger_rule = *r;
    }
  }
  step.optional = defaults.optional;
  if (keys.has(Bit("optional"))) {
    if (auto b = GetBool(s["optional"], d, {w, "optional"})) step.optional = *b;
  }
  step.timeout = defaults.timeout;
  if (keys.has(Bit("timeout"))) step.timeout = GetTimeout(s["timeout"], d, {w, "timeout"});
  // Only a worker reports progress, which is what resets a heartbeat timeout: the
  // default applies to command steps, and any other step that names one is refused below.
  if (defaults.heartbeat_timeout && step.type == StepType::kCommand) {
    step.edit_extra().heartbeat_timeout = defaults.heartbeat_timeout;
  }
  if (keys.has(Bit("pool"))) {
    if (auto pool = GetString(s["pool"], d, {w, "pool"})) {
      if (!IsWorkflowName(*pool)) {
        d.Add(w.Key("pool"), "invalid pool name '" + Abbreviated(*pool) +
                                 "' (expected [a-z0-9][a-z0-9_.-]*, at most 253 bytes)");
      }
      step.edit_extra().pool = *pool;
    }
  }
  if (keys.has(Bit("pool_slots"))) {
    std::optional<int64_t> n = GetInt(s["pool_slots"], d, {w, "pool_slots"});
    if (!keys.has(Bit("pool"))) {
      d.Add(w.Key("pool_slots"), "pool_slots needs a pool");
    } else if (n && (*n < 1 || *n > 1'000'000)) {
      d.Add(w.Key("pool_slots"), "must be an integer from 1 to 1000000");
    } else if (n) {
      step.edit_extra().pool_slots = static_cast<int>(*n);
    }
  }
  if (keys.has(Bit("expected_duration"))) {
    step.edit_extra().expected_duration =
        GetTimeout(s["expected_duration"], d, {w, "expected_duration"});
  }
  if (keys.has(Bit("heartbeat_timeout"))) {
    step.edit_extra().heartbeat_timeout =
        GetTimeout(s["heartbeat_timeout"], d, {w, "heartbeat_timeout"});
    if (step.type != StepType::kCommand) {
      d.Add(w.Key("heartbeat_timeout"),
            std::string("applies to command steps, whose worker's progress resets it; a ") +
                ToString(step.type) +
                " step reports no progress, so it would time out however well it ran (use "
                "timeout)");
    }
  }
  step.retry = defaults.retry;
  if (keys.has(Bit("retry"))) ApplyRetry(s["retry"], &step.retry, d, w.Key("retry"));
  step.priority = defaults.priority;
  if (keys.has(Bit("priority"))) {
    if (auto p = GetPriority(s["priority"], d, {w, "priority"})) step.priority = *p;
  }
  if (keys.has(Bit("for_each"))) {
    const Json& fe = s["for_each"];
    Where fw = w.Key("for_each");
    if (GetString(fe, d, fw)) {
      if (!HasTemplate(fe)) {
        d.Add(fw,
              "expected a template that yields an array, e.g. "
              "\"{{ steps.list.output.items }}\"");
      }
      step.for_each = fe;
    }
  }
  if (keys.has(Bit("cache"))) ParseCache(s["cache"], d, w.Key("cache"), &step);
  if (keys.has(Bit("set_vars"))) ParseSetVars(s["set_vars"], d, w.Key("set_vars"), &step);
  if (type) {
    for (const std::string& key : TypeFields(*type)) {
      if (s.contains(key)) step.spec[key] = s[key];
    }
    CheckTypeFields(*type, s, d, w);
    if (*type == StepType::kShell) MoveShellTemplatesToArgs(&step.spec);
    if (*type == StepType::kWait && s.contains("signal") && keys.has(Bit("for_each"))) {
      // One signal completes one step; instances of a fan-out would race for it.
      d.Add(w.Key("for_each"), "a wait step on a signal cannot fan out");
    }
    if (*type == StepType::kWorkflow && keys.has(Bit("for_each"))) {
      d.Add(w.Key("for_each"), "a workflow step cannot fan out (start one child per step)");
    }
  }
  if (keys.has(Bit("with"))) step.spec["with"] = s["with"];
  ParseStepBreaker(s, keys, defaults, d, w, &step);
}

void ParseSteps(const Json& steps, const StepDefaults& defaults, Diags& d, WorkflowDef* wf,
                std::vector<StepSite>* sites) {
  Where list{"/steps", "", "steps"};
  // Sized once: growing by doubling held two copies of the steps at the peak (a StepDef
  // is about 500 bytes), most of `validate`'s peak memory on a large workflow.
  wf->steps.reserve(wf->steps.size() + steps.size());
  sites->reserve(sites->size() + steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    Where w = list.Index(i);
    if (!ExpectObject(steps[i], d, w)) continue;
    StepSite& site = sites->emplace_back(StepSite{std::move(w), &steps[i], false});
    ParseStep(steps[i], defaults, d, &site, wf->steps.emplace_back());
  }
}

}  // namespace baton::model
