// Adding a pattern (issue 27, docs/extending.md): a toy pattern defined here, outside patterns/, is
// registered at run time and then runs on every engine of the host backend in this build (the registry's
// list, not a hard-coded one), validated byte for byte; a broken plan of it and a broken engine fail.
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <gtest/gtest.h>

#include "bench/cases/cases.hpp"
#include "bench/run/run_case.hpp"
#include "tests/test_support.hpp"
#include "tests/toy_pattern.hpp"

using namespace dmabench;
using json = nlohmann::json;

namespace {

// Registered before Google Test expands the registry-driven suites of this binary (they run it too).
const Pattern& toy = testing_support::registered_ring_shift();

// The toy pattern with one byte of the last rank's destination never written: a plan the harness refuses.
class LeakyRingShift final : public testing_support::RingShift {
 public:
  std::string_view name() const override { return "ring-shift-leaky"; }
  Plan plan(const std::vector<int>& devices, std::size_t bytes) const override {
    Plan p = RingShift::plan(devices, bytes);
    p.pattern = std::string(name());
    p.transfers.back().bytes -= 1;
    return p;
  }
};

Case toy_case(const std::string& pattern, const std::string& engine, int ranks, std::size_t bytes, Timing timing) {
  std::vector<int> devs(static_cast<std::size_t>(find_pattern(pattern)->ranks_used(ranks)));
  std::iota(devs.begin(), devs.end(), 0);
  return testing_support::planned(Case{.pattern = pattern,
                                       .variant = EngineVariant{engine, with_defaults(engine, json::object())},
                                       .devices = devs,
                                       .bytes_per_rank = bytes,
                                       .timing = timing,
                                       .run = {.warmup = 1,
                                               .iterations = 3,
                                               .pipeline_depth = timing == Timing::pipelined ? 3 : 1}});
}

std::unique_ptr<Engine> host_engine(const std::string& name) {
  auto made = make_engine(name, "host");
  EXPECT_TRUE(made) << name << ": " << made.why_not();
  return made ? std::move(made).value() : nullptr;
}

}  // namespace

TEST(Extending, ARegisteredPatternIsInTheRegistry) {
  EXPECT_EQ(find_pattern("ring-shift"), &toy);
  EXPECT_EQ(std::count(all_patterns().begin(), all_patterns().end(), &toy), 1);
  const auto names = testing_support::every_pattern_name();
  EXPECT_NE(std::find(names.begin(), names.end(), "ring-shift"), names.end());
  const auto device = testing_support::pattern_names_with_host_memory(false);
  EXPECT_NE(std::find(device.begin(), device.end(), "ring-shift"), device.end());
  // a second pattern of the same name, or one without a name, is refused; the registry is unchanged
  const std::size_t before = all_patterns().size();
  static const testing_support::RingShift again;
  EXPECT_THROW(register_pattern(again), std::invalid_argument);
  EXPECT_THROW(register_pattern(copy_pattern()), std::invalid_argument);
  EXPECT_EQ(all_patterns().size(), before);
  EXPECT_EQ(find_pattern("ring-shift"), &toy);
}

TEST(Extending, TheToyPlanIsItsOwn) {
  const Plan p = toy.plan({0, 1, 2}, 100);
  EXPECT_EQ(p.check(), std::nullopt);
  ASSERT_EQ(p.transfers.size(), 3u);
  for (const Transfer& t : p.transfers) EXPECT_EQ(t.dst_rank, (t.src_rank + 1) % 3);
  // not a plan of a built-in pattern: none moves one block to each next rank on 3 ranks
  for (const Pattern* b : {&bidir_pattern(), &allgather_pattern(), &alltoall_pattern()}) {
    const Plan q = b->plan({0, 1, 2}, 100);
    EXPECT_FALSE(q.transfers.size() == 3 && q.total_bytes == p.total_bytes && q.dst_bytes == p.dst_bytes) << b->name();
  }
}

// Every engine that runs on the host backend in this build (host; sdma on the software SDMA engine).
class ToyOnEveryHostEngine : public ::testing::TestWithParam<std::string> {};

TEST_P(ToyOnEveryHostEngine, ValidatesEveryByte) {
  const std::string engine_name = GetParam();
  auto backend = testing_support::host_backend();
  auto engine = host_engine(engine_name);
  ASSERT_NE(engine, nullptr);
  int ran = 0;
  for (int ranks : {2, 3, 5})
    for (std::size_t bytes : {std::size_t{1}, std::size_t{4097}})
      for (Timing timing : {Timing::oneshot, Timing::pipelined}) {
        const Case c = toy_case("ring-shift", engine_name, ranks, bytes, timing);
        EXPECT_EQ(c.name().rfind("ring-shift/" + engine_name + "/", 0), 0u) << c.name();
        const json r = to_json(run_case(c, engine.get(), *backend));
        ASSERT_EQ(r["status"], "ok") << c.name() << ": " << r["reason"];
        EXPECT_EQ(r["validated"], true) << c.name();
        EXPECT_EQ(r["pattern"], "ring-shift") << c.name();
        EXPECT_EQ(r["ranks"], ranks) << c.name();
        EXPECT_EQ(r["bytes"].get<double>(), static_cast<double>(bytes) * ranks) << c.name();
        ++ran;
      }
  EXPECT_EQ(ran, 12);
}

// A broken engine (its operation leaves the last byte of one transfer uncopied) fails the toy case, on
// every engine; a broken toy plan (a byte that no transfer writes) is refused before anything runs.
TEST_P(ToyOnEveryHostEngine, ABrokenCaseFails) {
  const std::string engine_name = GetParam();
  auto backend = testing_support::host_backend();
  auto engine = host_engine(engine_name);
  ASSERT_NE(engine, nullptr);
  testing_support::TamperingEngine short_by_one(*engine, [](Plan& p) { p.transfers[1].bytes -= 1; });
  const json r = to_json(run_case(toy_case("ring-shift", engine_name, 3, 4096, Timing::oneshot), &short_by_one, *backend));
  EXPECT_EQ(r["status"], "failed") << r.dump();
  EXPECT_EQ(r["validated"], false);
  // transfer 1 writes rank 2's buffer: its last byte keeps the poison
  EXPECT_NE(r["reason"].get<std::string>().find("validation: rank 2 (device 2) destination byte 4095"), std::string::npos)
      << r["reason"];

  static const LeakyRingShift leaky;
  const Plan bad = leaky.plan({0, 1, 2}, 64);
  ASSERT_TRUE(bad.check().has_value());
  EXPECT_NE(bad.check()->find("never written"), std::string::npos) << *bad.check();
  Case c = toy_case("ring-shift", engine_name, 3, 64, Timing::oneshot);
  c.plan = bad;  // what plan_case makes of the leaky pattern
  const json refused = to_json(run_case(c, engine.get(), *backend));
  EXPECT_EQ(refused["status"], "failed") << refused.dump();
  EXPECT_NE(refused["reason"].get<std::string>().find("never written"), std::string::npos) << refused["reason"];
}

INSTANTIATE_TEST_SUITE_P(Host, ToyOnEveryHostEngine, ::testing::ValuesIn(testing_support::engines_running_on("host")),
                         [](const auto& info) {
                           std::string n = info.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(Extending, EveryHostEngineIsCovered) {
  const auto engines = testing_support::engines_running_on("host");
  for (const char* e : {"host", "sdma"}) EXPECT_NE(std::find(engines.begin(), engines.end(), e), engines.end()) << e;
  for (const std::string& e : engines) EXPECT_TRUE(find_engine_spec(e)->runs_on("host")) << e;
}
