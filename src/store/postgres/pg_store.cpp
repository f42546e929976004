// PgStore: opening the store, and committing batches (all of them in one transaction).
#include "store/postgres/pg_store.h"

#include <baton/postgres_store.h>

#include "common/crash_point.h"
#include "store/postgres/pg_migrations.h"
#include "store/postgres/pg_text.h"

#include <charconv>
#include <string>
#include <vector>

namespace baton::pg {

namespace {

// The statements that write a record kind, built from its description once.
template <class R>
struct WriteSql {
  std::string upsert;    // every column; a key already stored is updated
  std::string numbered;  // a numbered table's row without its number: the database assigns it
};

template <class R>
const WriteSql<R>& SqlFor() {
  static const WriteSql<R> sql = [] {
    const rows::Table<R>& t = rows::TableOf<R>();
    WriteSql<R> w;
    w.upsert = rows::UpsertSql(t, '$');
    if (t.numbered) w.numbered = rows::InsertSql(t, '$', 1);
    return w;
  }();
  return sql;
}

}  // namespace

bool RowOfRows::Int(int col, int64_t* out) const {
  const auto& v = rows_.at(row_, static_cast<size_t>(col));
  if (!v) return false;
  const char* end = v->data() + v->size();
  auto [p, ec] = std::from_chars(v->data(), end, *out);
  return ec == std::errc() && p == end;
}

template <class R>
Status PgStore::WriteAll(const std::vector<R>& records) {
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
    auto done = writer_.ExecBound(unnumbered ? sql.numbered : sql.upsert,
                                  std::span<const char* const>(values_), "PostgreSQL");
    if (!done.ok()) return Context(done.status(), "writing " + table.describe(r));
  }
  return Status::Ok();
}

Status PgStore::WriteBatchRows(const WriteBatch& b) {
  Status s;
  if (!(s = WriteAll(b.workflows)).ok() || !(s = WriteAll(b.executions)).ok() ||
      !(s = WriteAll(b.steps)).ok() || !(s = WriteAll(b.attempts)).ok() ||
      !(s = WriteAll(b.events)).ok() || !(s = WriteAll(b.dead_letters)).ok() ||
      !(s = WriteAll(b.tokens)).ok() || !(s = WriteAll(b.schedules)).ok() ||
      !(s = WriteAll(b.hooks)).ok() || !(s = WriteAll(b.triggers)).ok() ||
      !(s = WriteAll(b.deliveries)).ok() || !(s = WriteAll(b.workers)).ok() ||
      !(s = WriteAll(b.assignments)).ok() || !(s = WriteAll(b.reassignments)).ok() ||
      !(s = WriteAll(b.signals)).ok() || !(s = WriteAll(b.breakers)).ok() ||
      !(s = WriteAll(b.cache_entries)).ok()) {
    return s;
  }
  for (const CacheTouch& t : b.cache_touches) {
    auto done = writer_.Exec(
        "UPDATE cache_entries SET last_hit_at = $3, hits = $4 WHERE ns = $1 AND key = $2",
        {t.ns, t.key, std::to_string(t.last_hit_at), std::to_string(t.hits)},
        "updating cache entry " + t.key + " of namespace " + t.ns);
    if (!done.ok()) return done.status();
  }
  for (const CacheKey& k : b.cache_deletes) {
    auto done = writer_.Exec("DELETE FROM cache_entries WHERE ns = $1 AND key = $2", {k.ns, k.key},
                             "deleting cache entry " + k.key + " of namespace " + k.ns);
    if (!done.ok()) return done.status();
  }
  return WriteAll(b.pools);
}

Status PgStore::Commit(std::span<const WriteBatch* const> batches) {
  bool any = false;
  for (const WriteBatch* b : batches) any = any || !b->empty();
  if (!any) return Status::Ok();
  std::lock_guard lock(write_mu_);
  if (Status s = writer_.Script("BEGIN", "commit: begin"); !s.ok()) return s;
  Status s;
  for (const WriteBatch* b : batches) {
    if (!(s = WriteBatchRows(*b)).ok()) break;
  }
  if (s.ok()) {
    CrashPoint("store.before_commit");  // recovery tests: rows written, not committed
    s = writer_.Script("COMMIT", "commit");
  }
  if (!s.ok()) {
    // After a failed statement the transaction can only be rolled back; after a failed
    // COMMIT it is gone already. Either way nothing was applied.
    writer_.Script("ROLLBACK", "commit: rollback");
    return Context(s, "commit");
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
  auto owned = writer->Exec(pg::kTakeOwnerLock, {}, "taking the database's owner lock");
  if (!owned.ok()) return owned.status();
  if (owned->size() != 1 || owned->at(0, 0) != "t") {
    return Status(errc::kStore, "PostgreSQL database " + pg::RedactedUrl(url) +
                                    " is in use by another baton server; one server per "
                                    "database is supported so far");
  }
  auto reader = pg::Connection::Open(url, o);
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<Store>(
      std::make_unique<pg::PgStore>(std::move(writer).value(), std::move(reader).value()));
}

std::string RedactedPostgresUrl(const std::string& url) {
  return pg::RedactedUrl(url);
}

}  // namespace baton
