#include "runners/shell_spec.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

extern char** environ;

namespace baton::runners {
namespace {

Status InvalidShellField(const std::string& field, const std::string& what) {
  return Status(errc::kValidation, "shell step: field '" + field + "': " + what);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Parses a leading non-negative decimal number ("12", "1.5"); advances `s` past it.
bool TakeNumber(std::string_view& s, double& value) {
  size_t n = 0;
  bool digits = false;
  while (n < s.size() && (std::isdigit(static_cast<unsigned char>(s[n])) || s[n] == '.')) {
    digits = digits || s[n] != '.';
    ++n;
  }
  if (!digits) return false;
  std::string text(s.substr(0, n));
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return false;
  s.remove_prefix(n);
  return true;
}

Result<std::string> ArgTextChecked(const Json& value, const std::string& field) {
  std::string text = ArgText(value);
  if (text.find('\0') != std::string::npos) return InvalidShellField(field, "contains a NUL byte");
  return text;
}

Result<std::optional<std::vector<std::string>>> BuildEnv(const Json& env) {
  if (env.is_null()) return std::optional<std::vector<std::string>>();
  if (!env.is_object()) return InvalidShellField("env", "expected an object of variables");
  if (env.empty()) return std::optional<std::vector<std::string>>();
  std::vector<std::string> vars;
  std::unordered_map<std::string, size_t> index;  // name -> position in vars
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    std::string name(kv.substr(0, kv.find('=')));
    if (index.emplace(name, vars.size()).second) vars.emplace_back(kv);
  }
  std::vector<bool> removed(vars.size(), false);
  for (const auto& [name, value] : env.items()) {
    if (name.empty() || name.find('=') != std::string::npos ||
        name.find('\0') != std::string::npos) {
      return InvalidShellField("env", "bad variable name '" + name + "'");
    }
    auto it = index.find(name);
    if (value.is_null()) {
      if (it != index.end()) removed[it->second] = true;
      continue;
    }
    Result<std::string> text = ArgTextChecked(value, "env." + name);
    if (!text.ok()) return text.status();
    std::string kv = name + "=" + *text;
    if (it != index.end()) {
      vars[it->second] = std::move(kv);
      removed[it->second] = false;
    } else {
      index.emplace(name, vars.size());
      vars.push_back(std::move(kv));
      removed.push_back(false);
    }
  }
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) {
    if (!removed[i]) out.push_back(std::move(vars[i]));
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

}  // namespace

std::string ArgText(const Json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Result<uint64_t> ParseByteSize(const Json& value, const std::string& field) {
  double number = 0;
  double unit = 1;
  if (value.is_number()) {
    number = value.get<double>();
  } else if (value.is_string()) {
    std::string_view s = Trim(value.get_ref<const std::string&>());
    if (!TakeNumber(s, number)) {
      return InvalidShellField(field, "expected a size like 1048576, \"64k\" or \"100MB\"");
    }
    static const std::unordered_map<std::string, double> kUnits = {{"", 1},
                                                                   {"b", 1},
                                                                   {"k", 1024.0},
                                                                   {"ki", 1024.0},
                                                                   {"kib", 1024.0},
                                                                   {"kb", 1e3},
                                                                   {"m", 1 << 20},
                                                                   {"mi", 1 << 20},
                                                                   {"mib", 1 << 20},
                                                                   {"mb", 1e6},
                                                                   {"g", 1 << 30},
                                                                   {"gi", 1 << 30},
                                                                   {"gib", 1 << 30},
                                                                   {"gb", 1e9},
                                                                   {"t", 1099511627776.0},
                                                                   {"ti", 1099511627776.0},
                                                                   {"tib", 1099511627776.0},
                                                                   {"tb", 1e12}};
    auto it = kUnits.find(Lower(Trim(s)));
    if (it == kUnits.end()) {
      return InvalidShellField(field, "unknown size unit '" + std::string(Trim(s)) +
                                          "' (use k, KiB, MB, MiB, GB, GiB...)");
    }
    unit = it->second;
  } else {
    return InvalidShellField(field, "expected a size in bytes");
  }
  double bytes = number * unit;
  if (!(bytes >= 0) || bytes >= 1.8e19) return InvalidShellField(field, "size out of range");
  return static_cast<uint64_t>(std::ceil(bytes));
}

Result<uint64_t> ParseCpuSeconds(const Json& value, const std::string& field) {
  double seconds = 0;
  if (value.is_number()) {
    seconds = value.get<double>();
  } else if (value.is_string()) {
    std::string_view s = Trim(value.get_ref<const std::string&>());
    bool any = false;
    while (!s.empty()) {
      double n = 0;
      if (!TakeNumber(s, n)) {
        return InvalidShellField(field, "expected seconds or a duration like \"90s\" or \"1h30m\"");
      }
      while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
      size_t len = 0;
      while (len < s.size() && std::isalpha(static_cast<unsigned char>(s[len]))) ++len;
      std::string unit = Lower(s.substr(0, len));
      s.remove_prefix(len);
      if (unit.empty() && !any && s.empty()) {
        seconds = n;  // a bare number of seconds
      } else if (unit == "ms") {
        seconds += n / 1000;
      } else if (unit == "s") {
        seconds += n;
      } else if (unit == "m") {
        seconds += n * 60;
      } else if (unit == "h") {
        seconds += n * 3600;
      } else {
        return InvalidShellField(field, "unknown duration unit '" + unit + "' (use ms, s, m, h)");
      }
      any = true;
    }
    if (!any) return InvalidShellField(field, "expected seconds or a duration like \"90s\"");
  } else {
    return InvalidShellField(field, "expected a number of seconds");
  }
  if (!(seconds > 0) || seconds >= 1e15)
    return InvalidShellField(field, "must be a positive duration");
  return static_cast<uint64_t>(std::ceil(seconds));
}

Result<ShellSpec> ParseShellSpec(const Json& spec, size_t default_max_output) {
  if (!spec.is_object()) return InvalidShellField("spec", "expected an object");
  ShellSpec out;
  out.max_output = default_max_output;
  ProcessSpec& p = out.process;

  auto run = spec.find("run");
  if (run == spec.end() || run->is_null()) return InvalidShellField("run", "required");
  if (run->is_string()) {
    const std::string& script = run->get_ref<const std::string&>();
    if (Trim(script).empty()) return InvalidShellField("run", "empty command");
    if (script.find('\0') != std::string::npos)
      return InvalidShellField("run", "contains a NUL byte");
    p.argv = {"/bin/sh", "-c", script};
    // Positional parameters: `$0` is "baton", then $1, $2, ... (values, never script).
    if (auto args = spec.find("args"); args != spec.end() && !args->is_null()) {
      if (!args->is_array()) return InvalidShellField("args", "expected an array");
      p.argv.push_back("baton");
      for (size_t i = 0; i < args->size(); ++i) {
        Result<std::string> arg = ArgTextChecked((*args)[i], "args[" + std::to_string(i) + "]");
        if (!arg.ok()) return arg.status();
        p.argv.push_back(std::move(*arg));
      }
    }
  } else if (run->is_array()) {
    if (run->empty()) return InvalidShellField("run", "empty argv");
    for (size_t i = 0; i < run->size(); ++i) {
      Result<std::string> arg = ArgTextChecked((*run)[i], "run[" + std::to_string(i) + "]");
      if (!arg.ok()) return arg.status();
      p.argv.push_back(std::move(*arg));
    }
    if (p.argv[0].empty()) return InvalidShellField("run[0]", "empty program name");
  } else {
    return InvalidShellField("run", "expected an argv array or a shell command string");
  }

  if (auto env = spec.find("env"); env != spec.end()) {
    auto built = BuildEnv(*env);
    if (!built.ok()) return built.status();
    p.env = std::move(*built);
  }
  if (auto cwd = spec.find("cwd"); cwd != spec.end() && !cwd->is_null()) {
    if (!cwd->is_string()) return InvalidShellField("cwd", "expected a directory path string");
    p.cwd = cwd->get<std::string>();
    if (p.cwd.find('\0') != std::string::npos)
      return InvalidShellField("cwd", "contains a NUL byte");
  }
  if (auto in = spec.find("stdin"); in != spec.end() && !in->is_null()) {
    p.stdin_data = ArgText(*in);
  }
  if (auto max = spec.find("max_output"); max != spec.end() && !max->is_null()) {
    Result<uint64_t> bytes = ParseByteSize(*max, "max_output");
    if (!bytes.ok()) return bytes.status();
    out.max_output = static_cast<size_t>(*bytes);
  }
  if (auto mem = spec.find("memory"); mem != spec.end() && !mem->is_null()) {
    Result<uint64_t> bytes = ParseByteSize(*mem, "memory");
    if (!bytes.ok()) return bytes.status();
    if (*bytes == 0) return InvalidShellField("memory", "must be positive");
    p.memory_limit = *bytes;
  }
  if (auto cpu = spec.find("cpu_time"); cpu != spec.end() && !cpu->is_null()) {
    Result<uint64_t> seconds = ParseCpuSeconds(*cpu, "cpu_time");
    if (!seconds.ok()) return seconds.status();
    p.cpu_seconds = *seconds;
  }
  return out;
}

}  // namespace baton::runners
