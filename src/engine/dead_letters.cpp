// The dead-letter queue's entries: what a step that failed for good leaves behind, and
// the fingerprint that groups entries failing the same way.
#include "engine/engine_impl.h"

#include <cctype>

namespace baton {
namespace {

constexpr size_t kMaxFingerprintBytes = 200;

bool IsWordChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

// A word that names one thing rather than a kind of thing: a hash, a uuid, an id.
bool IsIdentifier(std::string_view w) {
  size_t digits = 0, hex = 0;
  for (char c : w) {
    digits += std::isdigit(static_cast<unsigned char>(c)) != 0;
    hex += std::isxdigit(static_cast<unsigned char>(c)) != 0 || c == '-';
  }
  if (digits == 0) return false;
  return (w.size() >= 8 && hex == w.size()) || (w.size() >= 16 && digits < w.size());
}

}  // namespace

std::string DeadLetterFingerprint(const std::string& code, const std::string& message) {
  std::string out = code + ":";
  auto append = [&out](std::string_view s) {
    if (!s.empty() && out.back() != ' ' && s.front() != ' ') out += ' ';
    out += s;
  };
  size_t i = 0;
  while (i < message.size() && out.size() < kMaxFingerprintBytes) {
    const char c = message[i];
    if (c == '\'' || c == '"') {
      // Quoted text (a path, a host, a value) varies from one failure to the next.
      const size_t close = message.find(c, i + 1);
      if (close != std::string::npos && close - i <= 256) {
        append(std::string(1, c) + "?" + c);
        i = close + 1;
        continue;
      }
    }
    if (IsWordChar(c)) {
      size_t end = i;
      while (end < message.size() && IsWordChar(message[end])) ++end;
      std::string_view word(message.data() + i, end - i);
      std::string norm;
      if (IsIdentifier(word)) {
        norm = "X";
      } else {
        for (size_t k = 0; k < word.size(); ++k) {
          if (std::isdigit(static_cast<unsigned char>(word[k])) == 0) {
            norm += word[k];
          } else if (k == 0 || std::isdigit(static_cast<unsigned char>(word[k - 1])) == 0) {
            norm += 'N';  // a run of digits: a count, a port, a time
          }
        }
      }
      // Glue to what precedes unless a space separated them in the message.
      if (i > 0 && std::isspace(static_cast<unsigned char>(message[i - 1])) == 0) {
        out += norm;
      } else {
        append(norm);
      }
      i = end;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c)) != 0) {
      ++i;
      continue;
    }
    if (i > 0 && std::isspace(static_cast<unsigned char>(message[i - 1])) != 0) {
      append(std::string(1, c));
    } else {
      out += c;
    }
    ++i;
  }
  if (out.size() > kMaxFingerprintBytes) {
    size_t cut = kMaxFingerprintBytes;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
    out.resize(cut);
  }
  return out;
}

void Engine::Impl::WriteDeadLetter(const ExecPtr& ex, int step, TimeMs now) {
  const engine::StepState& st = ex->steps[step];
  DeadLetterRecord dl;
  dl.execution_id = ex->rec.id;
  dl.step_id = st.def->id;
  dl.ns = ex->rec.ns;
  dl.workflow = ex->def->name;
  dl.version = ex->def->version;
  dl.input = st.resolved_input ? *st.resolved_input : st.def->spec;
  dl.errors = st.AttemptErrors().is_array() ? st.AttemptErrors() : Json::array();
  dl.created_at = now;
  dl.first_failed_at = now;
  dl.last_failed_at = now;
  dl.first_attempt = dl.last_attempt = st.rec.attempts;
  if (!dl.errors.empty()) {
    const Json& first = dl.errors.front();
    const Json& last = dl.errors.back();
    dl.first_failed_at = first.value("at", now);
    dl.last_failed_at = last.value("at", now);
    dl.first_attempt = first.value("attempt", dl.first_attempt);
    dl.last_attempt = last.value("attempt", dl.last_attempt);
  }
  const Json& error = st.rec.error;
  dl.code = error.is_object() ? error.value("code", "") : "";
  dl.fingerprint =
      DeadLetterFingerprint(dl.code, error.is_object() ? error.value("message", "") : "");
  batch_.dead_letters.push_back(std::move(dl));
}

}  // namespace baton
