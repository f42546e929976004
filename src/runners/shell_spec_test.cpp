#include "runners/shell_spec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace baton::runners {
namespace {

TEST(ShellSpec, ArrayRunIsArgvWithScalarsAsText) {
  Result<ShellSpec> s = ParseShellSpec({{"run", {"echo", 3, 2.5, true, nullptr, {{"k", 1}}}}}, 99);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->process.argv,
            (std::vector<std::string>{"echo", "3", "2.5", "true", "null", "{\"k\":1}"}));
  EXPECT_EQ(s->max_output, 99u);
  EXPECT_FALSE(s->process.env.has_value());
  EXPECT_FALSE(s->process.stdin_data.has_value());
  EXPECT_EQ(s->process.memory_limit, 0u);
  EXPECT_EQ(s->process.cpu_seconds, 0u);
}

TEST(ShellSpec, StringRunUsesTheShell) {
  Result<ShellSpec> s = ParseShellSpec({{"run", "echo $HOME | wc"}}, 1);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->process.argv, (std::vector<std::string>{"/bin/sh", "-c", "echo $HOME | wc"}));
}

TEST(ShellSpec, EnvMergesWithTheInheritedEnvironment) {
  setenv("BATON_SPEC_KEEP", "kept", 1);
  setenv("BATON_SPEC_DROP", "dropped", 1);
  setenv("BATON_SPEC_OVER", "old", 1);
  Result<ShellSpec> s = ParseShellSpec(
      {{"run", {"env"}},
       {"env", {{"BATON_SPEC_DROP", nullptr}, {"BATON_SPEC_OVER", "new"}, {"BATON_N", 7}}}},
      1);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const auto& env = *s->process.env;
  auto has = [&](const std::string& kv) { return std::count(env.begin(), env.end(), kv); };
  EXPECT_EQ(has("BATON_SPEC_KEEP=kept"), 1);
  EXPECT_EQ(has("BATON_SPEC_OVER=new"), 1);
  EXPECT_EQ(has("BATON_SPEC_OVER=old"), 0);
  EXPECT_EQ(has("BATON_N=7"), 1);
  for (const std::string& kv : env) EXPECT_FALSE(kv.starts_with("BATON_SPEC_DROP="));
}

TEST(ShellSpec, OtherFields) {
  Result<ShellSpec> s = ParseShellSpec({{"run", {"cat"}},
                                        {"cwd", "/tmp"},
                                        {"stdin", "text"},
                                        {"max_output", "64k"},
                                        {"memory", 1000000},
                                        {"cpu_time", "1m30s"}},
                                       1);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->process.cwd, "/tmp");
  EXPECT_EQ(s->process.stdin_data, "text");
  EXPECT_EQ(s->max_output, 65536u);
  EXPECT_EQ(s->process.memory_limit, 1000000u);
  EXPECT_EQ(s->process.cpu_seconds, 90u);

  s = ParseShellSpec({{"run", {"cat"}}, {"stdin", {{"a", 1}}}, {"max_output", 0}}, 1);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->process.stdin_data, "{\"a\":1}");
  EXPECT_EQ(s->max_output, 0u);
}

TEST(ShellSpec, ErrorsNameTheField) {
  auto error = [](Json spec) { return ParseShellSpec(spec, 1).status().message(); };
  EXPECT_EQ(error({{"cwd", "/"}}), "shell step: field 'run': required");
  EXPECT_EQ(error({{"run", Json::array()}}), "shell step: field 'run': empty argv");
  EXPECT_EQ(error({{"run", "  "}}), "shell step: field 'run': empty command");
  EXPECT_EQ(error({{"run", 5}}),
            "shell step: field 'run': expected an argv array or a shell command string");
  EXPECT_EQ(error({{"run", {"a", std::string("x\0y", 3)}}}),
            "shell step: field 'run[1]': contains a NUL byte");
  EXPECT_EQ(error({{"run", "x"}, {"env", {{"A=B", "c"}}}}),
            "shell step: field 'env': bad variable name 'A=B'");
  EXPECT_EQ(error({{"run", "x"}, {"env", "A=B"}}),
            "shell step: field 'env': expected an object of variables");
  EXPECT_EQ(error({{"run", "x"}, {"cwd", 3}}),
            "shell step: field 'cwd': expected a directory path string");
  EXPECT_EQ(error({{"run", "x"}, {"memory", 0}}), "shell step: field 'memory': must be positive");
  EXPECT_EQ(error({{"run", "x"}, {"cpu_time", "5 parsecs"}}),
            "shell step: field 'cpu_time': unknown duration unit 'parsecs' (use ms, s, m, h)");
  EXPECT_EQ(ParseShellSpec({{"run", "x"}, {"memory", -1}}, 1).status().code(), errc::kValidation);
  EXPECT_EQ(ParseShellSpec(Json::array(), 1).status().code(), errc::kValidation);
}

TEST(ParseByteSize, UnitsAndErrors) {
  auto size = [](Json v) {
    Result<uint64_t> r = ParseByteSize(v, "f");
    return r.ok() ? static_cast<int64_t>(*r) : -1;
  };
  EXPECT_EQ(size(123), 123);
  EXPECT_EQ(size("123"), 123);
  EXPECT_EQ(size("2k"), 2048);
  EXPECT_EQ(size("2 KiB"), 2048);
  EXPECT_EQ(size("2KB"), 2000);
  EXPECT_EQ(size("100MB"), 100'000'000);
  EXPECT_EQ(size("100m"), 100 << 20);
  EXPECT_EQ(size("1.5GiB"), 1610612736);
  EXPECT_EQ(size("1g"), 1 << 30);
  EXPECT_EQ(size(-5), -1);
  EXPECT_EQ(size("lots"), -1);
  EXPECT_EQ(size("5 apples"), -1);
  EXPECT_EQ(size(true), -1);
}

TEST(ParseCpuSeconds, NumbersAndDurations) {
  auto secs = [](Json v) {
    Result<uint64_t> r = ParseCpuSeconds(v, "f");
    return r.ok() ? static_cast<int64_t>(*r) : -1;
  };
  EXPECT_EQ(secs(10), 10);
  EXPECT_EQ(secs(0.2), 1);
  EXPECT_EQ(secs("10"), 10);
  EXPECT_EQ(secs("90s"), 90);
  EXPECT_EQ(secs("2m"), 120);
  EXPECT_EQ(secs("1h30m"), 5400);
  EXPECT_EQ(secs("1500ms"), 2);
  EXPECT_EQ(secs(0), -1);
  EXPECT_EQ(secs(""), -1);
  EXPECT_EQ(secs("1m30"), -1);
  EXPECT_EQ(secs(Json::array()), -1);
}

}  // namespace
}  // namespace baton::runners
