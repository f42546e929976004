// The fields of each step type (shell, http, wait, command, workflow), checked after the
// common ones: what ParseStep calls once it knows the step's type.
#include "model/step_type_checks.h"

#include "model/http_status.h"
#include "model/payload_schema.h"
#include "model/shell_template.h"

#include <cctype>

namespace baton::model {
namespace {

bool IsSignalName(std::string_view s) {
  if (s.empty() || s.size() > kMaxNameBytes || s == "." || s == "..") return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      return false;
  }
  return true;
}

bool IsScalar(const Json& v) {
  return v.is_string() || v.is_number() || v.is_boolean();
}
bool IsTemplateString(const Json& v) {
  return v.is_string() && HasTemplate(v);
}

// A duration field of a step's spec, as written; templates are checked when rendered.
void CheckSpecDuration(const Json& v, Diags& d, const Where& w, bool positive) {
  if (IsTemplateString(v)) return;
  if (positive) {
    GetTimeout(v, d, w);
  } else {
    GetDuration(v, d, w);
  }
}

void CheckSpecSize(const Json& v, Diags& d, const Where& w) {
  if (IsTemplateString(v)) return;
  Result<int64_t> r = ParseByteSize(v);
  if (!r.ok()) d.Add(w, r.status().message());
}

// An object whose values are scalars (env, headers).
void CheckScalarMap(const Json& v, Diags& d, const Where& w, bool env_names) {
  if (!ExpectObject(v, d, w)) return;
  for (const auto& [key, value] : v.items()) {
    if (env_names) {
      bool ok = !key.empty() && !std::isdigit(static_cast<unsigned char>(key[0]));
      for (char c : key) {
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') ok = false;
      }
      if (!ok) d.Add(w.Key(key), "invalid environment variable name '" + key + "'");
    }
    if (!IsScalar(value)) {
      d.Add(w.Key(key), std::string("expected string, number or boolean, got ") + TypeName(value));
    }
  }
}

void CheckShell(const Json& s, Diags& d, const Where& w) {
  if (!s.contains("run")) {
    MissingField("run", d, w);
  } else {
    const Json& run = s["run"];
    Where rw = w.Key("run");
    if (run.is_string()) {
      if (run.get_ref<const std::string&>().empty()) d.Add(rw, "empty command");
    } else if (run.is_array()) {
      if (run.empty()) d.Add(rw, "empty command");
      for (size_t i = 0; i < run.size(); ++i) {
        if (!IsScalar(run[i])) {
          d.Add(rw.Index(i),
                std::string("expected string, number or boolean, got ") + TypeName(run[i]));
        }
      }
    } else {
      d.Add(rw, std::string("expected string or array, got ") + TypeName(run));
    }
  }
  if (s.contains("args")) {
    const Json& args = s["args"];
    Where aw = w.Key("args");
    if (!args.is_array()) {
      d.Add(aw, std::string("expected an array, got ") + TypeName(args));
    } else {
      if (!s.contains("run") || !s["run"].is_string()) {
        d.Add(aw, "'args' are the positional parameters of a string 'run' ($1, $2, ...)");
      }
      for (size_t i = 0; i < args.size(); ++i) {
        if (!IsScalar(args[i])) {
          d.Add(aw.Index(i),
                std::string("expected string, number or boolean, got ") + TypeName(args[i]));
        }
      }
    }
  }
  if (s.contains("env")) CheckScalarMap(s["env"], d, w.Key("env"), true);
  if (s.contains("cwd")) GetString(s["cwd"], d, {w, "cwd"});
  if (s.contains("stdin")) GetString(s["stdin"], d, {w, "stdin"});
  if (s.contains("max_output")) CheckSpecSize(s["max_output"], d, w.Key("max_output"));
  if (s.contains("memory")) CheckSpecSize(s["memory"], d, w.Key("memory"));
  if (s.contains("cpu_time")) CheckSpecDuration(s["cpu_time"], d, w.Key("cpu_time"), true);
}

void CheckHttp(const Json& s, Diags& d, const Where& w) {
  if (!s.contains("request")) {
    MissingField("request", d, w);
  } else {
    const Json& req = s["request"];
    Where qw = w.Key("request");
    if (ExpectObject(req, d, qw)) {
      CheckFields(req,
                  {"method", "url", "headers", "body", "timeout", "max_redirects", "max_output"}, d,
                  qw);
      if (!req.contains("url")) {
        MissingField("url", d, qw);
      } else if (auto url = GetString(req["url"], d, qw.Key("url"))) {
        if (!HasTemplate(req["url"]) && !url->starts_with("http://") &&
            !url->starts_with("https://")) {
          d.Add(qw.Key("url"), "expected an http:// or https:// URL, got '" + *url + "'");
        }
      }
      if (req.contains("method")) {
        Where mw = qw.Key("method");
        if (auto m = GetString(req["method"], d, mw); m && !HasTemplate(req["method"])) {
          std::string upper = *m;
          for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
          static const char* kMethods[] = {"GET",   "HEAD",   "POST",   "PUT",
                                           "PATCH", "DELETE", "OPTIONS"};
          if (std::none_of(std::begin(kMethods), std::end(kMethods),
                           [&](const char* k) { return upper == k; })) {
            d.Add(mw, "unknown HTTP method '" + *m +
                          "' (valid: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS)");
          }
        }
      }
      if (req.contains("headers")) CheckScalarMap(req["headers"], d, qw.Key("headers"), false);
      if (req.contains("timeout")) CheckSpecDuration(req["timeout"], d, qw.Key("timeout"), true);
      if (req.contains("max_redirects") && !IsTemplateString(req["max_redirects"])) {
        Where rw = qw.Key("max_redirects");
        if (auto n = GetInt(req["max_redirects"], d, rw); n && *n < 0) {
          d.Add(rw, "expected a non-negative integer");
        }
      }
      if (req.contains("max_output")) CheckSpecSize(req["max_output"], d, qw.Key("max_output"));
    }
  }
  if (s.contains("accept")) {
    Where aw = w.Key("accept");
    if (ExpectArray(s["accept"], d, aw)) {
      for (size_t i = 0; i < s["accept"].size(); ++i) {
        const Json& entry = s["accept"][i];
        if (IsTemplateString(entry)) continue;
        if (auto range = ParseStatusRange(entry); !range.ok()) {
          d.Add(aw.Index(i), range.status().message());
        }
      }
    }
  }
}

void CheckWait(const Json& s, Diags& d, const Where& w) {
  const bool has_duration = s.contains("duration");
  const bool has_until = s.contains("until");
  const bool has_signal = s.contains("signal");
  if (has_duration + has_until + has_signal != 1) {
    d.Add(has_duration + has_until + has_signal == 0 ? w : w.Key(has_signal ? "signal" : "until"),
          has_duration + has_until + has_signal == 0
              ? "a wait step needs 'duration', 'until' or 'signal'"
              : "a wait step takes one of 'duration', 'until' and 'signal'");
  }
  if (has_duration) CheckSpecDuration(s["duration"], d, w.Key("duration"), false);
  if (has_until) GetString(s["until"], d, {w, "until"});
  if (has_signal) {
    if (auto name = GetString(s["signal"], d, {w, "signal"}); name && !IsSignalName(*name)) {
      d.Add(w.Key("signal"), "a signal name is 1 to " + std::to_string(kMaxNameBytes) +
                                 " letters, digits, '_', '-' or '.' (not a template)");
    }
  }
  if (s.contains("schema")) {
    if (!has_signal) d.Add(w.Key("schema"), "'schema' describes a signal's payload: add 'signal'");
    if (std::string e = CheckPayloadSchema(s["schema"]); !e.empty()) d.Add(w.Key("schema"), e);
  }
}

void CheckCommand(const Json& s, Diags& d, const Where& w) {
  if (!s.contains("command")) {
    MissingField("command", d, w);
  } else if (auto c = GetString(s["command"], d, {w, "command"}); c && c->empty()) {
    d.Add(w.Key("command"), "empty command name");
  }
  if (s.contains("resource")) ExpectObject(s["resource"], d, {w, "resource"});
  if (s.contains("target")) {
    const Json& t = s["target"];
    Where tw = w.Key("target");
    if (ExpectObject(t, d, tw)) {
      CheckFields(t, {"node", "tags"}, d, tw);
      bool node = t.contains("node");
      bool tags = t.contains("tags");
      if (node && tags) {
        d.Add(tw, "a target names a node or tags, not both");
      } else if (!node && !tags) {
        d.Add(tw, "a target needs 'node' or 'tags'");
      }
      if (node) GetString(t["node"], d, tw.Key("node"));
      if (tags && ExpectArray(t["tags"], d, tw.Key("tags"))) {
        for (size_t i = 0; i < t["tags"].size(); ++i) {
          GetString(t["tags"][i], d, tw.Key("tags").Index(i));
        }
      }
    }
  }
}

void CheckWorkflow(const Json& s, Diags& d, const Where& w) {
  if (!s.contains("workflow")) {
    MissingField("workflow", d, w);
  } else if (auto name = GetString(s["workflow"], d, {w, "workflow"}); name && name->empty()) {
    d.Add(w.Key("workflow"), "empty workflow name");
  } else if (name && !IsWorkflowName(*name)) {
    d.Add(w.Key("workflow"), "invalid workflow name '" + Abbreviated(*name) +
                                 "' (expected [a-z0-9][a-z0-9_.-]*, at most 253 bytes)");
  }
  if (s.contains("version")) {
    std::optional<int64_t> v = GetInt(s["version"], d, {w, "version"});
    if (v && (*v < 1 || *v > std::numeric_limits<int>::max())) {
      d.Add(w.Key("version"), "must be an integer >= 1");
    }
  }
  if (s.contains("input")) {
    const Json& in = s["input"];
    if (!in.is_object() && !IsTemplateString(in)) {
      d.Add(w.Key("input"), std::string("expected object or template, got ") + TypeName(in));
    }
  }
}

}  // namespace

void CheckTypeFields(StepType type, const Json& s, Diags& d, const Where& w) {
  switch (type) {
    case StepType::kNoop:
      break;
    case StepType::kShell:
      CheckShell(s, d, w);
      break;
    case StepType::kHttp:
      CheckHttp(s, d, w);
      break;
    case StepType::kWait:
      CheckWait(s, d, w);
      break;
    case StepType::kCommand:
      CheckCommand(s, d, w);
      break;
    case StepType::kWorkflow:
      CheckWorkflow(s, d, w);
      break;
  }
}

}  // namespace baton::model
