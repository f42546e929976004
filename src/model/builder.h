// Shared pieces of turning a JSON document into a WorkflowDef: where a value sits (for
// diagnostics), the diagnostics sink, and typed accessors that report what they expected.
//
// Internal to the model module.
#pragma once

#include "model/plan_build.h"
#include "model/source.h"

#include <baton/workflow.h>

#include <deque>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace baton::model {

// A value's place: its JSON pointer (for the line), the step it belongs to and its
// dotted field name within that step (or within the document when there is no step).
struct Where {
  std::string pointer;
  std::string step;
  std::string field;

  Where Key(std::string_view key) const;
  Where Index(size_t index) const;
};

// A place to report at, built only when a message needs it: a Where, or a key or an index
// under another place. The typed reads below take one, so reading a well-formed field
// builds no strings (a Where is three of them).
class At {
 public:
  At(const Where& where) : where_(&where) {}  // NOLINT(google-explicit-constructor)
  At(const Where& parent, std::string_view key) : parent_where_(&parent), key_(key) {}
  At(const At& parent, std::string_view key) : parent_(&parent), key_(key) {}
  At(const Where& parent, size_t index) : parent_where_(&parent), index_(index), by_index_(true) {}
  At(const At& parent, size_t index) : parent_(&parent), index_(index), by_index_(true) {}
  Where Build() const;

 private:
  const Where* where_ = nullptr;
  const Where* parent_where_ = nullptr;
  const At* parent_ = nullptr;
  std::string_view key_;
  size_t index_ = 0;
  bool by_index_ = false;
};

class Diags {
 public:
  Diags(std::string file, const LineMap* lines) : file_(std::move(file)), lines_(lines) {}

  void Add(const Where& where, std::string message);
  void Add(const At& at, std::string message) { Add(at.Build(), std::move(message)); }
  int LineOf(std::string_view pointer) const { return lines_ ? lines_->Find(pointer) : 0; }
  void Append(std::vector<Diagnostic> more);
  size_t size() const { return out_.size(); }
  // Sorted by line (stable, so same-line diagnostics keep the order they were found in).
  std::vector<Diagnostic> Take();

 private:
  std::string file_;
  const LineMap* lines_;
  std::vector<Diagnostic> out_;
};

// "null", "boolean", "integer", "number", "string", "array" or "object".
const char* TypeName(const Json& value);
// A value as quoted in messages: strings as-is, others as compact JSON; long text cut.
std::string Shown(const Json& value);
// "a, b, c".
std::string JoinNames(const std::vector<std::string>& names);
bool HasTemplate(const Json& value);

// Names and ids (workflow names, step ids, input names) are at most this long: a DNS
// name's limit, and short enough for every key, label and log line they end up in.
inline constexpr size_t kMaxNameBytes = 253;
// [a-z0-9][a-z0-9_.-]*, at most kMaxNameBytes: a workflow's name (and a child step's
// `workflow`).
bool IsWorkflowName(std::string_view s);
// `s` itself, or its first 40 bytes and its length when longer (for messages).
std::string Abbreviated(std::string_view s);

// Typed reads; each reports "expected T, got U" at `where` and returns nullopt/false.
std::optional<std::string> GetString(const Json& v, Diags& d, const At& where);
std::optional<int64_t> GetInt(const Json& v, Diags& d, const At& where);
std::optional<double> GetNumber(const Json& v, Diags& d, const At& where);
std::optional<bool> GetBool(const Json& v, Diags& d, const At& where);
bool ExpectObject(const Json& v, Diags& d, const At& where);
bool ExpectArray(const Json& v, Diags& d, const At& where);
std::optional<Duration> GetDuration(const Json& v, Diags& d, const At& where);
// A timeout: a duration greater than zero.
std::optional<Duration> GetTimeout(const Json& v, Diags& d, const At& where);
std::optional<Priority> GetPriority(const Json& v, Diags& d, const At& where);
std::optional<TriggerRule> GetTriggerRule(const Json& v, Diags& d, const At& where);

// Reports every member of `object` not in `valid`: "unknown field 'x' (valid: ...)".
// `what` names the context when the valid set depends on it ("for a shell step").
void CheckFields(const Json& object, const std::vector<std::string>& valid, Diags& d,
                 const Where& where, std::string_view what = "");
// True when every member of `object` is named in one of `lists`: the check of the
// common case, which builds nothing (CheckFields builds the message when it is false).
bool FieldsKnown(const Json& object, std::initializer_list<const std::vector<std::string>*> lists);
void MissingField(std::string_view name, Diags& d, const Where& where);

// Retry fields present in `value` override those in `policy` (so defaults merge field by
// field); a bare integer is max_attempts.
void ApplyRetry(const Json& value, RetryPolicy* policy, Diags& d, const Where& where);

// Circuit breaker fields present in `value` override those in `spec` (defaults merge
// field by field).
void ApplyCircuitBreaker(const Json& value, CircuitBreakerSpec* spec, Diags& d, const Where& where);

// Input types: string, integer, number (integers too), boolean, object, array.
bool IsInputType(std::string_view type);
bool MatchesInputType(const Json& value, std::string_view type);
// "string, integer, number, boolean, object, array".
const char* InputTypeList();

// What `defaults:` gives every step.
struct StepDefaults {
  std::optional<Duration> timeout;
  std::optional<Duration> heartbeat_timeout;
  RetryPolicy retry;
  Priority priority = Priority::kNormal;
  TriggerRule trigger_rule = TriggerRule::kAllSuccess;
  bool optional = false;
  // Applies to http and command steps (the ones that call a dependency); a step's own
  // `circuit_breaker` overrides it field by field.
  std::optional<CircuitBreakerSpec> circuit_breaker;
};

// Per-step parse facts the later checks need.
struct StepSite {
  Where where;  // the step itself
  // The step object as written; nullptr when not an object, or when nothing after the
  // step's own parse needs it (see PreparsedSteps::kept).
  const Json* json;
  bool has_id = false;
};

// `defaults:` (an object; fields that are wrong are reported and left at their default).
StepDefaults ParseDefaults(const Json& v, Diags& d, const Where& where);

// One element of `steps`, an object: fills `step`, fresh from the list it lives in (built
// in place, never moved), and site->has_id; reports into `d`.
void ParseStep(const Json& s, const StepDefaults& defaults, Diags& d, StepSite* site,
               StepDef& step);

// Steps: parses `steps` into wf->steps (one StepDef per object entry) and fills `sites`.
void ParseSteps(const Json& steps, const StepDefaults& defaults, Diags& d, WorkflowDef* wf,
                std::vector<StepSite>* sites);
// Steps parsed while the document was read (ParseJsonWorkflow), for BuildWorkflow.
struct PreparsedSteps {
  std::vector<StepDef> steps;
  std::vector<StepSite> sites;
  // The steps the later checks read again (StepSite::json points here): those with
  // templates, set_vars or for_each. Other steps are not kept once parsed.
  std::deque<Json> kept;
};

// The whole document, already JSON; `lines` may be empty (a stored snapshot). With
// `preparsed`, the top-level `steps` member of `doc` is an empty stand-in and the steps
// are taken from it. `source` is the snapshot text to keep; null = doc.dump().
ParseOutcome BuildWorkflow(Json doc, const LineMap& lines, const std::string& file,
                           std::vector<Diagnostic> earlier, PreparsedSteps* preparsed,
                           std::shared_ptr<const std::string> source);

// The fast path for a valid JSON workflow: the document is read a step at a time, each
// step parsed and dropped as soon as it is complete, and the snapshot text written as it
// goes. nullopt for anything else (not JSON, not valid, a diagnostic, `defaults` written
// after `steps`): the caller then takes the path that reports every problem with its line.
// `snapshot`: the text is a stored snapshot (no lines), which the definition keeps.
std::optional<ParseOutcome> ParseJsonWorkflow(std::string_view text, const std::string& file,
                                              std::shared_ptr<const std::string> snapshot);

// Duplicate ids, unknown and self dependencies, cycles, over the index and graph built
// once per parse (IndexSteps, GraphOf).
void ValidateGraph(const WorkflowDef& wf, const std::vector<StepSite>& sites,
                   const StepIndex& index, const StepGraph& graph, Diags& d);
// Templates and conditions: syntax, roots, declared inputs/vars, upstream steps. Returns
// the compiled conditions, one per step (null where there is no `when` or it failed), for
// the plan.
std::vector<std::unique_ptr<const expr::Condition>> ValidateReferences(
    const WorkflowDef& wf, const std::vector<StepSite>& sites, const StepIndex& index,
    const StepGraph& graph, bool inputs_declared, Diags& d);

}  // namespace baton::model
