// The stopping rules of bench/sampling/sampler.hpp on scripted samples and a scripted clock (no sleeping), then through
// run_case() and the program's Session on a scripted engine: an operation whose times come from a script (its
// device_seconds(), the clock a GPU-timed operation reports).
#include <cmath>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "bench/run/gbench.hpp"
#include "bench/run/record.hpp"
#include "bench/run/run_case.hpp"
#include "bench/sampling/sampler.hpp"
#include "engines/registry.hpp"
#include "tests/test_support.hpp"

using namespace dmabench;
using json = nlohmann::json;

namespace {

// A scripted engine and clock: sample i takes script(i) seconds per operation, and the clock moves by that plus
// `overhead` seconds (the untimed arming between samples).
struct Scripted {
  std::function<double(std::size_t)> script;
  double overhead = 0;
  double now = 100;  // the clock: any origin
  std::size_t taken = 0;
  double sample() {
    const double s = script(taken++);
    now += s + overhead;
    return s;
  }
  Samples run(const Sampling& rule, int iterations = 0, const AgreeStop& agree = {}) {
    return take_samples([this] { return sample(); }, rule, iterations, [this] { return now; }, agree);
  }
};

Sampling adaptive(double max_noise = 0.01, int min_samples = 10, double min_time = 0, double max_time = 1.0,
                  int max_samples = 100000) {
  return Sampling{true, max_noise, min_samples, min_time, max_time, max_samples};
}

// 1 ms, with every other sample `spread` times slower: the p50's interval is as wide as the spread forever.
double alternating(std::size_t i, double spread) { return i % 2 ? 1e-3 * spread : 1e-3; }

}  // namespace

TEST(Sampler, FixedTakesExactlyItsIterations) {
  Scripted e{[](std::size_t) { return 2e-3; }};
  const Samples s = e.run(Sampling{}, 7);
  ASSERT_EQ(s.us.size(), 7u);
  EXPECT_EQ(e.taken, 7u);
  EXPECT_DOUBLE_EQ(s.us[3], 2000.0);
  EXPECT_FALSE(s.outcome.adaptive);
  EXPECT_EQ(s.outcome.stopped, Stop::iterations);
  EXPECT_NEAR(s.outcome.seconds, 7 * 2e-3, 1e-12);
  // noise never stops a fixed count, nor a cap it does not have
  Scripted wide{[](std::size_t i) { return alternating(i, 3); }};
  EXPECT_EQ(wide.run(Sampling{false, 0.01, 10, 0, 1e-9, 2}, 25).us.size(), 25u);
}

TEST(Sampler, StopsOnNoiseOnceMinSamplesAreTaken) {
  Scripted steady{[](std::size_t) { return 1e-3; }};
  Samples s = steady.run(adaptive());
  EXPECT_EQ(s.us.size(), 10u);  // the noise is 0 from the first; min_samples holds it to 10
  EXPECT_EQ(s.outcome.stopped, Stop::noise);
  EXPECT_TRUE(s.outcome.adaptive);
  // below 6 samples there is no 95% interval: min_samples 1 still takes 6
  Scripted few{[](std::size_t) { return 1e-3; }};
  EXPECT_EQ(few.run(adaptive(0.01, 1)).us.size(), 6u);
  // a noisy start that settles: stops on noise, later, with the interval inside max_noise
  Scripted settling{[](std::size_t i) { return i < 20 ? alternating(i, 2) : 1e-3 * (1 + 1e-4 * static_cast<double>(i % 3)); }};
  s = settling.run(adaptive(0.01));
  EXPECT_EQ(s.outcome.stopped, Stop::noise);
  EXPECT_GT(s.us.size(), 20u);
  EXPECT_LE(median_interval(s.us).noise(), 0.01);
}

TEST(Sampler, MaxTimeEndsASamplingThatNeverSettlesAndItIsNoisy) {
  Scripted e{[](std::size_t i) { return alternating(i, 1.5); }, 1e-3};  // 2.25 ms of clock per sample on average
  const Samples s = e.run(adaptive(0.01, 10, 0, 0.25));
  EXPECT_EQ(s.outcome.stopped, Stop::max_time);
  EXPECT_GE(s.outcome.seconds, 0.25);
  EXPECT_LT(s.outcome.seconds, 0.25 + 3e-3);  // stopped after the first sample past max_time
  const auto t = measure::timed(s, copy_pattern().plan({0, 1}, 4096), adaptive(0.01, 10, 0, 0.25));
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->noisy);
  EXPECT_GT(t->p50_interval.noise(), 0.01);
  // max_time never ends a sampling before min_samples
  Scripted slow{[](std::size_t i) { return alternating(i, 2) * 100; }};  // 100-200 ms samples
  const Samples few = slow.run(adaptive(0.01, 10, 0, 0.05));
  EXPECT_EQ(few.us.size(), 10u);
  EXPECT_EQ(few.outcome.stopped, Stop::max_time);
}

TEST(Sampler, MinTimeHoldsTheNoiseStopBack) {
  Scripted e{[](std::size_t) { return 1.0 / 64; }};  // exact in binary: the clock reaches 0.25 s at sample 16
  const Samples s = e.run(adaptive(0.01, 10, 0.25, 1.0));
  EXPECT_EQ(s.us.size(), 16u);
  EXPECT_EQ(s.outcome.stopped, Stop::noise);
  EXPECT_DOUBLE_EQ(s.outcome.seconds, 0.25);
}

TEST(Sampler, MaxSamplesCapsIt) {
  Scripted e{[](std::size_t i) { return alternating(i, 2); }};
  const Samples s = e.run(adaptive(0.01, 10, 0, 1e9, 50));
  EXPECT_EQ(s.us.size(), 50u);
  EXPECT_EQ(s.outcome.stopped, Stop::max_samples);
  // the cap wins over min_time too; a settled sampling at the cap says noise
  Scripted steady{[](std::size_t) { return 1e-3; }};
  EXPECT_EQ(steady.run(adaptive(0.01, 10, 1e9, 1e9, 30)).outcome.stopped, Stop::max_samples);  // min_time never reached
  Scripted settled{[](std::size_t) { return 1e-3; }};
  EXPECT_EQ(settled.run(adaptive(0.01, 10, 0, 1e9, 10)).outcome.stopped, Stop::noise);
}

// The noise is judged on a growing schedule: 100000 samples that never settle cost a few hundred selections, not one
// per sample (which took minutes).
TEST(Sampler, TheNoiseIsJudgedCheaply) {
  Scripted e{[](std::size_t i) { return alternating(i, 2); }};
  const std::clock_t start = std::clock();
  const Samples s = e.run(adaptive(0.01, 10, 0, 1e9, 100000));
  const double cpu_s = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_EQ(s.us.size(), 100000u);
  EXPECT_LT(cpu_s, 5.0);
}

// A multi-process run: what the processes agree decides, whatever this one would do alone.
TEST(Sampler, TheAgreedDecisionStopsIt) {
  Scripted steady{[](std::size_t) { return 1e-3; }};
  int asked = 0;
  const Samples late = steady.run(adaptive(), 0, [&](std::optional<Stop> mine) -> std::optional<Stop> {
    ++asked;
    return asked < 25 ? std::nullopt : mine;  // another process had not reached its decision
  });
  EXPECT_EQ(late.us.size(), 25u);
  EXPECT_EQ(late.outcome.stopped, Stop::noise);
  Scripted wide{[](std::size_t i) { return alternating(i, 2); }};
  const Samples early = wide.run(adaptive(), 0, [](std::optional<Stop>) { return std::optional<Stop>(Stop::max_time); });
  EXPECT_EQ(early.us.size(), 1u);
  EXPECT_EQ(early.outcome.stopped, Stop::max_time);
}

namespace {

// The host engine's operation, timed by a script (device_seconds: the sample is the script's time).
class ScriptedOperation final : public testing_support::ForwardingOperation {
 public:
  ScriptedOperation(std::unique_ptr<Operation> inner, std::function<double(std::size_t)> script)
      : ForwardingOperation(std::move(inner)), script_(std::move(script)) {}
  std::optional<double> device_seconds() override { return script_(waits_++); }

 private:
  std::function<double(std::size_t)> script_;
  std::size_t waits_ = 0;
};

// The host engine, its times from `script`.
testing_support::WrappingEngine scripted_engine(Engine& host, std::function<double(std::size_t)> script) {
  return testing_support::WrappingEngine(host, [script](std::unique_ptr<Operation> op) -> std::unique_ptr<Operation> {
    return std::make_unique<ScriptedOperation>(std::move(op), script);
  });
}

Case adaptive_case(const Sampling& rule) {
  return testing_support::planned(Case{.pattern = "copy", .variant = EngineVariant{"host", json::object()},
                                       .devices = {0, 1}, .bytes_per_rank = 4096, .timing = Timing::oneshot,
                                       .run = {.warmup = 2, .iterations = 100, .sampling = rule}});
}

}  // namespace

// run_case()'s own sampler (no hook) honours the mode: a steady scripted engine stops on noise at min_samples, a
// noisy one runs to max_time, and the record says so.
TEST(AdaptiveRunCase, AScriptedEngineStopsAsItsTimesSay) {
  auto backend = testing_support::host_backend();
  auto host = make_engine("host").value();
  auto steady = scripted_engine(*host, [](std::size_t) { return 10e-6; });
  CaseRecord r = run_case(adaptive_case(adaptive(0.01, 12, 0, 5.0)), &steady, *backend);
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  EXPECT_EQ(r.timed->latency_us.count, 12u);
  EXPECT_EQ(r.timed->outcome.stopped, Stop::noise);
  EXPECT_FALSE(r.timed->noisy);
  json j = to_json(r);
  EXPECT_EQ(j["iterations"], 12);
  EXPECT_EQ(j["p50_interval_us"], json::array({r.timed->latency_us.p50, r.timed->latency_us.p50}));
  EXPECT_NEAR(r.timed->latency_us.p50, 10.0, 1e-9);
  EXPECT_EQ(j["noise"], 0.0);
  EXPECT_EQ(j["noisy"], false);
  EXPECT_EQ(j["sampling"]["mode"], "adaptive");
  EXPECT_EQ(j["sampling"]["stopped"], "noise");
  EXPECT_EQ(j["sampling"]["samples"], 12);
  EXPECT_EQ(j["sampling"]["min_samples"], 12);

  auto noisy = scripted_engine(*host, [](std::size_t i) { return alternating(i, 3) * 1e-2; });  // 10 and 30 µs
  r = run_case(adaptive_case(adaptive(0.01, 10, 0, 0.05)), &noisy, *backend);
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  EXPECT_EQ(r.timed->outcome.stopped, Stop::max_time);
  EXPECT_GE(r.timed->outcome.seconds, 0.05);
  EXPECT_TRUE(r.timed->noisy);
  j = to_json(r);
  EXPECT_EQ(j["noisy"], true);
  EXPECT_GT(j["noise"].get<double>(), 0.01);
  const auto& bw = j["busbw_interval_GBps"];
  EXPECT_LE(bw[0].get<double>(), j["busbw_GBps"].get<double>());
  EXPECT_GE(bw[1].get<double>(), j["busbw_GBps"].get<double>());
  EXPECT_NEAR(bw[0].get<double>(), 4096 / (j["p50_interval_us"][1].get<double>() * 1e-6) / 1e9, 1e-9);

  // A case whose config gave iterations: exactly that many, whatever the noise; noisy judged all the same.
  Case fixed = adaptive_case(Sampling{});
  fixed.run.iterations = 9;
  r = run_case(fixed, &noisy, *backend);
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  j = to_json(r);
  EXPECT_EQ(j["iterations"], 9);
  EXPECT_EQ(j["sampling"]["mode"], "fixed");
  EXPECT_EQ(j["sampling"]["stopped"], "iterations");
  EXPECT_TRUE(j["sampling"]["min_samples"].is_null());
  EXPECT_EQ(j["noisy"], true);
}

// The program's sampler: an adaptive case is one run dmabench makes as Google Benchmark's loop would report it,
// named without an iteration count, with the record's counters and the label "noisy".
TEST(AdaptiveRunCase, TheSessionReportsOneRunItMade) {
  auto backend = testing_support::host_backend();
  auto host = make_engine("host").value();
  const std::string out = fmt::format("{}/{}-adaptive-gbench.json", ::testing::TempDir(), ::getpid());
  {
    gbench::Session session({"--benchmark_out_format=json"}, 60, true, out);
    CaseHooks hooks{.sampler = [&](CaseExecution& e) { return session.sample(e); }};
    auto noisy = scripted_engine(*host, [](std::size_t i) { return alternating(i, 3) * 1e-2; });
    CaseExecution ex(adaptive_case(adaptive(0.01, 10, 0, 0.05)), &noisy, "", *backend);
    const CaseRecord& r = run_case(ex, hooks);
    ex.release();
    ASSERT_EQ(r.status, Status::ok) << r.reason;
    EXPECT_TRUE(session.show(r));
  }
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  ::unlink(out.c_str());
  const json doc = json::parse(text.str());
  ASSERT_EQ(doc["benchmarks"].size(), 1u);
  const json& b = doc["benchmarks"][0];
  EXPECT_EQ(b["name"], "copy/host/oneshot/dev=0,1/4KiB/manual_time");
  EXPECT_EQ(b["run_type"], "iteration");
  EXPECT_EQ(b["time_unit"], "us");
  EXPECT_EQ(b["label"], "noisy");
  EXPECT_GE(b["iterations"].get<int>(), 10);
  EXPECT_NEAR(b["real_time"].get<double>(), 20.0, 10.0 + 1e-9);  // the mean of 10 and 30 µs samples
  EXPECT_TRUE(b.contains("noise_pct") && b.contains("p50_us")) << b.dump();
  // The filter's names agree with the run's; Google Benchmark's flags keep its own loop (and the count in the name).
  const Case c = adaptive_case(adaptive());
  EXPECT_EQ(gbench::Loops({}).benchmark_name(c), "copy/host/oneshot/dev=0,1/4KiB/manual_time");
  EXPECT_TRUE(gbench::Filter({"--benchmark_filter=4KiB/manual_time$"}).selects(c));
  EXPECT_FALSE(gbench::Loops({"--benchmark_repetitions=2"}).adaptive(c));
  EXPECT_EQ(gbench::Loops({"--benchmark_repetitions=2"}).benchmark_name(c),
            "copy/host/oneshot/dev=0,1/4KiB/iterations:100/manual_time");
  EXPECT_EQ(gbench::Loops({"--benchmark_min_time=0.1"}).benchmark_name(c), "copy/host/oneshot/dev=0,1/4KiB/manual_time");
}
