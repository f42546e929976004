#include "store/sqlite/event_rows.h"

#include "common/json_text.h"
#include "store/sqlite/rows.h"

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>

namespace baton::sqlite {
namespace {

constexpr int kSpanColumn = 8;
constexpr int kEarlierColumn = 9;
// More events in one row than any build writes: a corrupt row.
constexpr int64_t kMaxSpanRead = 1 << 20;

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

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Plain ASCII: JSON text carries it byte for byte. (Invalid UTF-8 would come back
// replaced, where the row's own columns keep the bytes.)
bool Ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

// Whether `next` continues the run that ends with `last` (which then goes into
// `earlier`). Positions are 0 throughout a run or positive and contiguous.
bool FollowsOn(const EventRecord& last, const EventRecord& next) {
  if (next.execution_id != last.execution_id || last.seq == kMax || next.seq != last.seq + 1) {
    return false;
  }
  if (!Ascii(last.type) || !Ascii(last.step_id)) return false;
  if (last.position == 0) return next.position == 0;
  return last.position > 0 && last.position < kMax && next.position == last.position + 1;
}

// An integer of `j` within [lo, hi] (nlohmann reads non-negative numbers as unsigned).
bool IntIn(const Json& j, int64_t lo, int64_t hi, int64_t* out) {
  if (j.is_number_unsigned()) {
    const auto u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) return false;
    *out = static_cast<int64_t>(u);
    return *out >= lo;
  }
  if (!j.is_number_integer()) return false;
  *out = j.get<int64_t>();
  return *out >= lo && *out <= hi;
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
    int64_t attempt = 0, time = 0;
    if (!entry.is_array() || entry.size() != 5 || !entry[0].is_string() || !entry[1].is_string() ||
        !IntIn(entry[2], std::numeric_limits<int>::min(), std::numeric_limits<int>::max(),
               &attempt) ||
        !IntIn(entry[3], std::numeric_limits<int64_t>::min(), kMax, &time)) {
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
    e.attempt = static_cast<int>(attempt);
    e.time = time;
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
  if (span < 1 || span > kMaxSpanRead) return false;
  if (span > 1) {
    // A run's seqs and positions (0, or positive and contiguous) stay in range.
    if (last.seq < std::numeric_limits<int64_t>::min() + span || last.position < 0 ||
        (last.position > 0 && last.position - (span - 1) < 1)) {
      return false;
    }
  }
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
