// One description per stored record: its table, its columns in order, which of them form
// the key, and how each column is written from and read into the record. A SQL backend
// binds and reads rows through it instead of positional code of its own, and builds its
// upsert and select statements from it, so a new field is one line here.
//
// Values cross the boundary as Cells (NULL, an integer, or text); the text of a written
// cell points into the record or into the RowOut's scratch, so the record and the RowOut
// must outlive the binding. Threading: descriptions are immutable once built (statics);
// everything else is used by one thread.
#pragma once

#include <baton/json.h>

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace baton::rows {

// A list of strings as JSON array text, invalid UTF-8 replaced.
std::string StringsJson(const std::vector<std::string>& strings);

struct Cell {
  enum class Kind : uint8_t { kNull, kInt, kText };
  Kind kind = Kind::kNull;
  int64_t integer = 0;
  std::string_view text;
};

// A row being written, one cell per column in the table's order.
class RowOut {
 public:
  void Null() { cells_.push_back({}); }
  void Int(int64_t v) { cells_.push_back({Cell::Kind::kInt, v, {}}); }
  // Text that outlives this RowOut (a field of the record).
  void Text(std::string_view v) { cells_.push_back({Cell::Kind::kText, 0, v}); }
  // Text made for the row (JSON): kept here.
  void OwnedText(std::string v) {
    scratch_.push_back(std::move(v));
    Text(scratch_.back());
  }
  // JSON null is NULL; anything else its compact text, invalid UTF-8 replaced.
  void JsonValue(const Json& j) {
    if (j.is_null()) return Null();
    OwnedText(j.dump(-1, ' ', false, Json::error_handler_t::replace));
  }
  void Clear() {
    cells_.clear();
    scratch_.clear();
  }
  std::span<const Cell> cells() const { return cells_; }

 private:
  std::vector<Cell> cells_;
  std::deque<std::string> scratch_;  // a deque: growing it never moves what cells point at
};

// A row being read: the backend's current row, column by column in the table's order.
class RowIn {
 public:
  virtual ~RowIn() = default;
  virtual bool IsNull(int col) const = 0;
  // False when the stored value is not an integer.
  virtual bool Int(int col, int64_t* out) const = 0;
  virtual std::string_view Text(int col) const = 0;  // empty for NULL

  // The column's JSON (NULL is JSON null); false when it is not JSON.
  bool JsonAt(int col, Json* out) const;
  // A JSON array of strings; false when it is anything else.
  bool StringsAt(int col, std::vector<std::string>* out) const;
};

template <class R>
struct Column {
  const char* name;
  void (*put)(const R&, RowOut&);
  // False when the stored value is invalid for the field (an unknown status name, text
  // that is not JSON, a number out of range).
  bool (*get)(const RowIn&, int col, R*);
  bool key = false;
  // What the record is filed under (an indexed column that a state change leaves alone):
  // NarrowUpsertSql (record_tables.h) updates only the other columns.
  bool filed = false;
  // The column holds integers (BIGINT); every other column holds text.
  bool integer = false;
};

// `c`, marked as what its record is filed under.
template <class R>
Column<R> Filed(Column<R> c) {
  c.filed = true;
  return c;
}

template <class R>
struct Table {
  const char* name;
  std::vector<Column<R>> columns;
  // The record named in an error ("execution e-1", "step e-1/build").
  std::string (*describe)(const R&);
  // Rows are only ever inserted: a second row with the same key is an error.
  bool insert_only = false;
  // The first column is a number the database assigns when the record leaves it 0 (NULL).
  bool numbered = false;

  void Write(const R& r, RowOut& out) const {
    for (const Column<R>& c : columns) c.put(r, out);
  }
  bool Read(const RowIn& in, R* r) const {
    for (size_t i = 0; i < columns.size(); ++i) {
      if (!columns[i].get(in, static_cast<int>(i), r)) return false;
    }
    return true;
  }
};

// Column makers for the usual field types: Text<&R::field>("column"), and so on. A field
// of a base class of the record names the record after it: Int<&Base::field, R>(...).
namespace detail {
template <class M>
struct MemberOf;
template <class R, class T>
struct MemberOf<T R::*> {
  using Record = R;
  using Type = T;
};
}  // namespace detail

template <auto M>
using RecordOf = typename detail::MemberOf<decltype(M)>::Record;

template <auto M, class R = RecordOf<M>>
Column<R> Text(const char* name, bool key = false) {
  return {name, [](const R& r, RowOut& o) { o.Text(r.*M); },
          [](const RowIn& in, int col, R* r) {
            r->*M = std::string(in.Text(col));
            return true;
          },
          key};
}

template <auto M, class R = RecordOf<M>>
Column<R> Int(const char* name, bool key = false) {
  using T = typename detail::MemberOf<decltype(M)>::Type;
  return {name,
          [](const R& r, RowOut& o) { o.Int(static_cast<int64_t>(r.*M)); },
          [](const RowIn& in, int col, R* r) {
            int64_t v = 0;
            if (!in.Int(col, &v)) return false;
            if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
                v > static_cast<int64_t>(std::numeric_limits<T>::max())) {
              return false;
            }
            r->*M = static_cast<T>(v);
            return true;
          },
          key,
          /*filed=*/false,
          /*integer=*/true};
}

template <auto M, class R = RecordOf<M>>
Column<R> JsonText(const char* name) {
  return {name, [](const R& r, RowOut& o) { o.JsonValue(r.*M); },
          [](const RowIn& in, int col, R* r) { return in.JsonAt(col, &(r->*M)); }};
}

template <auto M, class R = RecordOf<M>>
Column<R> Strings(const char* name) {
  return {name, [](const R& r, RowOut& o) { o.OwnedText(StringsJson(r.*M)); },
          [](const RowIn& in, int col, R* r) { return in.StringsAt(col, &(r->*M)); }};
}

// A status stored by its name: ToString(status) writes it, Parse reads it back.
template <auto M, auto Parse, class R = RecordOf<M>>
Column<R> Enum(const char* name) {
  return {name, [](const R& r, RowOut& o) { o.Text(ToString(r.*M)); },
          [](const RowIn& in, int col, R* r) {
            auto v = Parse(in.Text(col));
            if (!v) return false;
            r->*M = *v;
            return true;
          }};
}

}  // namespace baton::rows
