#include <gtest/gtest.h>

#include "bench/cli.hpp"
#include "bench/gbench.hpp"
#include "core/errors.hpp"

using namespace dmabench;

TEST(Cli, ParsesFlagsInBothForms) {
  CliOptions o = parse_cli({"--config", "c.json", "--out=o.json", "--backend", "host", "--devices=0,2", "--list",
                            "--benchmark_filter=copy", "--benchmark_repetitions=3"});
  EXPECT_EQ(o.config, "c.json");
  EXPECT_EQ(o.out, "o.json");
  EXPECT_EQ(o.backend, "host");
  ASSERT_TRUE(o.devices.has_value());
  EXPECT_EQ(o.devices->ids, (std::vector<int>{0, 2}));
  EXPECT_TRUE(o.list);
  EXPECT_EQ(o.benchmark_args, (std::vector<std::string>{"--benchmark_filter=copy", "--benchmark_repetitions=3"}));
  o = parse_cli({"--devices", "all", "--features", "--version"});
  EXPECT_TRUE(o.devices->all);
  EXPECT_TRUE(o.features);
  EXPECT_TRUE(o.version);
  EXPECT_EQ(parse_cli({}).out, "dmabench-results.json");
}

TEST(Cli, BadFlagsAreInputErrors) {
  auto expect = [](std::vector<std::string> args, const char* fragment) {
    try {
      parse_cli(args);
      FAIL() << "accepted " << args[0];
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect({"--backend", "rocm"}, "accepted: auto, host, cuda");
  expect({"--devices", "0,x"}, "'x' is not a device id");
  expect({"--devices", "0,0"}, "twice");
  expect({"--devices", ""}, "--devices");
  expect({"--config"}, "missing value");
  expect({"--frobnicate"}, "unknown argument '--frobnicate'");
  expect({"--list=yes"}, "takes no value");
  // strict device lists: no empty item, sign or space
  expect({"--devices", "0,1,"}, "'' is not a device id");
  expect({"--devices", "+0"}, "'+0' is not a device id");
  expect({"--devices", "0, 1"}, "' 1' is not a device id");
  expect({"--devices", ",0"}, "'' is not a device id");
  EXPECT_EQ(parse_cli({"--devices", "3,1"}).devices->ids, (std::vector<int>{3, 1}));
  // numbers that are not numbers of seconds
  expect({"--power-window", "nan"}, "--power-window: 'nan'");
  expect({"--power-window", "inf"}, "--power-window: 'inf'");
  expect({"--power-window", " 2"}, "--power-window: ' 2'");
}

TEST(Cli, GoogleBenchmarkFlagsCheckedFirst) {
  auto expect = [](std::vector<std::string> args, const char* fragment) {
    try {
      gbench::check_flags(args);
      FAIL() << "accepted " << args[0];
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect({"--benchmark_repetitions=-3"}, "--benchmark_repetitions: '-3'");
  expect({"--benchmark_repetitions=0"}, "--benchmark_repetitions: '0'");
  expect({"--benchmark_repetitions=x"}, "--benchmark_repetitions: 'x'");
  expect({"--benchmark_filter=copy("}, "--benchmark_filter: 'copy(' is not a valid regular expression");
  expect({"--benchmark_format=csv"}, "--benchmark_format: 'csv'");
  EXPECT_NO_THROW(gbench::check_flags({"--benchmark_repetitions=3", "--benchmark_filter=copy/.*", "--benchmark_format=json"}));
}
