#pragma once
// Timing: one timed sample of a case's operation, and the latency and bandwidth of a set of samples
// (results/SCHEMA.md, "Timing").
#include <optional>
#include <vector>

#include "bench/measure/subject.hpp"
#include "bench/stats.hpp"

namespace dmabench::measure {

struct Sample {
  double seconds_per_op = 0;
  bool gpu_clock = false;  // timed on the GPU clock (Operation::device_seconds), else the host clock
};

// One timed sample: oneshot = one operation launched on every issuing rank and waited for;
// pipelined = depth operations back to back, then one wait, / depth. Arming (pre-posting) is never
// timed. In a multi-process run every process arms, meets the others at a barrier (untimed), times its
// own launches and wait, and the sample is the slowest process's time (results/SCHEMA.md, "Timing").
// Throws on runtime errors (in a multi-process run, on every process when one has one).
Sample take_sample(const Subject& s);

struct Timed {
  LatencyStats latency_us;
  Bandwidth bandwidth;  // at the p50
};
// The statistics of samples (µs per operation) of a plan; nullopt for no samples.
std::optional<Timed> timed(const std::vector<double>& samples_us, const Plan& plan);

}  // namespace dmabench::measure
