#pragma once
// Power and energy of a case's operation (results/SCHEMA.md, "power"): the operation run back to
// back in batches of about 10 ms through one meter window, after the timed samples.
#include <vector>

#include "bench/measure/subject.hpp"
#include "power/meter.hpp"

namespace dmabench::measure {

struct Power {
  power::Measurement window;  // the meter's window (or the engine's error, in window.error)
  int ops_per_batch = 0;  // 0: no batch ran (the engine failed before the window)
};

// One window on `channels`, batches sized from the case's p50 (µs per operation) and the largest
// batch the engine takes. Never throws: a failure is recorded in `window`.
Power measure_power(const Subject& s, power::Meter& meter, const std::vector<int>& channels, double p50_us);

}  // namespace dmabench::measure
