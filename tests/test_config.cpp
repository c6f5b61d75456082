#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <map>

#include "bench/config/config.hpp"
#include "bench/cases/cases.hpp"
#include "core/errors.hpp"
#include "patterns/pattern.hpp"

using namespace dmabench;
using json = nlohmann::json;

namespace {

Config parse(const char* text) { return parse_config(json::parse(text)); }

// Expects an InputError whose message contains every fragment.
void expect_error(const char* text, std::initializer_list<const char*> fragments) {
  try {
    parse(text);
    FAIL() << "accepted: " << text;
  } catch (const InputError& e) {
    for (const char* f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

// Writes `text` to a temporary file and loads it as a config.
Config load_text(const std::string& text) {
  const std::string path = ::testing::TempDir() + "/dmabench-config-limits.json";
  {
    std::ofstream f(path, std::ios::binary);
    f << text;
  }
  return load_config(path);
}

void expect_load_error(const std::string& text, std::initializer_list<const char*> fragments) {
  try {
    load_text(text);
    FAIL() << "accepted: " << text.substr(0, 80);
  } catch (const InputError& e) {
    for (const char* f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
    EXPECT_LT(std::string(e.what()).size(), 400u) << "an error quotes at most a short excerpt";
  }
}

}  // namespace

TEST(ConfigLimits, DepthSizeDuplicatesAndStrayBytes) {
  const int deep = 100000;  // crashed the JSON library (recursion) before the depth limit
  expect_load_error("{\"sizes\":[" + std::string(deep, '[') + std::string(deep, ']') + "]}", {"nested more than 32"});
  expect_load_error("{\"sizes\": 1, \"description\": \"" + std::string(2 << 20, 'x') + "\"}", {"larger than 1024 KiB"});
  expect_load_error(R"({"sizes": 1, "sizes": 2})", {"'\"sizes\"' appears twice"});
  expect_load_error(R"({"sizes": 1, "engines": [{"name": "ce", "name": "sm"}]})", {"appears twice"});
  expect_load_error(std::string(R"({"sizes": 1})") + std::string(3, '\0'), {"NUL byte at offset 12"});
  expect_load_error("{\"sizes\": 1", {"not valid JSON"});
  // the same key in two different objects is fine
  EXPECT_EQ(load_text(R"({"sizes": 1, "overlap": {"compute": "stream", "bytes": 4096}})").sizes.size(), 1u);
}

// Only a regular file is read, and at most its limit: /dev/zero never ends, a FIFO with no writer would wait
// forever (this test would hang), a sparse file may be huge.
TEST(ConfigLimits, OnlyARegularFileWithinTheLimitIsRead) {
  const std::string dir = ::testing::TempDir() + "dmabench_config_files";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0644), 0);
  { std::ofstream touch(dir + "/huge"); }
  std::filesystem::resize_file(dir + "/huge", std::uintmax_t{1} << 30);  // sparse: 1 GiB of zeros
  for (const auto& [path, fragment] : std::vector<std::pair<std::string, std::string>>{
           {"/dev/zero", "not a regular file (a device)"}, {dir + "/fifo", "not a regular file (a FIFO)"},
           {dir, "not a regular file (a directory)"}, {dir + "/huge", "larger than 1024 KiB"},
           {dir + "/missing", "cannot read it"}}) {
    try {
      load_config(path);
      ADD_FAILURE() << path << " accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("--config " + path), std::string::npos) << e.what();
    }
  }
}

TEST(ConfigLimits, SizeRangesNeverWrapAndListsAreCapped) {
  // a step range up to near 2^64: no size may wrap below `from`
  const Config c = parse(R"({"sizes": {"from": 18446744073709551000, "to": 18446744073709551615, "step": 256}})");
  ASSERT_EQ(c.sizes.size(), 3u);
  for (auto s : c.sizes) EXPECT_GE(s, 18446744073709551000ull);
  const Config f = parse(R"({"sizes": {"from": "1048576TiB", "to": 18446744073709551615, "factor": 3}})");
  EXPECT_EQ(f.sizes, (std::vector<std::uint64_t>{1ull << 60, 3ull << 60, 9ull << 60}));
  std::string list = "[";
  for (int i = 0; i < 5000; ++i) list += (i ? ",1" : "1");
  expect_error((R"({"sizes": )" + list + "]}").c_str(), {"5000 sizes", "at most 4096"});
  // option lists whose product explodes are refused while parsing, not expanded
  expect_error(R"({"sizes": 1, "engines": [{"name": "ce", "options": {"streams": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16],
               "schedule": ["pcpy", "b2b"], "trigger": ["enqueue", "host-flag", "gpu-flag"], "completion": ["event",
               "flag-spin", "gpu-poll"], "gate": ["wait-value", "spin-kernel"], "issue": ["caller", "thread-per-gpu"],
               "graph": [false, true], "local": ["runtime", "peer-bounce"]}}]})",
               {"engines[0].options", "more than 4096 variants"});
  // a sweep too large to hold is refused with the count, before it is run
  const Config many = parse(R"({"sizes": {"from": 1, "to": 4096, "step": 1}, "patterns": ["copy"], "engines": ["host"],
                               "rotate": [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]})");
  try {
    expand(many, 2, {0, 1}, "host rank");
    FAIL() << "204800 cases accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than 200000 cases"), std::string::npos) << e.what();
  }
  // byte counts that would wrap in the plans are bad input, named
  const Config big = parse(R"({"sizes": 4611686018427387904, "patterns": ["allgather"], "engines": ["host"], "timing": ["oneshot"]})");
  try {
    expand(big, 8, {0, 1, 2, 3, 4, 5, 6, 7}, "host rank");
    FAIL() << "2^62 bytes per rank on 8 ranks accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit in 64-bit byte counts"), std::string::npos) << e.what();
  }
}

TEST(Config, DefaultsWhenOnlySizesGiven) {
  Config c = parse(R"({"sizes": "4KiB"})");
  EXPECT_EQ(c.sizes, std::vector<std::uint64_t>{4096});
  // the registry's patterns: the built-in ones, then any registered at run time (tests/test_extending.cpp)
  std::vector<std::string> every{"copy", "d2d", "bidir", "allgather", "alltoall", "alltoallv",
                                 "h2d", "d2h", "h2d-bidir", "host-to-all", "all-to-host"};
  for (std::size_t i = every.size(); i < all_patterns().size(); ++i) every.emplace_back(all_patterns()[i]->name());
  EXPECT_EQ(c.patterns, every);
  EXPECT_EQ(c.engines.size(), 7u);  // host, ce, ce-batch, sm, nccl, hsa, sdma
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_TRUE(c.devices[0].all);
  EXPECT_EQ(c.timings.size(), 2u);
  EXPECT_EQ(c.run.warmup, 5);
  EXPECT_EQ(c.run.iterations, 100);
  EXPECT_EQ(c.run.pipeline_depth, 20);
}

TEST(Config, SizeRangeWithFactor) {
  Config c = parse(R"({"sizes": {"from": "1KiB", "to": "1GiB", "factor": 4}})");
  ASSERT_EQ(c.sizes.size(), 11u);
  EXPECT_EQ(c.sizes.front(), 1024u);
  EXPECT_EQ(c.sizes[1], 4096u);
  EXPECT_EQ(c.sizes.back(), 1u << 30);
  // `to` not hit exactly: the range stops below it
  c = parse(R"({"sizes": {"from": 1000, "to": 9000, "factor": 3}})");
  EXPECT_EQ(c.sizes, (std::vector<std::uint64_t>{1000, 3000, 9000}));
  c = parse(R"({"sizes": {"from": 1000, "to": 8999, "factor": 3}})");
  EXPECT_EQ(c.sizes, (std::vector<std::uint64_t>{1000, 3000}));
}

TEST(Config, SizeRangeWithStepAndList) {
  Config c = parse(R"({"sizes": {"from": "1KiB", "to": "4KiB", "step": "1KiB"}})");
  EXPECT_EQ(c.sizes, (std::vector<std::uint64_t>{1024, 2048, 3072, 4096}));
  c = parse(R"({"sizes": ["4KiB", 100, "1000000"]})");
  EXPECT_EQ(c.sizes, (std::vector<std::uint64_t>{4096, 100, 1000000}));
}

TEST(Config, EngineOptionsExpandAsAxes) {
  Config c = parse(R"({"sizes": 1, "engines": ["ce", {"name": "sm", "options": {"blocks": ["auto", 8, 264]}}]})");
  ASSERT_EQ(c.engines.size(), 4u);
  EXPECT_EQ(c.engines[0].engine, "ce");
  EXPECT_EQ(c.engines[0].options, (json{{"schedule", "b2b"}, {"streams", "auto"}, {"trigger", "enqueue"},
                                        {"completion", "event"}, {"graph", false}, {"issue", "caller"}, {"gate", "wait-value"}, {"local", "runtime"}, {"coalesce", false}}));
  EXPECT_EQ(c.engines[1].options["blocks"], "auto");
  EXPECT_EQ(c.engines[2].options["blocks"], 8);
  EXPECT_EQ(c.engines[3].options["blocks"], 264);
  // defaults filled in when not given
  c = parse(R"({"sizes": 1, "engines": ["sm"]})");
  EXPECT_EQ(c.engines[0].options["blocks"], "auto");
}

TEST(Config, DeviceSets) {
  Config c = parse(R"({"sizes": 1, "devices": [0, 1]})");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].ids, (std::vector<int>{0, 1}));
  c = parse(R"({"sizes": 1, "devices": [[0, 1], "all", [1, 0]]})");
  ASSERT_EQ(c.devices.size(), 3u);
  EXPECT_TRUE(c.devices[1].all);
  EXPECT_EQ(c.devices[2].ids, (std::vector<int>{1, 0}));
}

TEST(Config, BadInputNamesFieldAndAcceptedValues) {
  expect_error(R"([1, 2])", {"JSON object"});
  expect_error(R"({"sizes": 1, "sizez": 2})", {"'sizez'", "accepted", "sizes"});
  expect_error(R"({"patterns": ["copy"]})", {"sizes", "missing"});
  expect_error(R"({"sizes": "4XB"})", {"sizes", "4XB", "accepted"});
  expect_error(R"({"sizes": ["4KiB", "lots"]})", {"sizes[1]", "lots"});
  expect_error(R"({"sizes": []})", {"sizes", "empty"});
  expect_error(R"({"sizes": true})", {"sizes", "expected"});
  expect_error(R"({"sizes": {"from": "1MiB", "to": "4KiB", "factor": 2}})", {"sizes", "empty range", "1MiB", "4KiB"});
  expect_error(R"({"sizes": {"from": 1, "to": 4, "factor": 1}})", {"sizes.factor", "above 1"});
  expect_error(R"({"sizes": {"from": 1, "to": 4}})", {"factor", "step"});
  expect_error(R"({"sizes": {"from": 1, "to": 4, "factor": 2, "step": 1}})", {"exactly one"});
  expect_error(R"({"sizes": {"from": 1, "to": 4, "fctor": 2}})", {"sizes.fctor", "unknown key"});
  expect_error(R"({"sizes": 1, "patterns": ["copy", "reduce"]})", {"patterns[1]", "'reduce'", "allgather", "alltoall"});
  expect_error(R"({"sizes": 1, "patterns": ["copy", "copy"]})", {"patterns[1]", "twice"});
  expect_error(R"({"sizes": 1, "patterns": 3})", {"patterns", "expected"});
  expect_error(R"({"sizes": 1, "engines": ["dma"]})", {"engines[0]", "'dma'", "ce", "sm", "nccl", "host"});
  expect_error(R"({"sizes": 1, "engines": [{"name": "sm", "options": {"warps": 4}}]})",
               {"engines[0].options.warps", "no option 'warps'", "blocks"});
  expect_error(R"({"sizes": 1, "engines": [{"name": "host", "options": {"blocks": 4}}]})", {"no option", "none"});
  expect_error(R"({"sizes": 1, "engines": [{"name": "ce", "options": {"blocks": 4}}]})",
               {"no option 'blocks'", "schedule, streams, trigger, completion, graph, issue, gate"});
  expect_error(R"({"sizes": 1, "engines": [{"name": "ce", "options": {"trigger": "doorbell"}}]})",
               {"engines[0].options.trigger", "\"enqueue\" or \"host-flag\" or \"gpu-flag\""});
  expect_error(R"({"sizes": 1, "engines": [{"name": "ce", "options": {"streams": 17}}]})",
               {"options.streams", "an integer from 1 to 16"});
  expect_error(R"({"sizes": 1, "engines": [{"name": "ce", "options": {"graph": "yes"}}]})", {"options.graph", "false or true"});
  expect_error(R"({"sizes": 1, "engines": [{"name": "nccl", "options": {"cta_policy": "none"}}]})",
               {"options.cta_policy", "\"default\" or \"zero\""});
  expect_error(R"({"sizes": 1, "engines": [{"name": "sm", "options": {"blocks": 0}}]})",
               {"engines[0].options.blocks", "accepted", "\"auto\"", "an integer from 1"});
  expect_error(R"({"sizes": 1, "engines": [{"name": "sm", "options": {"blocks": "many"}}]})", {"\"many\"", "accepted"});
  expect_error(R"({"sizes": 1, "engines": [{"name": "sm", "opts": {}}]})", {"engines[0].opts", "unknown key"});
  expect_error(R"({"sizes": 1, "engines": [{"options": {}}]})", {"engines[0]", "name"});
  expect_error(R"({"sizes": 1, "engines": []})", {"engines", "empty"});
  expect_error(R"({"sizes": 1, "devices": [0, 0]})", {"devices", "twice"});
  expect_error(R"({"sizes": 1, "devices": [0, -1]})", {"devices[1]", "integer"});
  expect_error(R"({"sizes": 1, "devices": "some"})", {"devices", "\"all\""});
  expect_error(R"({"sizes": 1, "devices": []})", {"devices", "non-empty"});
  expect_error(R"({"sizes": 1, "timing": ["oneshot", "burst"]})", {"timing[1]", "oneshot", "pipelined"});
  expect_error(R"({"sizes": 1, "iterations": 0})", {"iterations", "integer from 1"});
  expect_error(R"({"sizes": 1, "iterations": "ten"})", {"iterations", "\"ten\""});
  expect_error(R"({"sizes": 1, "warmup": -1})", {"warmup"});
  expect_error(R"({"sizes": 1, "pipeline_depth": 2.5})", {"pipeline_depth"});
  expect_error(R"({"sizes": 1, "name": 5})", {"name", "string"});
}

TEST(Config, LoadFileErrors) {
  EXPECT_THROW(load_config("/nonexistent/dir/x.json"), InputError);
  const std::string path = ::testing::TempDir() + "/bad_config.json";
  FILE* f = fopen(path.c_str(), "w");
  fputs("{\"sizes\": [1, }", f);
  fclose(f);
  try {
    load_config(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not valid JSON"), std::string::npos) << e.what();
  }
}

TEST(Config, ExpandOrdersAxesAndNamesCases) {
  Config c = parse(R"({"sizes": ["1KiB", "4KiB"], "patterns": ["copy", "allgather"], "engines": ["host"],
                      "devices": "all", "timing": ["oneshot", "pipelined"], "iterations": 7, "warmup": 2,
                      "pipeline_depth": 3})");
  auto cases = expand(c, 64, {0, 1, 2}, "host rank");
  // copy uses the first two devices; allgather all three
  ASSERT_EQ(cases.size(), 8u);
  EXPECT_EQ(cases[0].name(), "copy/host/oneshot/dev=0,1/1KiB");
  EXPECT_EQ(cases[1].name(), "copy/host/oneshot/dev=0,1/4KiB");
  EXPECT_EQ(cases[2].name(), "copy/host/pipelined/dev=0,1/1KiB");
  EXPECT_EQ(cases[4].name(), "allgather/host/oneshot/dev=0,1,2/1KiB");
  EXPECT_EQ(cases[0].ops_per_sample(), 1);
  EXPECT_EQ(cases[2].ops_per_sample(), 3);
  EXPECT_EQ(cases[0].timed_iterations(), 7);
  EXPECT_EQ(cases[0].run.warmup, 2);
  std::set<std::string> names;
  std::set<std::uint64_t> seeds;
  for (const auto& k : cases) {
    names.insert(k.name());
    seeds.insert(k.seed());
  }
  EXPECT_EQ(names.size(), cases.size());
  EXPECT_EQ(seeds.size(), cases.size());
}

// The run settings go from the config to every case whole (issue 53): one RunSettings value, the pipeline depth and
// the breakdown as configured, no field relayed by hand; what differs per case is derived from it by one Case function
// each (ops_per_sample, timed_iterations, breakdown_applies). A new run setting is one field of RunSettings plus its
// parse and echo (docs/extending.md, "A new run setting"): this test needs no line for it.
TEST(Config, CasesCarryTheRunSettingsWhole) {
  const Config c = parse(R"({"sizes": ["1KiB", "64MiB"], "patterns": ["copy", "allgather"], "engines": ["host"],
                            "timing": ["oneshot", "pipelined"], "iterations": 50, "warmup": 3, "pipeline_depth": 6,
                            "max_timed_bytes": "1GiB", "min_iterations": 2, "max_noise": 0.05, "breakdown": true,
                            "samples": true, "overlap": {"compute": "stream", "bytes": "1MiB"}})");
  EXPECT_EQ(c.run.pipeline_depth, 6);
  EXPECT_TRUE(c.run.breakdown);
  EXPECT_TRUE(c.run.keep_samples);
  const auto cases = expand(c, 2, {0, 1}, "host rank");
  ASSERT_EQ(cases.size(), 8u);
  std::map<std::string, int> timed;
  for (const Case& k : cases) {
    EXPECT_EQ(k.run, c.run) << k.name();  // whole: the configured depth and breakdown, iterations before any cap
    EXPECT_EQ(k.ops_per_sample(), k.timing == Timing::pipelined ? 6 : 1) << k.name();
    EXPECT_EQ(k.breakdown_applies(), k.pattern == "copy" || k.pattern == "h2d" || k.pattern == "d2h" || k.pattern == "d2d")
        << k.name();
    timed[k.name()] = k.timed_iterations();
  }
  EXPECT_EQ(timed["copy/host/oneshot/dev=0,1/1KiB/beside=stream-1MiB"], 50);
  EXPECT_EQ(timed["copy/host/oneshot/dev=0,1/64MiB/beside=stream-1MiB"], 16);    // 1 GiB / 64 MiB
  EXPECT_EQ(timed["copy/host/pipelined/dev=0,1/64MiB/beside=stream-1MiB"], 2);   // 1 GiB / (64 MiB x 6)
  EXPECT_EQ(timed["allgather/host/pipelined/dev=0,1/64MiB/beside=stream-1MiB"], 2);  // 1, raised to min_iterations
  // A case made by hand follows the same rules: the depth it holds is the configured one.
  Case hand{.pattern = "copy", .timing = Timing::oneshot, .run = {.pipeline_depth = 8}};
  EXPECT_EQ(hand.ops_per_sample(), 1);
  hand.timing = Timing::pipelined;
  EXPECT_EQ(hand.ops_per_sample(), 8);
  EXPECT_FALSE(hand.breakdown_applies());
  // The echo writes the settings as the config gave them, under the keys it had.
  const json echo = to_json(c);
  EXPECT_EQ(echo["pipeline_depth"], 6);
  EXPECT_EQ(echo["warmup"], 3);
  EXPECT_EQ(echo["iterations"], 50);
  EXPECT_EQ(echo["samples"], true);
  EXPECT_EQ(echo["breakdown"], true);
  EXPECT_EQ(echo["sampling"]["max_noise"], 0.05);
}

TEST(Config, ExpandRejectsMissingDevicesAndFlagsTooFew) {
  Config c = parse(R"({"sizes": 1, "devices": [0, 2], "engines": ["ce"]})");
  try {
    expand(c, 2, {0, 1}, "GPU");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("GPU 2 does not exist"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0..1"), std::string::npos) << e.what();
  }
  c = parse(R"({"sizes": 1, "devices": [1], "patterns": ["copy", "allgather"], "engines": ["ce"], "timing": "oneshot"})");
  auto cases = expand(c, 2, {0, 1}, "GPU");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_NE(cases[0].not_runnable.find("copy cannot run on 1 GPU"), std::string::npos) << cases[0].not_runnable;
  EXPECT_TRUE(cases[1].not_runnable.empty());
  EXPECT_EQ(cases[1].devices, std::vector<int>{1});
}

TEST(Config, DuplicateCasesCollapse) {
  Config c = parse(R"({"sizes": [1, 1], "engines": ["ce", "ce"], "devices": [[0, 1], [0, 1, 2]], "patterns": ["copy"],
                      "timing": "oneshot"})");
  // copy on [0,1,2] uses [0,1]: the same case as on [0,1]
  EXPECT_EQ(expand(c, 4, {0, 1, 2, 3}, "GPU").size(), 1u);
}

TEST(Config, CanonicalJsonRoundTrips) {
  Config c = parse(R"({"name": "x", "sizes": {"from": 1, "to": 4, "factor": 2}, "engines": ["sm"]})");
  json j = to_json(c);
  EXPECT_EQ(j["sizes"], json({1, 2, 4}));
  Config again = parse_config(json{{"name", j["name"]},       {"sizes", j["sizes"]},   {"patterns", j["patterns"]},
                                   {"engines", j["engines"]}, {"timing", j["timing"]}, {"warmup", j["warmup"]}});
  EXPECT_EQ(again.sizes, c.sizes);
  EXPECT_EQ(again.engines[0].options, c.engines[0].options);
}

TEST(Config, CeOptionAxesAndNames) {
  Config c = parse(R"({"sizes": 1, "patterns": ["copy"], "timing": "oneshot", "devices": [0, 1],
                      "engines": [{"name": "ce", "options": {"schedule": ["pcpy", "b2b"],
                                   "trigger": ["enqueue", "host-flag"], "completion": "flag-spin", "streams": [2]}},
                                  {"name": "nccl", "options": {"graph": [false, true], "cta_policy": "zero"}}]})");
  ASSERT_EQ(c.engines.size(), 6u);
  auto cases = expand(c, 2, {0, 1}, "GPU");
  std::vector<std::string> names;
  for (const auto& k : cases) names.push_back(k.name());
  // options at their default stay out of the name; the rest appear in the engine's option order
  EXPECT_EQ(names[0], "copy/ce,schedule=pcpy,streams=2,completion=flag-spin/oneshot/dev=0,1/1B");
  EXPECT_EQ(names[1], "copy/ce,streams=2,completion=flag-spin/oneshot/dev=0,1/1B");
  EXPECT_EQ(names[2], "copy/ce,schedule=pcpy,streams=2,trigger=host-flag,completion=flag-spin/oneshot/dev=0,1/1B");
  EXPECT_EQ(names[4], "copy/nccl,cta_policy=zero/oneshot/dev=0,1/1B");
  EXPECT_EQ(names[5], "copy/nccl,graph=true,cta_policy=zero/oneshot/dev=0,1/1B");
  EXPECT_EQ(cases[5].variant.options, (json{{"graph", true}, {"cta_policy", "zero"}}));
}

TEST(Config, OverlapWorkloadIsParsedAndNamesTheCase) {
  Config c = parse(R"({"sizes": "4KiB", "patterns": ["copy"], "engines": ["host"], "timing": ["oneshot"],
                       "overlap": {"compute": "gemm", "m": 256, "n": 8192, "k": 4096, "dtype": "fp16", "rounds": 5}})");
  ASSERT_TRUE(c.run.overlap.has_value());
  EXPECT_EQ(c.run.overlap->compute.kind, "gemm");
  EXPECT_EQ(c.run.overlap->compute.m, 256);
  EXPECT_EQ(c.run.overlap->compute.n, 8192);
  EXPECT_EQ(c.run.overlap->compute.k, 4096);
  EXPECT_EQ(c.run.overlap->compute.dtype, "fp16");
  EXPECT_EQ(c.run.overlap->rounds, 5);
  EXPECT_DOUBLE_EQ(c.run.overlap->duration_ms, 50.0);
  const auto cases = expand(c, 2, {0, 1}, "GPU");
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_EQ(cases[0].name(), "copy/host/oneshot/dev=0,1/4KiB/beside=gemm-fp16-256x8192x4096");
  EXPECT_DOUBLE_EQ(c.run.overlap->compute.work_per_launch(), 2.0 * 256 * 8192 * 4096);
  EXPECT_EQ(to_json(c)["overlap"]["compute"], "gemm");

  Config s = parse(R"({"sizes": "4KiB", "overlap": {"compute": "stream", "bytes": "256MiB"}})");
  EXPECT_EQ(s.run.overlap->compute.label(), "stream-256MiB");
  EXPECT_DOUBLE_EQ(s.run.overlap->compute.work_per_launch(), 2.0 * 256 * 1024 * 1024);
  EXPECT_FALSE(parse(R"({"sizes": "4KiB", "overlap": false})").run.overlap.has_value());
}

TEST(Config, BadOverlapSaysWhatIsAccepted) {
  expect_error(R"({"sizes": "4KiB", "overlap": {"compute": "fft"}})", {"overlap.compute", "\"gemm\"", "\"stream\""});
  expect_error(R"({"sizes": "4KiB", "overlap": {"m": 4}})", {"missing 'compute'"});
  expect_error(R"({"sizes": "4KiB", "overlap": {"compute": "stream", "m": 4}})", {"belongs to compute \"gemm\""});
  expect_error(R"({"sizes": "4KiB", "overlap": {"compute": "gemm", "bytes": "1MiB"}})", {"overlap.bytes"});
  expect_error(R"({"sizes": "4KiB", "overlap": {"compute": "gemm", "dtype": "fp8"}})", {"overlap.dtype", "bf16"});
  expect_error(R"({"sizes": "4KiB", "overlap": {"compute": "gemm", "m": 0}})", {"overlap.m", "from 1"});
  expect_error(R"({"sizes": "4KiB", "overlap": {"compute": "gemm", "rounds": 0}})", {"overlap.rounds"});
  expect_error(R"({"sizes": "4KiB", "overlap": {"compute": "gemm", "duration_ms": 0.5}})", {"overlap.duration_ms"});
  expect_error(R"({"sizes": "4KiB", "overlap": {"compute": "gemm", "shape": 1}})", {"overlap.shape", "unknown key"});
  expect_error(R"({"sizes": "4KiB", "overlap": true})", {"overlap", "expected false or an object"});
}

TEST(Config, TransferWorkloadIsParsedAndNamesTheCase) {
  Config c = parse(R"({"sizes": "64KiB", "patterns": ["h2d"], "engines": ["host"], "timing": ["oneshot"],
                       "overlap": {"compute": "transfer", "pattern": "d2h", "bytes": "8MiB",
                                   "engine": {"name": "host", "options": {}}, "host_memory": {"kind": "mapped"},
                                   "pipeline_depth": 3}})");
  ASSERT_TRUE(c.run.overlap.has_value());
  const beside::Spec& w = c.run.overlap->compute;
  EXPECT_EQ(w.kind, "transfer");
  EXPECT_EQ(w.pattern, "d2h");
  EXPECT_EQ(w.bytes, 8u << 20);
  EXPECT_EQ(w.variant.engine, "host");
  EXPECT_EQ(w.depth, 3);
  EXPECT_EQ(w.host.kind, HostKind::mapped);
  EXPECT_EQ(w.label(), "transfer-d2h-host-8MiB-mapped");
  EXPECT_DOUBLE_EQ(w.work_per_launch(), 3.0 * (8 << 20));
  EXPECT_EQ(expand(c, 2, {0, 1}, "host rank").at(0).name(),
            "h2d/host/oneshot/dev=0/64KiB/host=pinned,numa=local/beside=transfer-d2h-host-8MiB-mapped");
  // Written back, the config parses to the same workload.
  const json back = to_json(c);
  EXPECT_EQ(back["overlap"]["engine"]["name"], "host");
  EXPECT_EQ(parse_config(json{{"sizes", "1KiB"}, {"overlap", back["overlap"]}}).run.overlap->compute.label(), w.label());
  // Defaults: 256 MiB d2h on ce, pinned; options not at their default name the variant.
  Config d = parse(R"({"sizes": 1, "overlap": {"compute": "transfer", "engine": {"name": "ce", "options": {"streams": 2}}}})");
  EXPECT_EQ(d.run.overlap->compute.label(), "transfer-d2h-ce,streams=2-256MiB");
  EXPECT_EQ(d.run.overlap->compute.variant.options["streams"], 2);
}

TEST(Config, BadTransferWorkloadSaysWhatIsAccepted) {
  expect_error(R"({"sizes": 1, "overlap": {"compute": "transfer", "m": 4}})", {"overlap.m", "belongs to compute \"gemm\""});
  expect_error(R"({"sizes": 1, "overlap": {"compute": "stream", "pattern": "d2h"}})", {"overlap.pattern", "\"transfer\""});
  expect_error(R"({"sizes": 1, "overlap": {"compute": "transfer", "pattern": "d3h"}})", {"overlap.pattern", "d3h", "h2d"});
  expect_error(R"({"sizes": 1, "overlap": {"compute": "transfer", "pattern": "all"}})", {"overlap.pattern", "one pattern"});
  expect_error(R"({"sizes": 1, "overlap": {"compute": "transfer", "engine": "dma"}})", {"overlap.engine", "unknown engine"});
  expect_error(R"({"sizes": 1, "overlap": {"compute": "transfer", "engine": {"name": "ce", "options": {"streams": [1, 2]}}}})",
               {"overlap.engine", "2 variants"});
  expect_error(R"({"sizes": 1, "overlap": {"compute": "transfer", "host_memory": {"kind": ["pinned", "mapped"]}}})",
               {"overlap.host_memory", "one host kind"});
  expect_error(R"({"sizes": 1, "overlap": {"compute": "transfer", "pipeline_depth": 0}})", {"overlap.pipeline_depth"});
  expect_error(R"({"sizes": 1, "overlap": {"compute": "transfer", "rate": 1}})", {"overlap.rate", "unknown key", "pattern"});
}

TEST(Config, DevicePairsExpandEveryOrderedPairAndEveryDevice) {
  Config c = parse(R"({"sizes": "4KiB", "patterns": ["copy", "bidir", "h2d", "d2h"], "engines": ["host"],
                       "timing": ["oneshot"], "devices": {"pairs": [0, 1, 2]}})");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_TRUE(c.devices[0].pairs);
  std::map<std::string, std::set<std::vector<int>>> by_pattern;
  for (const auto& k : expand(c, 8, {0, 1}, "host rank")) {
    EXPECT_TRUE(k.not_runnable.empty()) << k.name();
    by_pattern[k.pattern].insert(k.devices);
  }
  const std::set<std::vector<int>> ordered = {{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}};
  EXPECT_EQ(by_pattern["copy"], ordered);
  EXPECT_EQ(by_pattern["bidir"], ordered);
  EXPECT_EQ(by_pattern["h2d"], (std::set<std::vector<int>>{{0}, {1}, {2}}));
  EXPECT_EQ(by_pattern["d2h"], (std::set<std::vector<int>>{{0}, {1}, {2}}));
  EXPECT_EQ(to_json(c)["devices"][0], json::parse(R"({"pairs": [0, 1, 2]})"));
  // "pairs" alone pairs every device of the backend; one device has no pair: the case says why.
  Config all = parse(R"({"sizes": "4KiB", "patterns": ["copy"], "engines": ["host"], "timing": ["oneshot"], "devices": "pairs"})");
  EXPECT_EQ(expand(all, 8, {0, 1}, "GPU").size(), 2u);
  const auto one = expand(all, 1, {0}, "GPU");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_NE(one[0].not_runnable.find("cannot run on 1 GPU"), std::string::npos) << one[0].not_runnable;
  EXPECT_EQ(parse_device_list("pairs", "--devices").pairs, true);
  Config coll = parse(R"({"sizes": 1, "patterns": ["allgather"], "engines": ["host"], "devices": "pairs"})");
  try {
    expand(coll, 4, {0, 1, 2, 3}, "GPU");
    FAIL() << "allgather on pairs was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'allgather' runs on all its devices"), std::string::npos) << e.what();
  }
  expect_error(R"({"sizes": 1, "devices": {"pairs": "all"}})", {"devices.pairs", "list of device ids"});
  expect_error(R"({"sizes": 1, "devices": {"pair": [0, 1]}})", {"devices", "\"pairs\""});
}

TEST(Config, SweepsOverrideTheTopLevelAndConcatenate) {
  Config c = parse(R"({"name": "ml", "patterns": ["allgather"], "engines": ["host"], "timing": ["oneshot"],
                       "iterations": 7, "power": true,
                       "sweeps": [
                         {"name": "decode", "sizes": ["4KiB", "8KiB"], "overlap": {"compute": "gemm", "m": 1}},
                         {"sizes": "8MiB", "iterations": 3, "overlap": {"compute": "gemm", "m": 4096}},
                         {"sizes": "4KiB", "overlap": {"compute": "gemm", "m": 1}}
                       ]})");
  ASSERT_EQ(c.sweeps.size(), 3u);
  EXPECT_TRUE(c.power);
  EXPECT_EQ(c.sweeps[0].name, "decode");
  EXPECT_EQ(c.sweeps[1].name, "ml[1]");
  EXPECT_EQ(c.sweeps[0].run.iterations, 7);
  EXPECT_EQ(c.sweeps[1].run.iterations, 3);
  const auto cases = expand(c, 2, {0, 1}, "GPU");
  ASSERT_EQ(cases.size(), 3u);  // the third sweep repeats the first one's 4KiB case: kept once
  EXPECT_EQ(cases[0].name(), "allgather/host/oneshot/dev=0,1/4KiB/beside=gemm-bf16-1x8192x8192");
  EXPECT_EQ(cases[2].name(), "allgather/host/oneshot/dev=0,1/8MiB/beside=gemm-bf16-4096x8192x8192");
  EXPECT_EQ(cases[2].timed_iterations(), 3);
  const json j = to_json(c);
  ASSERT_EQ(j["sweeps"].size(), 3u);
  EXPECT_EQ(j["sweeps"][1]["sizes"][0], 8u << 20);

  int visited = 0;
  for_each_part(c, [&](Config& part) {
    ++visited;
    part.devices = {DeviceSet{false, {1, 0}}};
  });
  EXPECT_EQ(visited, 3);
  EXPECT_EQ(expand(c, 2, {0, 1}, "GPU")[0].devices, (std::vector<int>{1, 0}));
}

TEST(Config, BadSweepsSayWhere) {
  expect_error(R"({"sweeps": []})", {"sweeps", "non-empty list"});
  expect_error(R"({"sweeps": [4]})", {"sweeps[0]", "expected an object"});
  expect_error(R"({"sweeps": [{"sizes": "1KiB", "sweeps": []}]})", {"sweeps[0].sweeps", "do not nest"});
  expect_error(R"({"sweeps": [{"sizes": "1KiB", "power": true}]})", {"sweeps[0].power", "run-wide"});
  expect_error(R"({"sweeps": [{"sizes": "1KiB", "colour": 1}]})", {"sweeps[0].colour", "unknown key"});
  expect_error(R"({"sweeps": [{"sizes": "1KiB"}, {"patterns": ["copy"]}]})", {"sizes", "missing", "(sweeps[1])"});
}

// Issue 52: "backend" is the run's backend where the command line gives none: run-wide, one of --backend's words.
TEST(Config, BackendIsRunWideAndOneOfTheBackendWords) {
  EXPECT_EQ(parse(R"({"sizes": "1KiB"})").backend, "");
  Config c = parse(R"({"backend": "gpu", "sizes": "1KiB"})");
  EXPECT_EQ(c.backend, "gpu");
  EXPECT_EQ(to_json(c)["backend"], "gpu");
  EXPECT_FALSE(to_json(parse(R"({"sizes": "1KiB"})")).contains("backend"));  // files as before where not set
  c = parse(R"({"backend": "host", "sizes": "1KiB", "sweeps": [{"patterns": ["copy"]}, {"patterns": ["bidir"]}]})");
  EXPECT_EQ(c.backend, "host");
  EXPECT_EQ(to_json(c)["backend"], "host");
  EXPECT_FALSE(to_json(c)["sweeps"][0].contains("backend"));  // the run's, not a part's
  expect_error(R"({"backend": "gpy", "sizes": "1KiB"})", {"backend", "unknown backend \"gpy\" (did you mean gpu?)",
                                                           "accepted: auto, gpu, host, cuda, hip"});
  expect_error(R"({"backend": ["gpu"], "sizes": "1KiB"})", {"backend", "accepted: auto, gpu"});
  expect_error(R"({"sizes": "1KiB", "sweeps": [{"backend": "host"}]})", {"sweeps[0].backend", "run-wide"});
}

TEST(Config, InPlaceAxisMakesInPlaceCasesWherePatternsHaveThem) {
  Config c = parse(R"({"sizes": "4KiB", "patterns": ["allgather", "alltoall"], "engines": ["host"],
                       "timing": ["oneshot"], "in_place": [false, true]})");
  EXPECT_EQ(c.in_place, (std::vector<bool>{false, true}));
  const auto cases = expand(c, 2, {0, 1}, "GPU");
  std::vector<std::string> names;
  for (const auto& k : cases) names.push_back(k.name());
  // both have an in-place form (alltoall's is the exchange that sdma packet=swap runs)
  EXPECT_EQ(names, (std::vector<std::string>{"allgather/host/oneshot/dev=0,1/4KiB",
                                             "allgather-inplace/host/oneshot/dev=0,1/4KiB",
                                             "alltoall/host/oneshot/dev=0,1/4KiB",
                                             "alltoall-inplace/host/oneshot/dev=0,1/4KiB"}));
  EXPECT_TRUE(cases[1].in_place);
  EXPECT_EQ(cases[1].pattern, "allgather");
  ASSERT_TRUE(cases[1].plan.has_value());  // expand() plans every runnable case: the in-place form's plan
  EXPECT_FALSE(cases[1].plan->preset.empty());
  EXPECT_TRUE(cases[0].plan->preset.empty());
  EXPECT_EQ(to_json(c)["in_place"], (json{false, true}));
  // in place needs two ranks
  const auto one = expand(parse(R"({"sizes": "4KiB", "patterns": ["allgather"], "engines": ["host"], "timing": ["oneshot"],
                                    "in_place": true, "devices": [0]})"), 2, {0, 1}, "GPU");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].not_runnable, "allgather in place cannot run on 1 GPU(s)");
  expect_error(R"({"sizes": "4KiB", "in_place": "yes"})", {"in_place", "expected true, false"});
  expect_error(R"({"sizes": "4KiB", "in_place": [true, true]})", {"in_place", "listed twice"});
  expect_error(R"({"sizes": "4KiB", "patterns": ["copy", "bidir"], "in_place": true})",
               {"in_place", "in-place form (allgather, alltoall)", "copy"});
}

// max_timed_bytes caps what one case's timed samples move: S x operations per sample x iterations.
TEST(Config, MaxTimedBytesChoosesIterationsPerCase) {
  Config c = parse(R"({"sizes": ["1KiB", "1MiB", "64MiB"], "patterns": ["copy", "allgather"], "engines": ["host"],
                      "timing": ["oneshot", "pipelined"], "iterations": 100, "pipeline_depth": 4,
                      "max_timed_bytes": "1GiB", "min_iterations": 3})");
  EXPECT_EQ(*c.run.max_timed_bytes, std::uint64_t{1} << 30);
  EXPECT_EQ(c.run.min_iterations, 3);
  std::map<std::string, int> it;
  for (const auto& k : expand(c, 2, {0, 1}, "host rank")) it[k.name()] = k.timed_iterations();
  EXPECT_EQ(it["copy/host/oneshot/dev=0,1/1KiB"], 100);       // 100 KiB: under the budget
  EXPECT_EQ(it["copy/host/oneshot/dev=0,1/1MiB"], 100);       // 100 MiB
  EXPECT_EQ(it["copy/host/oneshot/dev=0,1/64MiB"], 16);       // 1 GiB / 64 MiB
  EXPECT_EQ(it["copy/host/pipelined/dev=0,1/64MiB"], 4);      // 1 GiB / (64 MiB x 4)
  EXPECT_EQ(it["allgather/host/oneshot/dev=0,1/64MiB"], 8);   // S = 2 x 64 MiB
  EXPECT_EQ(it["allgather/host/pipelined/dev=0,1/64MiB"], 3); // 2, raised to min_iterations
  EXPECT_EQ(it["allgather/host/pipelined/dev=0,1/1MiB"], 100);// 1 GiB / 8 MiB = 128, capped at iterations
  const json canon = to_json(c);
  EXPECT_EQ(canon["max_timed_bytes"], std::uint64_t{1} << 30);
  EXPECT_EQ(canon["min_iterations"], 3);
  EXPECT_TRUE(to_json(parse(R"({"sizes": 1})"))["max_timed_bytes"].is_null());
  // without a budget every case takes `iterations`; min_iterations above iterations is refused
  for (const auto& k : expand(parse(R"({"sizes": ["64MiB"], "engines": ["host"], "iterations": 9})"), 2, {0, 1}, "host rank"))
    EXPECT_EQ(k.timed_iterations(), 9) << k.name();
  expect_error(R"({"sizes": 1, "iterations": 5, "min_iterations": 6})", {"min_iterations", "6", "iterations (5)"});
  expect_error(R"({"sizes": 1, "max_timed_bytes": "lots"})", {"max_timed_bytes", "lots"});
  expect_error(R"({"sizes": 1, "min_iterations": 0})", {"min_iterations"});
}

// rotate: a number or a list (an axis); named in the case when above 1.
TEST(Config, RotateIsAnAxis) {
  Config c = parse(R"({"sizes": ["1KiB"], "patterns": ["copy"], "engines": ["host"], "timing": "oneshot", "rotate": [1, 8]})");
  EXPECT_EQ(c.rotate, (std::vector<int>{1, 8}));
  const auto cases = expand(c, 2, {0, 1}, "host rank");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].name(), "copy/host/oneshot/dev=0,1/1KiB");
  EXPECT_EQ(cases[1].name(), "copy/host/oneshot/dev=0,1/1KiB/rotate=8");
  EXPECT_EQ(cases[1].rotate, 8);
  EXPECT_NE(cases[0].seed(), cases[1].seed());
  EXPECT_EQ(to_json(c)["rotate"], json::array({1, 8}));
  EXPECT_EQ(parse(R"({"sizes": 1, "rotate": 4})").rotate, std::vector<int>{4});
  expect_error(R"({"sizes": 1, "rotate": 0})", {"rotate", "1 to 4096"});
  expect_error(R"({"sizes": 1, "rotate": [2, 2]})", {"rotate", "twice"});
  expect_error(R"({"sizes": 1, "rotate": []})", {"rotate", "empty"});
  expect_error(R"({"sizes": 1, "rotate": ["x"]})", {"rotate[0]"});
}

// Sampling: a config that gives iterations takes that many samples per case (fixed, as before); without it a case
// samples adaptively (bench/sampling/sampler.hpp) with the config's max_noise, min_samples, min_time, max_time, max_samples.
TEST(Config, IterationsOrAdaptiveSampling) {
  Config fixed = parse(R"({"sizes": 1, "engines": ["host"], "patterns": ["copy"], "iterations": 7, "max_noise": 0.05})");
  EXPECT_FALSE(fixed.run.sampling.adaptive);
  EXPECT_EQ(fixed.run.iterations, 7);
  EXPECT_DOUBLE_EQ(fixed.run.sampling.max_noise, 0.05);  // judges `noisy` in fixed mode too
  json j = to_json(fixed);
  EXPECT_EQ(j["iterations"], 7);
  EXPECT_EQ(j["sampling"], json::parse(R"({"mode": "fixed", "max_noise": 0.05, "min_samples": null, "min_time": null,
                                           "max_time": null, "max_samples": null})"));
  const Config defaults = parse(R"({"sizes": 1, "engines": ["host"], "patterns": ["copy"]})");
  EXPECT_TRUE(defaults.run.sampling.adaptive);
  EXPECT_DOUBLE_EQ(defaults.run.sampling.max_noise, 0.01);
  EXPECT_EQ(defaults.run.sampling.min_samples, 10);
  EXPECT_DOUBLE_EQ(defaults.run.sampling.min_time_s, 0);
  EXPECT_DOUBLE_EQ(defaults.run.sampling.max_time_s, 1.0);
  EXPECT_EQ(defaults.run.sampling.max_samples, 100000);
  const Config a = parse(R"({"sizes": 1, "engines": ["host"], "patterns": ["copy"], "timing": "oneshot", "max_noise": 0.005, "min_samples": 20,
                             "min_time": 0.5, "max_time": 15, "max_samples": 5000})");
  EXPECT_TRUE(a.run.sampling.adaptive);
  j = to_json(a);
  EXPECT_EQ(j["sampling"], json::parse(R"({"mode": "adaptive", "max_noise": 0.005, "min_samples": 20, "min_time": 0.5,
                                           "max_time": 15.0, "max_samples": 5000})"));
  const auto cases = expand(a, 2, {0, 1}, "host rank");
  ASSERT_EQ(cases.size(), 1u);
  EXPECT_TRUE(cases[0].run.sampling.adaptive);
  EXPECT_EQ(cases[0].run.sampling.max_samples, 5000);
  EXPECT_FALSE(expand(fixed, 2, {0, 1}, "host rank")[0].run.sampling.adaptive);
  // The mode is per sweep part: a part that gives iterations is fixed, the others adaptive.
  const Config parts = parse(R"({"sizes": 1, "engines": ["host"], "patterns": ["copy"],
                                 "sweeps": [{"timing": "oneshot", "max_time": 0.5}, {"timing": "pipelined", "iterations": 3}]})");
  ASSERT_EQ(parts.sweeps.size(), 2u);
  EXPECT_TRUE(parts.sweeps[0].run.sampling.adaptive);
  EXPECT_DOUBLE_EQ(parts.sweeps[0].run.sampling.max_time_s, 0.5);
  EXPECT_FALSE(parts.sweeps[1].run.sampling.adaptive);
  EXPECT_EQ(to_json(parts)["sweeps"][1]["sampling"]["mode"], "fixed");
  // an adaptive key at the top level reaches every part: one that gives iterations is refused, naming it
  expect_error(R"({"sizes": 1, "max_time": 0.5, "sweeps": [{"timing": "oneshot"}, {"iterations": 3}]})",
               {"iterations, max_time", "sweeps[1]"});
}

TEST(Config, BadSamplingSaysWhatIsAccepted) {
  // iterations with an adaptive-only key: both named
  for (const char* key : {"min_samples", "min_time", "max_time", "max_samples"}) {
    const std::string text = std::string(R"({"sizes": 1, "iterations": 10, ")") + key + R"(": 1})";
    expect_error(text.c_str(), {"config: iterations, ", key, "give one or the other"});
  }
  // the fixed count's own keys without iterations
  expect_error(R"({"sizes": 1, "max_timed_bytes": "1GiB"})", {"max_timed_bytes", "give iterations with it"});
  expect_error(R"({"sizes": 1, "min_iterations": 3})", {"min_iterations", "give iterations with it"});
  // each key out of its range
  expect_error(R"({"sizes": 1, "max_noise": 0})", {"max_noise", "a fraction above 0, at most 1", "got 0"});
  expect_error(R"({"sizes": 1, "max_noise": 1.5})", {"max_noise", "1.5"});
  expect_error(R"({"sizes": 1, "max_noise": "1%"})", {"max_noise", "\"1%\""});
  expect_error(R"({"sizes": 1, "min_samples": 0})", {"min_samples", "integer from 1 to 10000000"});
  expect_error(R"({"sizes": 1, "min_samples": 2.5})", {"min_samples", "2.5"});
  expect_error(R"({"sizes": 1, "max_samples": 10000001})", {"max_samples", "integer from 1 to 10000000"});
  expect_error(R"({"sizes": 1, "min_time": -1})", {"min_time", "seconds from 0 to 3600"});
  expect_error(R"({"sizes": 1, "max_time": 0})", {"max_time", "seconds above 0, at most 3600"});
  expect_error(R"({"sizes": 1, "max_time": 3601})", {"max_time", "3601"});
  expect_error(R"({"sizes": 1, "max_time": true})", {"max_time", "true"});
  // bounds out of order
  expect_error(R"({"sizes": 1, "min_samples": 50, "max_samples": 20})", {"min_samples", "50", "max_samples (20)"});
  expect_error(R"({"sizes": 1, "min_time": 2, "max_time": 1})", {"min_time", "max_time (1 s)"});
  expect_error(R"({"sizes": 1, "min_time": 2})", {"min_time", "max_time (1 s)"});  // against the default max_time
}
