#include "common/crash_point.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <string>

namespace baton {
namespace {

struct Target {
  std::string name;
  long count = 1;
  bool armed = false;
};

const Target& GetTarget() {
  static const Target target = [] {
    Target t;
    const char* env = std::getenv("BATON_CRASH_AT");
    if (!env || !*env) return t;
    std::string spec = env;
    auto colon = spec.find(':');
    t.name = spec.substr(0, colon);
    if (colon != std::string::npos) t.count = std::strtol(spec.c_str() + colon + 1, nullptr, 10);
    t.armed = true;
    return t;
  }();
  return target;
}

std::atomic<long> hits{0};

}  // namespace

void CrashPoint(const char* name) {
  const Target& t = GetTarget();
  if (!t.armed || t.name != name) return;
  if (hits.fetch_add(1) + 1 >= t.count) raise(SIGKILL);
}

}  // namespace baton
