#include "bench/measure/timing.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "team/team.hpp"

namespace dmabench::measure {
namespace {

using clock = std::chrono::steady_clock;

// The timed part of a sample in this process: launch `depth` operations, wait; seconds per operation.
Sample launch_and_wait(const Subject& s) {
  const int depth = s.depth();
  const auto t0 = clock::now();
  for (int k = 0; k < depth; ++k) s.op.launch();
  s.op.wait();
  const auto t1 = clock::now();
  if (auto gpu = s.op.device_seconds()) return {*gpu / depth, true};  // GPU-clock timing (gpu-flag trigger)
  return {std::chrono::duration<double>(t1 - t0).count() / depth, false};
}

}  // namespace

Sample take_sample(const Subject& s) {
  if (!team::world().multi()) {
    s.op.arm(s.depth());  // pre-posting is never timed
    return launch_and_wait(s);
  }
  // Every process: arm, then a barrier (outside the timed region), then its own launch .. wait; the
  // sample is the slowest process's time. A process that fails still takes part in both collectives,
  // so that every process fails the case together.
  const int depth = s.depth();
  std::string error;
  try {
    s.op.arm(depth);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (auto e = team::first_error(error)) throw std::runtime_error(*e);  // also the barrier before timing
  Sample mine;
  try {
    mine = launch_and_wait(s);
  } catch (const std::exception& e) {
    error = e.what();
  }
  Sample slowest{0, false};
  // each process's (seconds per operation, timed on the GPU clock)
  for (const auto& [seconds, gpu_clock] : team::share(std::pair{mine.seconds_per_op, mine.gpu_clock}, error)) {
    slowest.seconds_per_op = std::max(slowest.seconds_per_op, seconds);
    slowest.gpu_clock = slowest.gpu_clock || gpu_clock;
  }
  return slowest;
}

std::optional<Timed> timed(const Samples& samples, const Plan& plan, const Sampling& rule) {
  if (samples.us.empty()) return std::nullopt;
  const auto at = [&](double us) { return bandwidth(static_cast<double>(plan.total_bytes), plan.bus_factor, us); };
  Timed t;
  t.latency_us = summarize(samples.us);
  t.bandwidth = at(t.latency_us.p50);
  t.p50_interval = median_interval(samples.us);
  t.bandwidth_at_high = at(t.p50_interval.high);
  if (t.p50_interval.low > 0) t.bandwidth_at_low = at(t.p50_interval.low);
  t.noisy = !t.p50_interval.has_95 || t.p50_interval.noise() > rule.max_noise;
  t.rule = rule;
  t.outcome = samples.outcome;
  return t;
}

}  // namespace dmabench::measure
