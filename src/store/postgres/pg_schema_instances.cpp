// The migrations of several instances on one database; see pg_schema_instances.h.
#include "store/postgres/pg_schema_instances.h"

namespace baton::pg {

// Migration 3: work offered between instances (OfferBoard in <baton/store.h>). A row is a
// dispatch of `owner`'s execution that no worker connected to its owner could take: open
// until an instance whose workers can takes it (`taker`, with `take` counting the
// takings: a taker's reports name theirs, so a taker that lost the row is refused), held
// by the taker until `lease_until` unless renewed (then open again), and `done` with its
// result until the owner collects it. A row whose status changes notifies `baton_offers`
// (per row: a statement that changes nothing must not wake every instance): the hint
// that wakes the other instances (they poll as well).
//
// `control_requests` (ControlRelay): a cancel, pause, resume or signal for an execution
// that `instance` holds, asked by another instance; taken by that instance, answered
// with a status `code` ('' for ok) and `message`, and removed by the asker.
const char* const kSchemaOffers = R"sql(
CREATE TABLE offered_dispatches (
  id TEXT COLLATE "C" PRIMARY KEY,
  ns TEXT COLLATE "C" NOT NULL,
  owner TEXT COLLATE "C" NOT NULL,
  priority INTEGER NOT NULL,
  offered_at BIGINT NOT NULL,
  request TEXT NOT NULL,
  status TEXT NOT NULL,
  taker TEXT COLLATE "C",
  take BIGINT NOT NULL DEFAULT 0,
  lease_until BIGINT,
  started_seen BOOLEAN NOT NULL DEFAULT false,
  result TEXT
);
CREATE INDEX offered_dispatches_open ON offered_dispatches (priority DESC, offered_at)
  WHERE status = 'open';
CREATE INDEX offered_dispatches_owner ON offered_dispatches (owner);
CREATE INDEX offered_dispatches_taker ON offered_dispatches (taker);
CREATE FUNCTION baton_offers_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('baton_offers', '');
  RETURN NULL;
END $$;
CREATE TRIGGER offered_dispatches_notify AFTER INSERT OR UPDATE OF status ON offered_dispatches
  FOR EACH ROW EXECUTE FUNCTION baton_offers_changed();
CREATE TABLE control_requests (
  id BIGSERIAL PRIMARY KEY,
  instance TEXT COLLATE "C" NOT NULL,
  execution_id TEXT COLLATE "C" NOT NULL,
  op TEXT NOT NULL,
  args TEXT NOT NULL,
  asked_at BIGINT NOT NULL,
  taken BOOLEAN NOT NULL DEFAULT false,
  answered BOOLEAN NOT NULL DEFAULT false,
  code TEXT,
  message TEXT,
  result TEXT
);
CREATE INDEX control_requests_asked ON control_requests (instance) WHERE NOT taken;
CREATE TRIGGER control_requests_notify AFTER INSERT OR UPDATE OF answered ON control_requests
  FOR EACH ROW EXECUTE FUNCTION baton_offers_changed();
)sql";

// Migration 4: the feed every instance shares. Each event row keeps the id of the
// transaction that wrote it (`feed_xid`, set by the database) and its ordinal among that
// transaction's events (`feed_ord`, from the store's one INSERT of events per commit).
// Readers list only rows whose transaction is older than the oldest one still running
// (pg_snapshot_xmin of the current snapshot): every transaction before that point has
// ended, so nothing can appear later below a position already read. Rows written before
// this migration are numbered in their old order under small made-up transaction ids,
// below every real one.
const char* const kSchemaFeed = R"sql(
ALTER TABLE events ADD COLUMN feed_xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
                   ADD COLUMN feed_ord BIGINT NOT NULL DEFAULT 0;
UPDATE events SET feed_xid = ((n.rn - 1) / 4194303 + 3)::text::xid8,
                  feed_ord = (n.rn - 1) % 4194303 + 1
  FROM (SELECT execution_id, seq,
               row_number() OVER (ORDER BY position, execution_id, seq) AS rn
          FROM events) n
  WHERE events.execution_id = n.execution_id AND events.seq = n.seq;
CREATE INDEX events_feed ON events (feed_xid, feed_ord);
)sql";

// Migration 5: the result cache every instance shares. An entry row keeps the id of the
// transaction that wrote its result (`changed_xid`; a hit, which only counts, keeps it),
// and a deleted entry leaves its key in `cache_deletions` with the deleting transaction's
// id, for an hour. Read as the feed is: only rows of transactions older than the oldest
// one still running, so nothing appears later below a point already read.
const char* const kSchemaSharedCache = R"sql(
ALTER TABLE cache_entries ADD COLUMN changed_xid xid8 NOT NULL DEFAULT pg_current_xact_id();
CREATE INDEX cache_entries_changed ON cache_entries (changed_xid);
CREATE TABLE cache_deletions (
  ns TEXT COLLATE "C" NOT NULL,
  key TEXT COLLATE "C" NOT NULL,
  deleted_xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  deleted_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX cache_deletions_xid ON cache_deletions (deleted_xid);
CREATE INDEX cache_deletions_at ON cache_deletions (deleted_at);
CREATE FUNCTION baton_cache_entry_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.created_at IS DISTINCT FROM OLD.created_at OR
     NEW.execution_id IS DISTINCT FROM OLD.execution_id THEN
    NEW.changed_xid := pg_current_xact_id();
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER cache_entries_changed BEFORE UPDATE ON cache_entries
  FOR EACH ROW EXECUTE FUNCTION baton_cache_entry_changed();
CREATE FUNCTION baton_cache_entry_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO cache_deletions (ns, key) VALUES (OLD.ns, OLD.key);
  RETURN OLD;
END $$;
CREATE TRIGGER cache_entries_deleted AFTER DELETE ON cache_entries
  FOR EACH ROW EXECUTE FUNCTION baton_cache_entry_deleted();
)sql";

// Migration 6: pools every instance shares. A row holds `slots` slots of a pool for one
// step (`holder`, "EXECUTION/STEP") on instance `owner` until `lease_until` (the
// database's clock), renewed with the owner's leases; a hold not renewed (its instance
// died) stops counting and is removed by the next hold of its pool. baton_pool_hold()
// takes a hold under the pool's advisory lock: the count and the insert are one step for
// every instance.
const char* const kSchemaSharedPools = R"sql(
CREATE TABLE pool_holds (
  ns TEXT COLLATE "C" NOT NULL,
  pool TEXT COLLATE "C" NOT NULL,
  holder TEXT COLLATE "C" NOT NULL,
  owner TEXT COLLATE "C" NOT NULL,
  slots BIGINT NOT NULL,
  lease_until BIGINT NOT NULL,
  PRIMARY KEY (ns, pool, holder)
);
CREATE INDEX pool_holds_owner ON pool_holds (owner);
CREATE FUNCTION baton_pool_hold(p_ns TEXT, p_pool TEXT, p_holder TEXT, me TEXT,
                                p_slots BIGINT, p_limit BIGINT, lease_ms BIGINT,
                                p_force BOOLEAN) RETURNS BOOLEAN LANGUAGE plpgsql AS $$
DECLARE
  now_ms BIGINT := baton_now_ms();
  used BIGINT;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('baton pool ' || p_ns || '/' || p_pool, 0));
  DELETE FROM pool_holds WHERE ns = p_ns AND pool = p_pool AND lease_until < now_ms;
  UPDATE pool_holds SET owner = me, lease_until = now_ms + lease_ms
    WHERE ns = p_ns AND pool = p_pool AND holder = p_holder;
  IF FOUND THEN
    RETURN true;
  END IF;
  SELECT COALESCE(SUM(slots), 0) INTO used FROM pool_holds WHERE ns = p_ns AND pool = p_pool;
  IF NOT p_force AND used + p_slots > p_limit THEN
    RETURN false;
  END IF;
  INSERT INTO pool_holds VALUES (p_ns, p_pool, p_holder, me, p_slots, now_ms + lease_ms);
  RETURN true;
END $$;
)sql";

// Migration 7: `held_since` (the database's clock) orders the holders of a pool, the
// longest held first: a workflow's `concurrency: cancel_oldest` replaces that one. A hold
// taken again before it lapses (renewed, or adopted by another instance after a
// failover) keeps its age.
const char* const kSchemaPoolHoldAge = R"sql(
ALTER TABLE pool_holds ADD COLUMN held_since BIGINT NOT NULL DEFAULT 0;
CREATE OR REPLACE FUNCTION baton_pool_hold(p_ns TEXT, p_pool TEXT, p_holder TEXT, me TEXT,
                                           p_slots BIGINT, p_limit BIGINT, lease_ms BIGINT,
                                           p_force BOOLEAN) RETURNS BOOLEAN
LANGUAGE plpgsql AS $$
DECLARE
  now_ms BIGINT := baton_now_ms();
  used BIGINT;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended('baton pool ' || p_ns || '/' || p_pool, 0));
  DELETE FROM pool_holds WHERE ns = p_ns AND pool = p_pool AND lease_until < now_ms;
  UPDATE pool_holds SET owner = me, lease_until = now_ms + lease_ms
    WHERE ns = p_ns AND pool = p_pool AND holder = p_holder;
  IF FOUND THEN
    RETURN true;
  END IF;
  SELECT COALESCE(SUM(slots), 0) INTO used FROM pool_holds WHERE ns = p_ns AND pool = p_pool;
  IF NOT p_force AND used + p_slots > p_limit THEN
    RETURN false;
  END IF;
  INSERT INTO pool_holds (ns, pool, holder, owner, slots, lease_until, held_since)
    VALUES (p_ns, p_pool, p_holder, me, p_slots, now_ms + lease_ms, now_ms);
  RETURN true;
END $$;
)sql";

}  // namespace baton::pg
