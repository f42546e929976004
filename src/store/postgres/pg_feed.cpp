// PgStore's shared feed (SharedFeed): events in the order of the transactions that wrote
// them, numbered by the database (pg_schema_instances.h says how and why).
#include "store/postgres/pg_schema_instances.h"
#include "store/postgres/pg_store.h"

#include <string>
#include <vector>

namespace baton::pg {

namespace {

// An event's feed position, computed from its row.
constexpr const char* kFeedPosition = "((events.feed_xid::text::bigint << 22) | events.feed_ord)";
static_assert(kFeedOrdinalBits == 22, "kFeedPosition shifts by kFeedOrdinalBits");

// The oldest transaction still running when the statement began: every one before it
// has ended, so no event can appear later below the rows it bounds.
constexpr const char* kHorizon = "pg_snapshot_xmin(pg_current_snapshot())";

// The description's SELECT of events, each column named by its table (the feed joins
// executions) and `position` computed instead of read.
const std::string& FeedEventSelect() {
  static const std::string select = [] {
    const rows::Table<EventRecord>& t = rows::TableOf<EventRecord>();
    std::string sql = "SELECT ";
    for (size_t i = 0; i < t.columns.size(); ++i) {
      if (i != 0) sql += ", ";
      const std::string name = t.columns[i].name;
      sql += name == "position" ? std::string(kFeedPosition) : "events." + name;
    }
    return sql;
  }();
  return select;
}

}  // namespace

std::string FeedAfterSql(int64_t after, Params& p) {
  const std::string xid = p.Add(after >> kFeedOrdinalBits);
  const std::string ord = p.Add(after & kFeedOrdinalMask);
  return "(events.feed_xid, events.feed_ord) > (" + xid + "::text::xid8, " + ord +
         "::bigint) AND events.feed_xid < " + kHorizon;
}

Result<std::vector<EventRecord>> PgStore::QueryEvents(const std::string& tail, const Params& p) {
  static const std::string plain = rows::SelectFrom(rows::TableOf<EventRecord>());
  static const std::string shared = FeedEventSelect() + " FROM events";
  return QueryWith<EventRecord>(instance_.empty() ? plain : shared, tail, p);
}

Result<std::vector<FeedEntry>> PgStore::FeedAfter(int64_t after, size_t limit) {
  static const std::string select = FeedEventSelect() +
                                    ", x.ns, x.workflow FROM events JOIN executions x ON x.id = "
                                    "events.execution_id";
  Params p;
  const std::string tail = " WHERE " + FeedAfterSql(std::max<int64_t>(after, 0), p) +
                           " ORDER BY events.feed_xid, events.feed_ord LIMIT " +
                           std::to_string(std::max<size_t>(limit, 1));
  Rows answer;
  auto events = QueryWith<EventRecord>(select, tail, p, &answer);
  if (!events.ok()) return events.status();
  const size_t ns_col = rows::TableOf<EventRecord>().columns.size();
  std::vector<FeedEntry> out;
  out.reserve(events->size());
  for (size_t i = 0; i < events->size(); ++i) {
    out.push_back({std::move((*events)[i]), answer.at(i, ns_col).value_or(""),
                   answer.at(i, ns_col + 1).value_or("")});
  }
  return out;
}

Result<int64_t> PgStore::FeedEnd() {
  static const std::string sql = std::string("SELECT ") + kFeedPosition +
                                 " FROM events WHERE events.feed_xid < " + kHorizon +
                                 " ORDER BY events.feed_xid DESC, events.feed_ord DESC LIMIT 1";
  auto answer = Read(sql, {}, "reading the end of the shared feed");
  if (!answer.ok()) return answer.status();
  if (answer->size() == 0) return int64_t{0};
  int64_t end = 0;
  if (!RowOfRows(*answer, 0).Int(0, &end)) {
    return Status(errc::kStore, "reading the end of the shared feed: no number");
  }
  return end;
}

}  // namespace baton::pg
