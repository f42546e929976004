// The MemoryStore's dead-letter queue. Private to the memory store, which guards every
// call with its mutex.
#pragma once

#include <baton/status.h>
#include <baton/store.h>

#include <map>
#include <vector>

namespace baton::memory {

class DeadLetterTable {
 public:
  // Appends an entry with id 0 (numbering it); replaces the one with its id otherwise.
  void Add(DeadLetterRecord d);

  std::vector<DeadLetterRecord> List(const DeadLetterFilter& f) const;
  Result<DeadLetterRecord> Get(int64_t id) const;
  std::vector<DeadLetterGroup> Count(const DeadLetterFilter& f) const;

 private:
  std::map<int64_t, DeadLetterRecord> entries_;  // by id: the listing order
  int64_t last_id_ = 0;
};

}  // namespace baton::memory
