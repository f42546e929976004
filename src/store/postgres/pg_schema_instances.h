// The migrations that serve several server instances on one database (pg_migrations.cpp
// applies them in order after the tables of one server).
#pragma once

#include <cstdint>

namespace baton::pg {

// Migration 3: work offered between instances, and control requests relayed to the
// instance that holds an execution.
extern const char* const kSchemaOffers;
// Migration 4: the feed every instance shares (SharedFeed in <baton/store.h>).
extern const char* const kSchemaFeed;
// Migration 5: the result cache every instance shares (SharedCache in <baton/store.h>).
extern const char* const kSchemaSharedCache;
// Migration 6: the pools every instance shares (SharedPools in <baton/store.h>).
extern const char* const kSchemaSharedPools;
// Migration 7: when each pool hold was taken (the oldest holder of a concurrency limit).
extern const char* const kSchemaPoolHoldAge;

// A feed position packs the committing transaction's id (PostgreSQL's 64-bit xid8) above
// the event's ordinal within that transaction (1, 2, ...): ordered as the pair is, and one
// number a client can hand back. 22 bits of ordinal allow 4,194,303 events per commit
// (the store refuses a commit with more); the 41 bits left count 2.2 trillion
// transactions before a position overflows.
constexpr int kFeedOrdinalBits = 22;
constexpr int64_t kFeedOrdinalMask = (int64_t{1} << kFeedOrdinalBits) - 1;

}  // namespace baton::pg
