#include <gtest/gtest.h>

#include "bench/cli.hpp"
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
}
