#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "bench/cli.hpp"
#include "bench/run/gbench_flags.hpp"
#include "bench/config/presets.hpp"
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
  EXPECT_EQ(o.benchmark_args.args(), (std::vector<std::string>{"--benchmark_filter=copy", "--benchmark_repetitions=3"}));
  EXPECT_EQ(o.benchmark_args.value(gbench::Flag::filter), "copy");
  EXPECT_FALSE(o.benchmark_args.has(gbench::Flag::out));
  o = parse_cli({"--devices", "all", "--features"});
  EXPECT_TRUE(o.devices->all);
  EXPECT_TRUE(o.features);
  EXPECT_TRUE(parse_cli({"--version"}).version);
  EXPECT_EQ(parse_cli({}).out, "dmabench-results.json");
  EXPECT_EQ(parse_cli({}).backend, "");  // not given: the config's "backend", else auto (bench/runner.cpp)
  EXPECT_EQ(parse_cli({"--backend", "gpu"}).backend, "gpu");
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
  expect({"--backend", "rocm"}, "accepted: auto, gpu, host, cuda, hip");
  expect({"--backend", "gpy"}, "unknown backend 'gpy' (did you mean gpu?)");
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
      gbench::Flags{std::vector<std::string>(args)};
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
  // values Google Benchmark rejects with its usage and exit 0, or takes though they make no sense
  expect({"--benchmark_format=xml"}, "--benchmark_format: 'xml'");
  expect({"--benchmark_min_time=-1"}, "--benchmark_min_time: '-1'");
  expect({"--benchmark_min_time=1e400"}, "--benchmark_min_time: '1e400'");
  expect({"--benchmark_repetitions=12abc"}, "--benchmark_repetitions: '12abc'");
  expect({"--benchmark_colour=yes"}, "unknown Google Benchmark flag '--benchmark_colour'");
  expect({"--benchmark_report_aggregates_only"}, "--benchmark_report_aggregates_only: not supported");
  expect({"--benchmark_out"}, "--benchmark_out: needs a value");
  expect({"--benchmark_repetitions=2", "--benchmark_repetitions=3"}, "--benchmark_repetitions: given twice");
  const gbench::Flags ok = {"--benchmark_list_tests=true", "--benchmark_counters_tabular", "--benchmark_context=a=1,b=2",
                            "--benchmark_min_time=0.05", "--benchmark_color=no", "--benchmark_out_format=csv",
                            "--benchmark_min_warmup_time=0", "--benchmark_out=x.json"};
  EXPECT_TRUE(ok.on(gbench::Flag::list_tests));
  EXPECT_TRUE(ok.on(gbench::Flag::counters_tabular));  // a boolean given bare
  EXPECT_EQ(ok.value(gbench::Flag::counters_tabular), "");
  EXPECT_EQ(ok.value(gbench::Flag::min_time), "0.05");
  // Google Benchmark is given its flags less those dmabench implements around it (the out file, the filter)
  EXPECT_EQ(ok.library_args(), (std::vector<std::string>{"--benchmark_list_tests=true", "--benchmark_counters_tabular",
                                                         "--benchmark_context=a=1,b=2", "--benchmark_min_time=0.05",
                                                         "--benchmark_color=no", "--benchmark_min_warmup_time=0"}));
  EXPECT_FALSE(gbench::Flags({"--benchmark_list_tests=no"}).on(gbench::Flag::list_tests));
  EXPECT_STREQ(gbench::flag_name(gbench::Flag::time_unit), "--benchmark_time_unit");
  EXPECT_NO_THROW(gbench::Flags({"--benchmark_repetitions=3", "--benchmark_filter=copy/.*", "--benchmark_format=json"}));
}

TEST(Cli, EdgeValuesAndRepeatedFlags) {
  auto expect = [](std::vector<std::string> args, const char* fragment) {
    EXPECT_THROW(
        {
          try {
            parse_cli(args);
          } catch (const InputError& e) {
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
            throw;
          }
        },
        InputError)
        << args[0] << " " << args[1];
  };
  expect({"--case-timeout", "0x10"}, "--case-timeout: '0x10' is not a decimal number");
  expect({"--case-timeout", "1e400"}, "--case-timeout: '1e400'");
  expect({"--case-timeout", "0.001"}, "--case-timeout: '0.001'");
  expect({"--power-window", "0x10"}, "--power-window: '0x10'");
  EXPECT_EQ(parse_cli({"--case-timeout", "0.0"}).case_timeout_s, 0);
  EXPECT_EQ(parse_cli({"--case-timeout=00"}).case_timeout_s, 0);
  EXPECT_EQ(parse_cli({"--case-timeout", "2.5"}).case_timeout_s, 2.5);
  expect({"--config", "a.json", "--config", "b.json"}, "--config: given twice");
  expect({"--out", "a.json", "--out=b.json"}, "--out: given twice");
  expect({"--list", "--features"}, "--list and --features: choose one");
  expect({"--packets="}, "--packets: empty file name");
  expect({"--power-trace", ""}, "--power-trace: empty file name");
  expect({"--config="}, "--config: empty file name");
  expect({"--version", "--features"}, "--features and --version: choose one");
}

// Presets: NAME first or --preset NAME is configs/NAME.json of the configs directory ($DMABENCH_CONFIGS first);
// an unknown name lists the presets; a preset beside --config is refused; --presets lists name and description.
TEST(Cli, PresetsAreTheShippedConfigsByName) {
  const std::string dir = ::testing::TempDir() + "/dmabench-presets";
  std::filesystem::create_directories(dir);
  for (const char* name : {"quick", "crossover"}) {
    std::ofstream(dir + "/" + name + ".json") << R"({"description": "Who moves )" << name
                                              << R"(. More words.", "engines": ["host"]})";
  }
  std::ofstream(dir + "/not a preset.json") << "{}";
  setenv("DMABENCH_CONFIGS", dir.c_str(), 1);
  EXPECT_EQ(parse_cli({"crossover", "--list"}).config, dir + "/crossover.json");
  EXPECT_EQ(parse_cli({"--preset", "quick"}).config, dir + "/quick.json");
  EXPECT_EQ(parse_cli({"--preset=quick"}).preset, "quick");
  const std::string text = presets_text();
  EXPECT_NE(text.find("crossover"), std::string::npos) << text;
  EXPECT_NE(text.find("Who moves crossover."), std::string::npos) << text;
  EXPECT_EQ(text.find("More words"), std::string::npos) << text;  // the first sentence only
  EXPECT_EQ(text.find("not a preset"), std::string::npos) << text;
  EXPECT_TRUE(parse_cli({"--presets"}).presets);
  auto refused = [](std::vector<std::string> args, const char* fragment) {
    try {
      parse_cli(args);
      FAIL() << "accepted " << args[0];
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  refused({"nosuch"}, "unknown preset 'nosuch'; the presets");
  refused({"nosuch"}, "crossover, quick");
  refused({"quick", "--config", "c.json"}, "choose one");
  refused({"quick", "--preset", "crossover"}, "given twice");
  refused({"--preset", ""}, "empty name");
  refused({"--list", "quick"}, "unknown argument 'quick'");  // a preset name comes first
  setenv("DMABENCH_CONFIGS", (dir + "/none").c_str(), 1);
  refused({"quick"}, "no configs directory");
  unsetenv("DMABENCH_CONFIGS");
}
