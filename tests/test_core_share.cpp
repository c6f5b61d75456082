// The core-share probe (bench/measure/core_share.hpp): its summary on scripted readings, its record form, a real
// reading on this CPU, and that every timed sample of a case gets one (run_case's sampler and the program's Session).
#include <cmath>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/measure/core_share.hpp"
#include "bench/run/gbench.hpp"
#include "bench/run/record.hpp"
#include "bench/run/run_case.hpp"
#include "engines/registry.hpp"
#include "tests/test_support.hpp"

using namespace dmabench;
using json = nlohmann::json;

TEST(CoreShare, SummaryCountsTheSharedReadings) {
  const std::vector<double> ratios{0.6, 0.9, 0.7, 1.2, 0.75, 0.8};
  const measure::CoreShare c = measure::summarize_core_share(ratios);
  EXPECT_EQ(c.probed, 6u);
  EXPECT_EQ(c.shared, 3u);  // 0.9, 1.2, 0.8; 0.75 is at the threshold: not shared
  EXPECT_DOUBLE_EQ(c.ratio_p50, 0.775);  // the median of the six readings: (0.75 + 0.8) / 2
  const json j = measure::to_json(c, true);
  EXPECT_EQ(j["probed"], 6);
  EXPECT_EQ(j["shared"], 3);
  EXPECT_EQ(j["threshold"], 0.75);
  EXPECT_EQ(j["ratio_p50"], 0.775);
  EXPECT_EQ(j["ratios"], json::array({0.6, 0.9, 0.7, 1.2, 0.75, 0.8}));
  EXPECT_FALSE(measure::to_json(c, false).contains("ratios"));
  EXPECT_EQ(measure::summarize_core_share({0.9, 1.0, 1.1}).shared, 3u);
  EXPECT_EQ(measure::summarize_core_share({}).probed, 0u);
}

// A real reading: both loops take time and the independent chains are not slower per operation than three times the
// dependent one (a reading, not a verdict on this machine: whether its core is shared is not asserted).
TEST(CoreShare, AReadingTimesBothLoops) {
  const measure::CoreShareReading r = measure::read_core_share();
  EXPECT_GT(r.throughput_ns, 0.0);
  EXPECT_GT(r.latency_ns, 0.0);
  EXPECT_TRUE(std::isfinite(r.ratio()));
  EXPECT_GT(r.ratio(), 0.0);
}

// Every timed sample gets one reading, the warm-up's none: run_case's own sampler and the program's Session alike.
TEST(CoreShare, EveryTimedSampleOfACaseHasAReading) {
  auto backend = testing_support::host_backend();
  auto host = make_engine("host").value();
  Case c = testing_support::planned(Case{.pattern = "copy", .variant = EngineVariant{"host", json::object()},
                                          .devices = {0, 1}, .bytes_per_rank = 4096, .timing = Timing::oneshot,
                                          .run = {.warmup = 2, .iterations = 7}});
  c.run.keep_samples = true;
  CaseRecord r = run_case(c, host.get(), *backend);
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  ASSERT_TRUE(r.core_share.has_value());
  EXPECT_EQ(r.core_share->probed, 7u);
  EXPECT_EQ(r.core_share->ratios.size(), 7u);
  json j = to_json(r);
  EXPECT_EQ(j["core_share"]["probed"], 7);
  EXPECT_EQ(j["core_share"]["ratios"].size(), 7u);
  EXPECT_EQ(j["samples_us"].size(), 7u);

  c.run.keep_samples = false;
  gbench::Session session({}, 60, false, "");
  CaseHooks hooks{.sampler = [&](CaseExecution& e) { return session.sample(e); }};
  CaseExecution ex(c, host.get(), "", *backend);
  const CaseRecord& s = run_case(ex, hooks);
  ASSERT_EQ(s.status, Status::ok) << s.reason;
  ASSERT_TRUE(s.core_share.has_value());
  EXPECT_EQ(s.core_share->probed, s.timed->latency_us.count);
  j = to_json(s);
  EXPECT_FALSE(j["core_share"].contains("ratios"));
  ex.release();
}
