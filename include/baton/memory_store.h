// The memory store: every record in maps, nothing on disk. For tests and `baton run
// --ephemeral`, where the store only has to hold what the run needs. Its own module
// (src/store/memory, target baton_store_memory); see <baton/store.h> for the contract.
#pragma once

#include <baton/store.h>

#include <memory>

namespace baton {

struct MemoryStoreOptions {
  // false: committed events are not kept (GetEvents and ListEvents find none, and a
  // repeated seq is not refused). For a run whose observers see each event as it is
  // committed and which never reads the log back (`baton run --ephemeral`): the log was
  // most of its memory.
  bool keep_events = true;
  // false: committed step and attempt rows are not kept (GetSteps and GetAttempts find
  // none). For a run that reads no step back (`baton run --ephemeral` without --json):
  // the engine holds the state it schedules from, and the rows were a sixth of its time.
  bool keep_steps = true;
};
std::unique_ptr<Store> NewMemoryStore(MemoryStoreOptions options = {});

}  // namespace baton
