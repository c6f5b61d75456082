#include "bench/measure/timing.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <tuple>
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
  const auto issued = clock::now();
  s.op.wait();
  const auto t1 = clock::now();
  const double submit = std::chrono::duration<double>(issued - t0).count() / depth;
  if (auto gpu = s.op.device_seconds()) return {*gpu / depth, true, submit};  // GPU-clock timing (gpu-flag trigger)
  return {std::chrono::duration<double>(t1 - t0).count() / depth, false, submit};
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
  Sample slowest{0, false, 0};
  // each process's (seconds per operation, timed on the GPU clock, submit seconds per operation)
  for (const auto& [seconds, gpu_clock, submit] :
       team::share(std::tuple{mine.seconds_per_op, mine.gpu_clock, mine.submit_seconds_per_op}, error)) {
    slowest.seconds_per_op = std::max(slowest.seconds_per_op, seconds);
    slowest.gpu_clock = slowest.gpu_clock || gpu_clock;
    slowest.submit_seconds_per_op = std::max(slowest.submit_seconds_per_op, submit);
  }
  return slowest;
}

std::optional<Submit> submit_of(const Samples& samples, std::optional<std::size_t> descriptors) {
  if (samples.submit_us.empty() || samples.submit_us.size() != samples.us.size()) return std::nullopt;
  return Submit{median_interval(samples.submit_us), descriptors};
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
