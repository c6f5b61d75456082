#include "bench/measure/power.hpp"

#include <algorithm>
#include <exception>

namespace dmabench::measure {
namespace {
constexpr double kBatchSeconds = 10e-3;  // target length of one batch in a power window
}  // namespace

Power measure_power(const Subject& s, power::Meter& meter, const std::vector<int>& channels, double p50_us) {
  // Batches launched back to back (the meter reads the counters on its own thread): the devices
  // drain only for the moment between one batch's completion and the next launch.
  Power p;
  try {
    int k = static_cast<int>(std::clamp(kBatchSeconds / std::max(p50_us * 1e-6, 1e-9), 1.0, 4096.0));
    // the largest batch the engine takes (gpu-flag: one operation; pre-posting: a bounded queue)
    while (k > 1 && s.engine.unsupported(s.plan, s.options, k)) k /= 2;
    const power::Batch batch{.arm = [&] { s.op.arm(k); },
                             .run = [&] {
                               for (int i = 0; i < k; ++i) s.op.launch();
                               s.op.wait();
                               return k;
                             }};
    p.window = meter.measure(channels, batch, static_cast<double>(s.plan.total_bytes), s.spec.name());
    p.ops_per_batch = k;
  } catch (const std::exception& e) {  // the meter catches its own errors; this is the engine's
    p.window = power::Measurement{};
    p.window.source = meter.source().name();
    p.window.error = e.what();
  }
  return p;
}

}  // namespace dmabench::measure
