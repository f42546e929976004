// libFuzzer target: one worker-protocol message as text, either direction. A message
// that parses must survive a round trip through its JSON form unchanged.
#include "protocol/worker_protocol.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace baton::protocol;
  if (auto w = ParseWorkerMessageText(text); w.ok()) {
    auto again = ParseWorkerMessageText(ToText(*w));
    if (!again.ok() || !(*again == *w)) std::abort();  // the round trip must hold
  }
  if (auto s = ParseServerMessageText(text); s.ok()) {
    auto again = ParseServerMessageText(ToText(*s));
    if (!again.ok()) std::abort();
  }
  return 0;
}
