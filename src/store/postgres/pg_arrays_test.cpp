// Array literals as PostgreSQL reads them: quoting, escapes, NULL and the empty text.
#include "store/postgres/pg_arrays.h"

#include <gtest/gtest.h>

namespace baton::pg {
namespace {

TEST(PgArrays, ElementsAreQuotedEscapedAndSeparated) {
  ArrayLiteral a;
  EXPECT_EQ(a.Finish(), "{}");
  a.Clear();
  a.AddText("plain");
  a.AddText("");
  a.AddNull();
  a.AddText("NULL");  // the text, not a NULL: quoted
  a.AddText(R"(say "hi" \ bye)");
  a.AddText("{,}");
  EXPECT_EQ(a.Finish(), R"({"plain","",NULL,"NULL","say \"hi\" \\ bye","{,}"})");
  a.Clear();
  a.AddInt(-42);
  a.AddInt(9007199254740993);
  a.AddNull();
  EXPECT_EQ(a.Finish(), "{-42,9007199254740993,NULL}");
}

}  // namespace
}  // namespace baton::pg
