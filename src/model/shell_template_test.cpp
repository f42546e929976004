#include "model/shell_template.h"

#include <gtest/gtest.h>

namespace baton::model {
namespace {

TEST(SplitShellTemplates, QuotesEachReferenceForWhereItStands) {
  ShellTemplateSplit s = SplitShellTemplates(
      "echo {{ inputs.a }} \"x{{ inputs.b }}y\" 'p{{ inputs.c }}q' $(cat {{ d }})", 1);
  EXPECT_EQ(s.script, "echo \"${1}\" \"x${2}y\" 'p'\"${3}\"'q' $(cat \"${4}\")");
  EXPECT_EQ(s.args, (std::vector<std::string>{"{{ inputs.a }}", "{{ inputs.b }}", "{{ inputs.c }}",
                                              "{{ d }}"}));
}

TEST(SplitShellTemplates, NumbersAfterTheStepsOwnArgs) {
  ShellTemplateSplit s = SplitShellTemplates("cp {{ a }} {{ b }}", 3);
  EXPECT_EQ(s.script, "cp \"${3}\" \"${4}\"");
}

TEST(SplitShellTemplates, EscapesAndNestingDoNotConfuseTheQuoting) {
  EXPECT_EQ(SplitShellTemplates(R"(echo \' {{ a }})", 1).script, R"(echo \' "${1}")");
  EXPECT_EQ(SplitShellTemplates(R"(echo "\" {{ a }}")", 1).script, R"(echo "\" ${1}")");
  EXPECT_EQ(SplitShellTemplates(R"x(echo "$(echo {{ a }})")x", 1).script,
            R"x(echo "$(echo "${1}")")x");
  EXPECT_EQ(SplitShellTemplates("(cd x) && echo {{ a }}", 1).script, "(cd x) && echo \"${1}\"");
}

TEST(SplitShellTemplates, HereDocumentsExpandWithoutQuotes) {
  ShellTemplateSplit s = SplitShellTemplates("cat <<EOF\nv={{ a }}\nEOF\necho {{ b }}\n", 1);
  EXPECT_EQ(s.script, "cat <<EOF\nv=${1}\nEOF\necho \"${2}\"\n");
  EXPECT_EQ(SplitShellTemplates("cat <<-'END' | wc\n\tv={{ a }}\n\tEND\n", 1).script,
            "cat <<-'END' | wc\n\tv=${1}\n\tEND\n");
}

TEST(SplitShellTemplates, WithoutTemplatesTheScriptIsUnchanged) {
  ShellTemplateSplit s = SplitShellTemplates("echo 'a' \"b\" $(c) <<X\nx\nX\n", 1);
  EXPECT_EQ(s.script, "echo 'a' \"b\" $(c) <<X\nx\nX\n");
  EXPECT_TRUE(s.args.empty());
  EXPECT_EQ(SplitShellTemplates("echo {{ unclosed", 1).script, "echo {{ unclosed");
}

}  // namespace
}  // namespace baton::model
