// libFuzzer target: untrusted JSON text (request bodies, worker messages, step output).
#include "common/json_parse.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  baton::Json out;
  baton::JsonParseError error;
  if (baton::ParseJsonText(text, &out, &error)) {
    // What a parsed value goes through next: dumping it (responses, the store).
    (void)out.dump(-1, ' ', false, baton::Json::error_handler_t::replace);
  } else {
    (void)error.Describe();
  }
  return 0;
}
