#include "store/sqlite/event_rows.h"

#include "common/json_text.h"
#include "store/sqlite/rows.h"

#include <limits>
#include <string>
#include <string_view>

namespace baton::sqlite {
namespace {

constexpr int kSpanColumn = 8;
constexpr int kEarlierColumn = 9;

std::string InsertEventRowSql() {
  std::string sql = rows::InsertSql(rows::TableOf<EventRecord>(), '?');
  // "INSERT INTO events (<8 columns>) VALUES (?1, ..., ?8)": add the row's two columns.
  sql.insert(sql.find(") VALUES"), ", span, earlier");
  sql.insert(sql.size() - 1, ", ?9, ?10");
  return sql;
}

std::string SelectEventRowsSql() {
  std::string sql = rows::SelectFrom(rows::TableOf<EventRecord>());
  sql.insert(sql.find(" FROM "), ", span, earlier");
  return sql;
}

// Whether `next` continues the run that ends with `last`.
bool FollowsOn(const EventRecord& last, const EventRecord& next) {
  if (next.execution_id != last.execution_id || next.seq != last.seq + 1) return false;
  return last.position == 0 ? next.position == 0 : next.position == last.position + 1;
}

// Appends one entry of `earlier`, [type, step_id, attempt, time, data], as text: a DOM
// for it cost more than the SQLite work the row saves.
void AppendEntry(std::string& out, const EventRecord& e) {
  out += '[';
  AppendJsonString(out, e.type);
  out += ',';
  AppendJsonString(out, e.step_id);
  out += ',';
  out += std::to_string(e.attempt);
  out += ',';
  out += std::to_string(e.time);
  out += ',';
  if (e.data.is_null()) {
    out += "null";
  } else {
    AppendJsonValue(out, e.data);
  }
  out += ']';
}

std::string Describe(const EventRecord& last, int64_t span) {
  return span > 1 ? "events seq " + std::to_string(last.seq - span + 1) + ".." +
                        std::to_string(last.seq) + " of execution " + last.execution_id
                  : rows::TableOf<EventRecord>().describe(last);
}

Status WriteRow(Stmt& insert, Stmt& find, const EventRecord& last, int64_t span,
                const std::string& earlier) {
  find.Bind(1, last.execution_id);
  find.Bind(2, last.seq - span + 1);
  const int rc = find.Step();
  const bool taken = rc == SQLITE_ROW && find.Int(0) <= last.seq;
  find.Reset();
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    return Status(errc::kStore, "checking " + Describe(last, span) + ": " + sqlite3_errstr(rc));
  }
  if (taken) {
    return Status(errc::kStore, "writing " + Describe(last, span) +
                                    ": an event with one of these seqs is stored already");
  }
  const rows::Table<EventRecord>& table = rows::TableOf<EventRecord>();
  thread_local rows::RowOut row;  // reused: its buffers stay allocated
  row.Clear();
  table.Write(last, row);
  row.Int(span);
  if (span > 1) {
    row.Text(earlier);  // outlives the run
  } else {
    row.Null();
  }
  Status s = Run(insert, row);
  return s.ok() ? s : Context(s, "writing " + Describe(last, span));
}

bool ReadEarlier(std::string_view text, const EventRecord& last, int64_t span,
                 std::vector<EventRecord>* out, int64_t after_seq, int64_t after_position) {
  Json entries = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!entries.is_array() || static_cast<int64_t>(entries.size()) != span - 1) return false;
  for (int64_t i = 0; i < span - 1; ++i) {
    Json& entry = entries[static_cast<size_t>(i)];
    if (!entry.is_array() || entry.size() != 5 || !entry[0].is_string() || !entry[1].is_string() ||
        !entry[2].is_number_integer() || !entry[3].is_number_integer()) {
      return false;
    }
    const int64_t back = span - 1 - i;
    EventRecord e;
    e.seq = last.seq - back;
    e.position = last.position == 0 ? 0 : last.position - back;
    if (e.seq <= after_seq || (after_position > 0 && e.position <= after_position)) continue;
    e.execution_id = last.execution_id;
    e.type = entry[0].get<std::string>();
    e.step_id = entry[1].get<std::string>();
    const int64_t attempt = entry[2].get<int64_t>();
    if (attempt < 0 || attempt > std::numeric_limits<int>::max()) return false;
    e.attempt = static_cast<int>(attempt);
    e.time = entry[3].get<int64_t>();
    e.data = std::move(entry[4]);
    out->push_back(std::move(e));
  }
  return true;
}

}  // namespace

const std::string kInsertEventRow = InsertEventRowSql();
const std::string kFirstSeqOfEventRowFrom =
    "SELECT seq - span + 1 FROM events WHERE execution_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT 1";
const std::string kSelectEventRows = SelectEventRowsSql();

Status WriteEvents(Stmt& insert, Stmt& find, std::span<const EventRecord> events) {
  std::string earlier;
  for (size_t first = 0; first < events.size();) {
    // The run events[first..last]; `earlier` holds all of it but its last event.
    size_t last = first;
    earlier.clear();
    while (last + 1 < events.size() && last - first + 1 < kMaxEventsPerRow &&
           FollowsOn(events[last], events[last + 1])) {
      const size_t before = earlier.size();
      earlier += earlier.empty() ? '[' : ',';
      AppendEntry(earlier, events[last]);
      if (earlier.size() + 1 > kMaxEarlierBytes) {  // with the closing ']'
        earlier.resize(before);
        break;
      }
      ++last;
    }
    if (!earlier.empty()) earlier += ']';
    const auto span = static_cast<int64_t>(last - first + 1);
    if (Status s = WriteRow(insert, find, events[last], span, earlier); !s.ok()) return s;
    first = last + 1;
  }
  return Status::Ok();
}

bool ReadEventRow(const Stmt& q, int64_t after_seq, int64_t after_position,
                  std::vector<EventRecord>* out) {
  EventRecord last;
  if (!Read(q, &last)) return false;
  const int64_t span = q.Int(kSpanColumn);
  if (span < 1 || span > last.seq) return false;
  if (span > 1 &&
      !ReadEarlier(q.TextView(kEarlierColumn), last, span, out, after_seq, after_position)) {
    return false;
  }
  if (last.seq > after_seq && (after_position <= 0 || last.position > after_position)) {
    out->push_back(std::move(last));
  }
  return true;
}

}  // namespace baton::sqlite
