#include "runners/shell_result.h"

#include <gtest/gtest.h>
#include <signal.h>

namespace baton::runners {
namespace {

ProcessOutcome Exited(int code, std::string out = "", std::string err = "") {
  ProcessOutcome o;
  o.reaped = true;
  o.wait_status = code << 8;  // as W_EXITCODE(code, 0)
  o.stdout_total = out.size();
  o.stderr_total = err.size();
  o.stdout_data = std::move(out);
  o.stderr_data = std::move(err);
  return o;
}

TEST(ParseStdout, JsonOrTrimmedText) {
  EXPECT_EQ(ParseStdout(""), "");
  EXPECT_EQ(ParseStdout(" \n\t"), "");
  EXPECT_EQ(ParseStdout("42\n"), 42);
  EXPECT_EQ(ParseStdout("null"), Json(nullptr));
  EXPECT_EQ(ParseStdout(" [1, {\"a\": 2}] \n"), (Json{1, {{"a", 2}}}));
  EXPECT_EQ(ParseStdout("\"s\"\n"), "s");
  EXPECT_EQ(ParseStdout("  hello world\n"), "hello world");
  EXPECT_EQ(ParseStdout("1 2"), "1 2");
  EXPECT_EQ(ParseStdout("{\"a\": 1} trailing"), "{\"a\": 1} trailing");
  EXPECT_EQ(ParseStdout("\"bad \xff\""), "\"bad \xEF\xBF\xBD\"");
}

TEST(SanitizeUtf8, ReplacesOnlyInvalidSequences) {
  EXPECT_EQ(SanitizeUtf8("plain"), "plain");
  EXPECT_EQ(SanitizeUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80");
  EXPECT_EQ(SanitizeUtf8("a\xC3"), "a\xEF\xBF\xBD");  // cut in the middle
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong
  EXPECT_EQ(SanitizeUtf8(std::string("\0x", 2)), std::string("\0x", 2));
}

TEST(BuildShellResult, Success) {
  RunResult r = BuildShellResult(Exited(0, "{\"k\": 1}\n", "note\n"), 0, 100);
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.output, (Json{{"k", 1}}));
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stderr_text, "note\n");
  EXPECT_TRUE(r.error_details.is_null());
  EXPECT_EQ(r.error_details.dump(), "null");
}

TEST(BuildShellResult, NonZeroExitNamesTheLastStderrLine) {
  RunResult r = BuildShellResult(Exited(2, "out", "one\ntwo  \n\n  \n"), 0, 100);
  EXPECT_EQ(r.status.code(), errc::kExitNonzero);
  EXPECT_EQ(r.status.message(), "exited with code 2: two");
  EXPECT_EQ(r.output, "out");

  std::string long_line(1000, 'z');
  r = BuildShellResult(Exited(1, "", long_line), 0, 10000);
  EXPECT_EQ(r.status.message(), "exited with code 1: " + std::string(300, 'z') + "...");
}

TEST(BuildShellResult, TruncationIsNoted) {
  ProcessOutcome o = Exited(0, "12345", "ab");
  o.stdout_total = 9000;
  o.stderr_total = 7000;
  RunResult r = BuildShellResult(o, 0, 5);
  EXPECT_TRUE(r.status.ok());
  EXPECT_EQ(r.output, 12345);
  EXPECT_EQ(r.stderr_text,
            "ab\n[baton: stdout truncated at 5 bytes]\n[baton: stderr truncated at 5 bytes]");
  EXPECT_EQ(r.error_details,
            (Json{{"output_truncated", {{"stdout", 9000}, {"stderr", 7000}, {"max_output", 5}}}}));
}

TEST(BuildShellResult, SignalsCancelAndSpawnErrors) {
  ProcessOutcome o;
  o.reaped = true;
  o.wait_status = SIGXCPU;  // as W_EXITCODE(0, SIGXCPU)
  RunResult r = BuildShellResult(o, 3, 100);
  EXPECT_EQ(r.status.message(), "killed by signal SIGXCPU (cpu_time limit of 3s)");
  EXPECT_EQ(r.exit_code, 128 + SIGXCPU);
  EXPECT_EQ(r.error_details["signal"], "SIGXCPU");

  o.wait_status = SIGTERM;
  o.cancelled = true;
  r = BuildShellResult(o, 0, 100);
  EXPECT_EQ(r.status.code(), errc::kCancelled);
  EXPECT_EQ(r.status.message(), "cancelled");
  EXPECT_TRUE(r.output.is_null());

  ProcessOutcome failed;
  failed.spawn_error = Status(errc::kSpawn, "cannot start `x`: No such file or directory");
  r = BuildShellResult(failed, 0, 100);
  EXPECT_EQ(r.status.code(), errc::kSpawn);
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_TRUE(r.output.is_null());
}

}  // namespace
}  // namespace baton::runners
