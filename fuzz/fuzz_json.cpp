// libFuzzer target: untrusted JSON text (request bodies, worker messages, step output).
// Differential: ParseJsonText (its fast reader, nlohmann's parser as the fallback) must
// accept exactly what nlohmann's parser alone accepts, with the same value or error.
#include "common/json_parse.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  baton::Json out, reference;
  baton::JsonParseError error, reference_error;
  const bool ok = baton::ParseJsonText(text, &out, &error);
  const bool reference_ok =
      baton::json_internal::ParseWithNlohmann(text, &reference, &reference_error);
  if (ok != reference_ok) {
    std::fprintf(stderr, "disagreement: fast %d, nlohmann %d\n", ok, reference_ok);
    std::abort();
  }
  if (ok) {
    // What a parsed value goes through next: dumping it (responses, the store).
    const std::string dumped = out.dump(-1, ' ', false, baton::Json::error_handler_t::replace);
    if (dumped != reference.dump(-1, ' ', false, baton::Json::error_handler_t::replace)) {
      std::fprintf(stderr, "different values\n");
      std::abort();
    }
  } else if (error.Describe() != reference_error.Describe()) {
    std::fprintf(stderr, "different errors: %s | %s\n", error.Describe().c_str(),
                 reference_error.Describe().c_str());
    std::abort();
  }
  return 0;
}
