// libFuzzer target: one worker-protocol frame as text (a message or a batch of them),
// either direction. A message that parses must survive a round trip through its JSON
// form unchanged, and a frame through BatchText.
#include "protocol/worker_protocol.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

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
  if (auto frame = ParseWorkerFrameText(text); frame.ok()) {
    std::vector<std::string> texts;
    for (const WorkerMessage& m : *frame) texts.push_back(ToText(m));
    auto again = ParseWorkerFrameText(BatchText(texts));
    if (!again.ok() || !(*again == *frame)) std::abort();
  }
  if (auto frame = ParseServerFrameText(text); frame.ok()) {
    std::vector<std::string> texts;
    for (const ServerMessage& m : *frame) texts.push_back(ToText(m));
    if (!ParseServerFrameText(BatchText(texts)).ok()) std::abort();
  }
  return 0;
}
