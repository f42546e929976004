// What PostgreSQL's text accepts, and the repair of what it does not.
#include "store/postgres/pg_text.h"

#include <gtest/gtest.h>

#include <string>

namespace baton::pg {
namespace {

using namespace std::string_literals;

TEST(PgText, ValidUtf8IsStoredAsItIs) {
  for (const std::string& s : {""s, "plain"s, "déploiement 🚀 модель 模型"s, "\x7f"s}) {
    EXPECT_TRUE(IsStorableText(s)) << s;
    EXPECT_EQ(StorableText(s), s);
  }
}

TEST(PgText, NulAndInvalidSequencesAreReplaced) {
  const std::string replacement = "\xEF\xBF\xBD";
  const struct {
    std::string in, out;
  } cases[] = {
      {"a\0b"s, "a" + replacement + "b"},
      {"\xff"s, replacement},
      {"\xC0\xAF"s, replacement + replacement},                                      // overlong '/'
      {"\xED\xA0\x80"s, replacement + replacement + replacement},                    // a surrogate
      {"\xF4\x90\x80\x80"s, replacement + replacement + replacement + replacement},  // > U+10FFFF
      {"ok\xE2\x82"s, "ok" + replacement + replacement},                             // cut short
      {"\xE2\x82\xAC"s, "\xE2\x82\xAC"s},  // the euro sign stays
  };
  for (const auto& c : cases) {
    EXPECT_EQ(IsStorableText(c.in), c.in == c.out) << c.in;
    EXPECT_EQ(StorableText(c.in), c.out) << c.in;
  }
}

}  // namespace
}  // namespace baton::pg
