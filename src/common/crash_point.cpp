#include "common/crash_point.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>

namespace baton {
namespace {

struct Target {
  std::string name;
  long count = 1;  // crash: the Nth hit; stall: milliseconds
  bool armed = false;
};

Target ReadTarget(const char* variable, long default_count) {
  Target t;
  const char* env = std::getenv(variable);
  if (!env || !*env) return t;
  std::string spec = env;
  auto colon = spec.find(':');
  t.name = spec.substr(0, colon);
  t.count = default_count;
  if (colon != std::string::npos) t.count = std::strtol(spec.c_str() + colon + 1, nullptr, 10);
  t.armed = true;
  return t;
}

const Target& CrashTarget() {
  static const Target target = ReadTarget("BATON_CRASH_AT", 1);
  return target;
}

const Target& StallTarget() {
  static const Target target = ReadTarget("BATON_STALL_AT", 0);
  return target;
}

std::atomic<long> hits{0};

}  // namespace

void CrashPoint(const char* name) {
  if (const Target& s = StallTarget(); s.armed && s.name == name && s.count > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(s.count));
  }
  const Target& t = CrashTarget();
  if (!t.armed || t.name != name) return;
  if (hits.fetch_add(1) + 1 >= t.count) raise(SIGKILL);
}

}  // namespace baton
