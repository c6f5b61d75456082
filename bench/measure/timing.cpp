#include "bench/measure/timing.hpp"

#include <chrono>

namespace dmabench::measure {

Sample take_sample(const Subject& s) {
  using clock = std::chrono::steady_clock;
  const int depth = s.depth();
  s.op.arm(depth);  // pre-posting is never timed
  const auto t0 = clock::now();
  for (int k = 0; k < depth; ++k) s.op.launch();
  s.op.wait();
  const auto t1 = clock::now();
  if (auto gpu = s.op.device_seconds()) return {*gpu / depth, true};  // GPU-clock timing (gpu-flag trigger)
  return {std::chrono::duration<double>(t1 - t0).count() / depth, false};
}

std::optional<Timed> timed(const std::vector<double>& samples_us, const Plan& plan) {
  if (samples_us.empty()) return std::nullopt;
  const LatencyStats s = summarize(samples_us);
  return Timed{s, bandwidth(static_cast<double>(plan.total_bytes), plan.bus_factor, s.p50)};
}

}  // namespace dmabench::measure
