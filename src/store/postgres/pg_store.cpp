// PgStore: opening the store, and committing batches (all of them in one transaction).
#include "store/postgres/pg_store.h"

#include <baton/postgres_store.h>

#include "common/crash_point.h"
#include "store/postgres/pg_arrays.h"
#include "store/postgres/pg_migrations.h"
#include "store/postgres/pg_schema_instances.h"
#include "store/postgres/pg_text.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace baton::pg {

namespace {

// The statements that write a record kind, built from its description once, with the
// names they are prepared under.
template <class R>
struct WriteSql {
  std::string upsert, upsert_name;  // every column; a key already stored is updated
  // A numbered table's row without its number: the database assigns it.
  std::string numbered, numbered_name;
  // Many rows at once, a column per array parameter; upserts as `upsert`.
  std::string bulk, bulk_name;
};

// The column a table's bulk INSERT fills with each row's ordinal (1, 2, ...), if any:
// events number themselves within their commit for the shared feed
// (pg_schema_instances.h).
template <class R>
constexpr const char* kOrdinalColumn = nullptr;
template <>
constexpr const char* kOrdinalColumn<EventRecord> = "feed_ord";

template <class R>
std::string BulkSql(const rows::Table<R>& t) {
  std::string cols, arrays;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    cols += (i == 0 ? "" : ", ") + std::string(t.columns[i].name);
    arrays += (i == 0 ? "$" : ", $") + std::to_string(i + 1) +
              (t.columns[i].integer ? "::bigint[]" : "::text[]");
  }
  if (kOrdinalColumn<R> != nullptr) cols += std::string(", ") + kOrdinalColumn<R>;
  std::string sql = "INSERT INTO " + std::string(t.name) + " (" + cols + ") SELECT * FROM unnest(" +
                    arrays + ")" + (kOrdinalColumn<R> != nullptr ? " WITH ORDINALITY" : "");
  const std::string upsert = rows::UpsertSql(t, '$');
  if (const size_t on = upsert.find(" ON CONFLICT"); on != std::string::npos) {
    sql += upsert.substr(on);
  }
  return sql;
}

template <class R>
const WriteSql<R>& SqlFor() {
  static const WriteSql<R> sql = [] {
    const rows::Table<R>& t = rows::TableOf<R>();
    WriteSql<R> w;
    w.upsert = rows::UpsertSql(t, '$');
    w.upsert_name = std::string("upsert_") + t.name;
    if (t.numbered) {
      w.numbered = rows::InsertSql(t, '$', 1);
      w.numbered_name = std::string("insert_") + t.name;
    }
    w.bulk = BulkSql(t);
    w.bulk_name = std::string("bulk_") + t.name;
    return w;
  }();
  return sql;
}

template <class R>
std::string Describe(const void* record) {
  return rows::TableOf<R>().describe(*static_cast<const R*>(record));
}

template <class R>
std::string DescribeRows(const void*) {
  return std::string("rows of ") + rows::TableOf<R>().name;
}

const std::string kTouchCacheEntry =
    "UPDATE cache_entries SET last_hit_at = $3, hits = $4 WHERE ns = $1 AND key = $2";
const std::string kDeleteCacheEntry = "DELETE FROM cache_entries WHERE ns = $1 AND key = $2";

std::string DescribeTouch(const void* record) {
  const auto* t = static_cast<const CacheTouch*>(record);
  return "cache entry " + t->key + " of namespace " + t->ns + " (its use)";
}
std::string DescribeDelete(const void* record) {
  const auto* k = static_cast<const CacheKey*>(record);
  return "deleting cache entry " + k->key + " of namespace " + k->ns;
}

}  // namespace

bool RowOfRows::Int(int col, int64_t* out) const {
  const auto& v = rows_.at(row_, static_cast<size_t>(col));
  if (!v) return false;
  const char* end = v->data() + v->size();
  auto [p, ec] = std::from_chars(v->data(), end, *out);
  return ec == std::errc() && p == end;
}

Status TakeOwnerLock(Connection& c, const std::string& url, const std::string& instance) {
  if (instance.empty()) {
    auto owned = c.Exec(kTakeOwnerLock, {}, "taking the database's owner lock");
    if (!owned.ok()) return owned.status();
    if (owned->size() != 1 || owned->at(0, 0) != "t") {
      return Status(errc::kStore, "PostgreSQL database " + RedactedUrl(url) +
                                      " is in use by another baton server (or by instances "
                                      "started with --instance)");
    }
    return Status::Ok();
  }
  auto shared = c.Exec(kShareOwnerLock, {}, "taking a share of the database's owner lock");
  if (!shared.ok()) return shared.status();
  if (shared->size() != 1 || shared->at(0, 0) != "t") {
    return Status(errc::kStore, "PostgreSQL database " + RedactedUrl(url) +
                                    " is in use by a baton server started without --instance");
  }
  auto named = c.Exec(kTakeInstanceLock, {instance}, "taking the instance name's lock");
  if (!named.ok()) return named.status();
  if (named->size() != 1 || named->at(0, 0) != "t") {
    return Status(errc::kStore, "another baton server on PostgreSQL database " + RedactedUrl(url) +
                                    " runs as instance \"" + instance +
                                    "\"; give each instance its own name");
  }
  return Status::Ok();
}

Status PgStore::Reconnected(Connection& c, Reconnect& r, bool writer) {
  if (c.ok()) return Status::Ok();
  const auto now = std::chrono::steady_clock::now();
  const bool back_since =
      connected_at_.load(std::memory_order_acquire) > r.failed_at.time_since_epoch().count();
  if (now < r.next && !back_since) {
    return Status(errc::kStore, "the connection to PostgreSQL at " + RedactedUrl(url_) +
                                    " is lost; reconnecting");
  }
  auto again = Connection::Open(url_, options_);
  Status s = again.ok() ? Status::Ok() : again.status();
  if (s.ok() && writer) s = TakeOwnerLock(*again, url_, instance_);
  if (!s.ok()) {
    r.failed_at = now;
    r.next = now + r.delay;
    r.delay = std::min(r.delay * 2, std::chrono::milliseconds(5000));
    return s;
  }
  c = std::move(again).value();
  r = Reconnect{};
  connected_at_.store(now.time_since_epoch().count(), std::memory_order_release);
  return Status::Ok();
}

Status PgStore::Send(const char* name, const std::string& sql, const void* record,
                     std::string (*describe)(const void*)) {
  sent_.push_back({record, describe});
  if (Status s = writer_.Send(name, sql, values_); !s.ok()) return s;
  // A bounded number of answers in flight: libpq blocks writing while the server, its
  // answers unread, could block writing back.
  if (sent_.size() - synced_ >= kSyncEvery) return SyncSent();
  return Status::Ok();
}

Status PgStore::SyncSent() {
  size_t failed = 0;
  Status s = writer_.Sync("PostgreSQL", &failed);
  synced_ = sent_.size();
  if (s.ok()) return s;
  if (failed < sent_.size() && sent_[failed].describe != nullptr) {
    return Context(s, "writing " + sent_[failed].describe(sent_[failed].record));
  }
  return s;
}

template <class R>
Status PgStore::SendAll(const std::vector<R>& records) {
  const rows::Table<R>& table = rows::TableOf<R>();
  const WriteSql<R>& sql = SqlFor<R>();
  for (const R& r : records) {
    row_.Clear();
    table.Write(r, row_);
    const auto cells = row_.cells();
    // A numbered table's record without its number leaves the column out.
    const bool unnumbered = table.numbered && cells[0].kind == rows::Cell::Kind::kNull;
    const size_t first = unnumbered ? 1 : 0;
    values_.assign(cells.size() - first, nullptr);
    formatted_.resize(cells.size());  // sized before any pointer into it is taken
    for (size_t i = first; i < cells.size(); ++i) {
      const rows::Cell& c = cells[i];
      const char*& v = values_[i - first];
      if (c.kind == rows::Cell::Kind::kInt) {
        formatted_[i] = std::to_string(c.integer);
        v = formatted_[i].c_str();
      } else if (c.kind == rows::Cell::Kind::kText) {
        // A cell's text is a whole std::string (or a C string), so it ends in a NUL.
        if (IsStorableText(c.text)) {
          v = c.text.data();
        } else {
          formatted_[i] = StorableText(c.text);
          v = formatted_[i].c_str();
        }
      }
    }
    Status s = unnumbered ? Send(sql.numbered_name.c_str(), sql.numbered, &r, &Describe<R>)
                          : Send(sql.upsert_name.c_str(), sql.upsert, &r, &Describe<R>);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

template <class R>
std::string PgStore::KeyOf(const rows::Table<R>& table, const R& r) {
  key_row_.Clear();
  for (const rows::Column<R>& c : table.columns) {
    if (c.key) c.put(r, key_row_);
  }
  std::string key;
  for (const rows::Cell& cell : key_row_.cells()) {
    if (cell.kind == rows::Cell::Kind::kInt) {
      key += std::to_string(cell.integer);
    } else {
      key += cell.text;
    }
    key += '\x1f';  // no key text holds it: ids are validated names
  }
  return key;
}

template <class R>
Status PgStore::SendBulk(std::span<const WriteBatch* const> batches,
                         std::vector<R> WriteBatch::*member) {
  const rows::Table<R>& table = rows::TableOf<R>();
  // Within one transaction only a key's last value survives: each key is written once,
  // with its last value, at its first position (as the SQLite store coalesces; one
  // statement may not upsert a key twice).
  std::vector<const R*> chosen;
  keys_.clear();
  for (const WriteBatch* b : batches) {
    for (const R& r : b->*member) {
      if (table.insert_only) {
        chosen.push_back(&r);
        continue;
      }
      auto [it, added] = keys_.try_emplace(KeyOf(table, r), chosen.size());
      if (added) {
        chosen.push_back(&r);
      } else {
        chosen[it->second] = &r;
      }
    }
  }
  if (chosen.empty()) return Status::Ok();
  if (kOrdinalColumn<R> != nullptr && chosen.size() > static_cast<size_t>(kFeedOrdinalMask)) {
    return Status(errc::kStore, "one commit of " + std::to_string(chosen.size()) + " rows of " +
                                    table.name + ": at most " + std::to_string(kFeedOrdinalMask) +
                                    " fit the shared feed's numbering");
  }
  const size_t n = table.columns.size();
  arrays_.resize(n);
  for (ArrayLiteral& a : arrays_) a.Clear();
  for (const R* r : chosen) {
    row_.Clear();
    table.Write(*r, row_);
    const auto cells = row_.cells();
    for (size_t i = 0; i < n; ++i) {
      const rows::Cell& c = cells[i];
      if (c.kind == rows::Cell::Kind::kNull) {
        arrays_[i].AddNull();
      } else if (c.kind == rows::Cell::Kind::kInt) {
        arrays_[i].AddInt(c.integer);
      } else if (IsStorableText(c.text)) {
        arrays_[i].AddText(c.text);
      } else {
        arrays_[i].AddText(StorableText(c.text));
      }
    }
  }
  values_.resize(n);
  for (size_t i = 0; i < n; ++i) values_[i] = arrays_[i].Finish().c_str();
  const WriteSql<R>& sql = SqlFor<R>();
  return Send(sql.bulk_name.c_str(), sql.bulk, nullptr, &DescribeRows<R>);
}

Status PgStore::SendGroup(std::span<const WriteBatch* const> batches) {
  Status s;
  if (!(s = SendBulk(batches, &WriteBatch::workflows)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::executions)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::steps)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::attempts)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::events)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::tokens)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::schedules)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::hooks)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::triggers)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::deliveries)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::workers)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::assignments)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::reassignments)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::signals)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::breakers)).ok() ||
      !(s = SendBulk(batches, &WriteBatch::pools)).ok()) {
    return s;
  }
  // Row by row, batch by batch: dead letters the database numbers, and cache entries,
  // whose upserts, uses and deletions must apply in the order they were made.
  for (const WriteBatch* b : batches) {
    if (!(s = SendAll(b->dead_letters)).ok() || !(s = SendAll(b->cache_entries)).ok()) return s;
    for (const CacheTouch& t : b->cache_touches) {
      formatted_.assign({std::to_string(t.last_hit_at), std::to_string(t.hits)});
      values_.assign({t.ns.c_str(), t.key.c_str(), formatted_[0].c_str(), formatted_[1].c_str()});
      if (!(s = Send("touch_cache_entry", kTouchCacheEntry, &t, &DescribeTouch)).ok()) return s;
    }
    for (const CacheKey& k : b->cache_deletes) {
      values_.assign({k.ns.c_str(), k.key.c_str()});
      if (!(s = Send("delete_cache_entry", kDeleteCacheEntry, &k, &DescribeDelete)).ok()) {
        return s;
      }
    }
  }
  return Status::Ok();
}

Status PgStore::Commit(std::span<const WriteBatch* const> batches) {
  bool any = false;
  for (const WriteBatch* b : batches) any = any || !b->empty();
  if (!any) return Status::Ok();
  std::lock_guard lock(write_mu_);
  if (Status s = WriterReady(); !s.ok()) return Context(s, "commit");
  // BEGIN, every row and COMMIT go in one pipeline: one round trip for a small group.
  if (Status s = writer_.BeginPipeline(); !s.ok()) return Context(s, "commit");
  sent_.clear();
  synced_ = 0;
  values_.clear();
  LeaseChanges changes;
  Status s = Send(nullptr, "BEGIN", nullptr, nullptr);
  if (s.ok() && !instance_.empty()) s = SendLeaseCheck(batches, &changes);
  if (s.ok()) s = SendGroup(batches);
  if (s.ok()) {
    CrashPoint("store.before_commit");  // recovery tests: rows sent, not committed
    values_.clear();
    s = Send(nullptr, "COMMIT", nullptr, nullptr);
  }
  if (Status synced = SyncSent(); s.ok()) s = synced;
  writer_.EndPipeline();
  if (!s.ok()) {
    // After a failed statement the transaction can only be rolled back; after a failed
    // COMMIT it is gone already. Either way nothing was applied.
    writer_.Script("ROLLBACK", "commit: rollback");
    if (!instance_.empty()) NoteLostLease(s);
    return Context(s, "commit");
  }
  if (!instance_.empty()) {
    std::lock_guard held(lease_mu_);
    for (auto& [id, fence] : changes.fresh) held_[std::move(id)] = fence;
    for (const std::string& id : changes.done) held_.erase(id);
  }
  return Status::Ok();
}

}  // namespace baton::pg

namespace baton {

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url,
                                                 const PostgresOptions& options) {
  pg::Connection::Options o;
  o.connect_timeout = options.connect_timeout;
  auto writer = pg::Connection::Open(url, o);
  if (!writer.ok()) return writer.status();
  if (Status s = pg::Migrate(*writer); !s.ok()) return s;
  // Released when the writing connection closes: with the store, or with the process.
  // A server killed a moment ago may still hold the lock: its backend ends when it sees
  // the connection closed, which takes a moment under load. Wait that long, no longer.
  const auto give_up = std::chrono::steady_clock::now() + options.owner_lock_wait;
  for (;;) {
    Status s = pg::TakeOwnerLock(*writer, url, options.instance);
    if (s.ok()) break;
    if (!writer->ok() || std::chrono::steady_clock::now() >= give_up) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::vector<pg::Connection> readers;
  for (int i = 0; i < std::clamp(options.readers, 1, 64); ++i) {
    auto reader = pg::Connection::Open(url, o);
    if (!reader.ok()) return reader.status();
    readers.push_back(std::move(reader).value());
  }
  int64_t fence_epoch = 0;
  if (!options.instance.empty()) {
    auto epoch = writer->Exec("SELECT nextval('baton_fence_epochs')", {},
                              "numbering this instance's leases");
    if (!epoch.ok()) return epoch.status();
    fence_epoch = std::stoll(epoch->at(0, 0).value_or("0"));
  }
  return std::unique_ptr<Store>(std::make_unique<pg::PgStore>(
      url, o, std::move(writer).value(), std::move(readers), options.instance,
      std::max(options.lease, Duration(100)), fence_epoch));
}

std::string RedactedPostgresUrl(const std::string& url) {
  return pg::RedactedUrl(url);
}

}  // namespace baton
