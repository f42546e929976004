#include "expr/path.h"

#include "expr/expr_test_util.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace baton::expr {
namespace {

using ::testing::HasSubstr;
using testing_util::SampleRoot;
using testing_util::SampleScope;

Path MustParse(std::string_view text) {
  Result<Path> p = ParsePath(text);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return p.ok() ? p.value() : Path{};
}

TEST(ParsePath, DottedNames) {
  Path p = MustParse("steps.download.output");
  ASSERT_EQ(p.segments.size(), 3u);
  EXPECT_EQ(p.root(), "steps");
  EXPECT_EQ(p.segments[1].key, "download");
  EXPECT_EQ(p.segments[2].key, "output");
  EXPECT_EQ(p.text, "steps.download.output");
}

TEST(ParsePath, ArrayIndexes) {
  Path p = MustParse("a.files[0].name");
  ASSERT_EQ(p.segments.size(), 4u);
  EXPECT_TRUE(p.segments[2].key.empty());
  EXPECT_EQ(p.segments[2].index, 0);
  EXPECT_EQ(p.segments[3].key, "name");

  Path m = MustParse("m[1][12]");
  ASSERT_EQ(m.segments.size(), 3u);
  EXPECT_EQ(m.segments[1].index, 1);
  EXPECT_EQ(m.segments[2].index, 12);
}

TEST(ParsePath, NamesWithHyphensUnderscoresAndLeadingDigits) {
  EXPECT_EQ(MustParse("steps.my-step.output").segments[1].key, "my-step");
  EXPECT_EQ(MustParse("_x.y_z").root(), "_x");
  // Step ids may start with a digit; only the root may not.
  EXPECT_EQ(MustParse("steps.1st.output").segments[1].key, "1st");
}

TEST(ParsePath, RejectsMalformedPathsNamingThem) {
  for (const char* bad : {"", "a.", ".a", "1a", "a..b", "a[", "a[]", "a[-1]", "a[x]", "a[0", "a b",
                          "a.b]", "a[99999999999]", "a.[0]", "-a"}) {
    Result<Path> p = ParsePath(bad);
    ASSERT_FALSE(p.ok()) << bad;
    EXPECT_EQ(p.status().code(), errc::kValidation) << bad;
    EXPECT_THAT(p.status().message(), HasSubstr("invalid path '" + std::string(bad) + "'"));
  }
  EXPECT_THAT(ParsePath("a.").status().message(), HasSubstr("expected a name after '.'"));
  EXPECT_THAT(ParsePath("a[x]").status().message(), HasSubstr("non-negative integer index"));
}

TEST(Walk, FollowsKeysAndIndexes) {
  const Json& root = SampleRoot();
  const Json* v = Walk(root, MustParse("steps.a.output.items[1].name"));
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, "second");
  // Points into the tree rather than copying.
  EXPECT_EQ(v, &root["steps"]["a"]["output"]["items"][1]["name"]);

  const Json* cell = Walk(root, MustParse("steps.a.output.matrix[1][0]"));
  ASSERT_NE(cell, nullptr);
  EXPECT_EQ(*cell, 3);
}

TEST(Walk, ReturnsNullWhenMissingOrWrongKind) {
  const Json& root = SampleRoot();
  EXPECT_EQ(Walk(root, MustParse("steps.zzz.output")), nullptr);       // missing key
  EXPECT_EQ(Walk(root, MustParse("inputs.tags[2]")), nullptr);         // index out of range
  EXPECT_EQ(Walk(root, MustParse("inputs.meta[0]")), nullptr);         // index into object
  EXPECT_EQ(Walk(root, MustParse("inputs.tags.first")), nullptr);      // key into array
  EXPECT_EQ(Walk(root, MustParse("inputs.count.value")), nullptr);     // key into number
  EXPECT_EQ(Walk(root, MustParse("inputs.name[0]")), nullptr);         // index into string
  EXPECT_EQ(Walk(root, MustParse("inputs.nothing.deeper")), nullptr);  // through null
}

TEST(Walk, NullValueIsFoundNotMissing) {
  const Json* v = Walk(SampleRoot(), MustParse("inputs.nothing"));
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->is_null());
}

TEST(Walk, StartsFromGivenSegment) {
  const Json& output = SampleRoot()["steps"]["a"]["output"];
  const Json* v = Walk(output, MustParse("steps.a.output.x"), 3);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, 3);
  // Starting past the end yields the node itself.
  EXPECT_EQ(Walk(output, MustParse("a"), 1), &output);
}

TEST(JsonScope, FindsFromRootObject) {
  const Json* v = SampleScope().Find(MustParse("execution.id"));
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(*v, "ex-1");
  EXPECT_EQ(SampleScope().Find(MustParse("vars.x")), nullptr);
}

}  // namespace
}  // namespace baton::expr
