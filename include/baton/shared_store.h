// What a Store offers when several servers share one database (PostgreSQL with an
// instance name; <baton/store.h> says where each is reached: Store::leases(), offers(),
// relay(), feed(), shared_cache(), shared_pools()). A single-process store has none.
#pragma once

#include <baton/records.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace baton {

// Ownership of executions when several servers share one database (PostgreSQL with an
// instance name): each unfinished execution is held by one instance through a lease that
// the instance renews; an execution whose holder stops renewing is claimed by another
// and recovered there from its stored state.
//
// The store enforces it on every commit: a batch that writes an execution this instance
// does not hold (lost, expired, or held by another) fails as a whole, applying nothing;
// a batch that starts an execution (or runs a finished one again) takes it; one that
// finishes it releases it. Leases are timed by the database's clock; "trusted" is the
// instance's own window, shorter than a lease, within which its leases cannot have
// expired: past it the store refuses commits of held executions until a renewal
// succeeds, so an instance that was frozen (or cut off) never acts on what others may
// have taken meanwhile.
//
// Threading: thread-safe. Errors: errc::kStore.
class ExecutionLeases {
 public:
  virtual ~ExecutionLeases() = default;
  // This instance's name (unique among the instances of the database).
  virtual const std::string& instance() const = 0;
  // How long a lease lasts unless renewed.
  virtual Duration lease() const = 0;
  // Renews every lease held. The executions lost since the last call (another instance
  // took them, or they expired and were taken) are no longer held: the caller drops
  // them from memory without writing, then calls Forget() once the batches it submitted
  // before that are settled (committed or refused).
  virtual Result<std::vector<std::string>> Renew() = 0;
  // Takes up to `limit` unfinished executions nobody holds: their lease expired, or they
  // predate leases. With `mine`, also those this instance's name holds from before a
  // restart. The caller recovers each from the store.
  virtual Result<std::vector<std::string>> Claim(size_t limit, bool mine) = 0;
  // Lets go of a held execution the caller no longer runs (dropped from memory without
  // finishing): any instance may claim it at once. Like a lost one, its writes are
  // refused until Forget().
  virtual Status Release(const std::string& execution_id) = 0;
  // Ends the refusal of commits to executions Renew() reported lost.
  virtual void Forget(const std::vector<std::string>& execution_ids) = 0;
  virtual bool Holds(const std::string& execution_id) const = 0;
  // The executions held now.
  virtual std::vector<std::string> Held() const = 0;
  // The instance that holds `execution_id` now (a child workflow's: its root's holder),
  // read from the database; empty when nobody does (finished, or its lease released).
  virtual Result<std::string> HolderOf(const std::string& execution_id) = 0;
  // Whether the last successful renewal is recent enough that no lease held can have
  // expired.
  virtual bool Trusted() const = 0;
  // Takes, or keeps, the role `role` (one instance at a time, e.g. "cron"), held like a
  // lease: true while this instance has it.
  virtual Result<bool> Lead(const std::string& role) = 0;
};

// Work offered between server instances on one database (PostgreSQL with an instance
// name): a worker connected to any instance runs steps of executions held by any other.
//
// An instance offers a dispatch (a `command` step's attempt) that no worker connected to
// it can take; an instance whose workers can take it takes it, runs it as its own, and
// reports its start and its result; the owner collects them and ends the attempt. A
// taker holds what it took by a lease it renews: one that stops renewing loses it and
// the dispatch is open again, and every report names the taking (`take`), so a taker
// that lost it changes nothing. A new owner of the execution (a takeover) offers it
// again with the same id, which makes it that dispatch's owner in whatever state it is.
// At least once: a dispatch whose taker died runs again elsewhere.
//
// Threading: one thread at a time, except Wake(). Errors: errc::kStore.
struct OfferedDispatch {
  std::string id;      // the dispatch id (RunRequest::assignment_id)
  std::string owner;   // the instance that holds the execution
  int64_t take = 0;    // which taking: a report names it
  std::string status;  // open | taken | running | done
  Json request;        // the RunRequest, as the owner offered it
  Json result;         // done: {ok, output, error{code, message, details}}
};

class OfferBoard {
 public:
  virtual ~OfferBoard() = default;
  // Offers these (id, namespace, priority, request) as this instance's. An id offered
  // before (by an instance that stopped) keeps its state and becomes this instance's.
  struct Offer {
    std::string id, ns;
    int priority = 1;
    Json request;
  };
  virtual Status Publish(const std::vector<Offer>& offers) = 0;
  // This instance no longer wants them (cancelled): gone; a taker finds out at its next
  // renewal.
  virtual Status Withdraw(const std::vector<std::string>& ids) = 0;
  // Up to `limit` open offers of any instance, highest priority first, then oldest; takes
  // whose taker stopped renewing are open again first.
  virtual Result<std::vector<OfferedDispatch>> Open(size_t limit) = 0;
  // Takes those of `ids` still open: what this instance got.
  virtual Result<std::vector<OfferedDispatch>> Take(const std::vector<std::string>& ids) = 0;
  // The taker's report: `running` (again with each progress: `result` {progress, data}),
  // or `done` with the result. False when the take is no longer this instance's (it lost
  // it, or the owner withdrew it).
  virtual Result<bool> Report(const std::string& id, int64_t take, const std::string& status,
                              const Json& result) = 0;
  // The taker lets go: open again for anyone (no worker here can run it any more).
  virtual Status GiveBack(const std::string& id, int64_t take) = 0;
  // The taker is also the owner and runs it itself: the offer is gone.
  virtual Status Drop(const std::string& id, int64_t take) = 0;
  // Renews this instance's takes: (id, take) of those it still holds.
  virtual Result<std::vector<std::pair<std::string, int64_t>>> Renew() = 0;
  // The owner's news of these offers of this instance: those started or that reported
  // progress since the last call (status running, `result` the last progress or null),
  // and those done, each returned once. A done offer stays on the board until the store
  // shows its attempt ended (a later call removes it then): an owner that dies before
  // committing the result leaves it to the instance that takes the execution over,
  // whose Publish() makes it collectable again, so the step does not run twice.
  virtual Result<std::vector<OfferedDispatch>> Collect(const std::vector<std::string>& ids) = 0;
  // Removes what no instance needs any more, of any owner: offers older than
  // `older_than` whose execution finished (or is gone) or whose attempt ended, and
  // control requests older than that (their asker gave up long ago). How many rows went.
  // One instance at a time runs it (ExecutionLeases::Lead).
  virtual Result<size_t> Sweep(Duration older_than) = 0;
  // Waits up to `timeout` for a change on the board (a hint: a change may also come
  // without one) or for Wake(). True when woken that way.
  virtual Result<bool> Wait(Duration timeout) = 0;
  // Ends a Wait() now. Any thread.
  virtual void Wake() = 0;
};

// Control requests between instances on one database: a cancel, pause, resume or signal
// that reaches an instance which does not hold the execution is relayed, through the
// database, to the instance that does; it applies it and answers. The asker waits for
// the answer (a notification wakes it) and gives up after a while.
//
// Threading: one thread at a time. Errors: errc::kStore.
struct ControlRequest {
  int64_t id = 0;  // set by Ask()
  std::string execution_id;
  std::string op;              // cancel | pause | resume | signal
  Json args = Json::object();  // cancel: {reason}; signal: {name, payload}
};

struct ControlAnswer {
  int64_t id = 0;
  Status status;  // the holder's outcome
  Json result;    // signal: {seq}
};

class ControlRelay {
 public:
  virtual ~ControlRelay() = default;
  // Asks `instance` to apply `request`: the request's id.
  virtual Result<int64_t> Ask(const std::string& instance, const ControlRequest& request) = 0;
  // Requests to this instance not taken yet; each is taken as it is returned.
  virtual Result<std::vector<ControlRequest>> Asked() = 0;
  virtual Status Answer(int64_t id, const Status& status, const Json& result) = 0;
  // The answers to these requests that came, each returned (and removed) once.
  virtual Result<std::vector<ControlAnswer>> Answers(const std::vector<int64_t>& ids) = 0;
  // Drops requests nobody will read: never answered, or answered to an asker that gave up.
  virtual Status Forget(const std::vector<int64_t>& ids) = 0;
};

// The events every instance of one database commits, in one order they all share (with
// PostgreSQL and an instance name): what the live feed of a workflow or a namespace reads,
// so that a client sees the same feed, with the same positions, on every instance.
//
// A position here is the one EventRecord::position holds in every event this store
// returns: made by the database from the committing transaction, not by an engine. An
// event is listed only once every transaction that could still add an event before it
// has ended, so a reader that resumes after the last position it saw misses nothing and
// sees nothing twice; an event becomes listable a moment after its commit (longer while
// another transaction on the database stays open).
//
// Threading: thread-safe. Errors: errc::kStore.
struct FeedEntry {
  EventRecord event;
  std::string ns;        // its execution's namespace
  std::string workflow;  // its execution's workflow
};

class SharedFeed {
 public:
  virtual ~SharedFeed() = default;
  // Events of every namespace with position > after, ascending, at most `limit`.
  virtual Result<std::vector<FeedEntry>> FeedAfter(int64_t after, size_t limit) = 0;
  // The position of the last event listable now (0 when none).
  virtual Result<int64_t> FeedEnd() = 0;
};

// The result cache as every instance sees it, when several instances share a database:
// what changed since a position, for each instance to merge into its engine's cache
// (Engine::MergeCache), so a result one instance cached is found by the others, and one
// cleared or evicted anywhere goes everywhere.
struct CacheChanges {
  std::vector<CacheEntryRecord> entries;  // added or replaced since `after`, outputs included
  std::vector<CacheKey> deleted;          // deleted since `after` (before `entries` apply)
  int64_t next = 0;                       // the `after` of the next call
};
class SharedCache {
 public:
  virtual ~SharedCache() = default;
  // Changes committed after position `after` (0: every entry stored) up to a point no
  // commit can appear below later; a deletion is listed for a bounded time (an hour).
  // `after` = kCacheNow lists nothing: `next` is then where to start reading when every
  // entry is read next (ListCacheEntries), so none is missed and few are read twice.
  static constexpr int64_t kCacheNow = INT64_MAX;
  virtual Result<CacheChanges> CacheChangesAfter(int64_t after) = 0;
};

// Pools as every instance sees them, when several instances share a database: a step's
// slots are held in the database, for its instance, and renewed with that instance's
// leases (ExecutionLeases::Renew), so a pool's size bounds its steps across instances,
// and the slots of an instance that died come free once its holds are not renewed.
struct PoolHold {
  std::string ns;
  std::string pool;
  // "EXECUTION/STEP" for a step's pool; "EXECUTION" for a workflow's concurrency limit
  // (pool "concurrency\nWORKFLOW\nKEY", a name no user pool can have).
  std::string holder;
  int64_t slots = 1;
};
class SharedPools {
 public:
  virtual ~SharedPools() = default;
  // Holds `hold.slots` slots if the holds of every instance leave room for them under
  // `limit`, or regardless when `force` (a step that held them before a restart or a
  // failover keeps them); a holder that holds already keeps its hold. True when held.
  virtual Result<bool> HoldSlots(const PoolHold& hold, int64_t limit, bool force) = 0;
  // Gives the holder's slots back (nothing when this instance holds none for it).
  virtual Status ReleaseSlots(const PoolHold& hold) = 0;
  // Gives back every slot this instance holds (its engine dropped them all).
  virtual Status ReleaseAllSlots() = 0;
  // The slots every instance holds in the pool now.
  virtual Result<int64_t> SlotsHeld(const std::string& ns, const std::string& pool) = 0;
  // The holders of the pool on every instance, the longest held first (a workflow's
  // `concurrency: cancel_oldest` replaces the first).
  virtual Result<std::vector<std::string>> Holders(const std::string& ns,
                                                   const std::string& pool) = 0;
};

}  // namespace baton
