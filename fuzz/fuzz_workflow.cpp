// libFuzzer target: a workflow definition (YAML, or JSON when it starts with '{').
// Whatever the bytes, ParseWorkflow answers with a definition or diagnostics; it never
// crashes, hangs or runs out of memory (nesting and alias limits bound it).
#include <baton/workflow.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  baton::ParseOutcome out = baton::ParseWorkflow(text, "fuzz.yaml");
  if (out.ok()) (void)out.workflow->steps.size();
  return 0;
}
