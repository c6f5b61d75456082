#pragma once
// Timing: one timed sample of a case's operation, and the latency and bandwidth of a set of samples
// (results/SCHEMA.md, "Timing").
#include <optional>
#include <vector>

#include "bench/measure/subject.hpp"
#include "bench/sampling/sampler.hpp"
#include "bench/sampling/stats.hpp"

namespace dmabench::measure {

struct Sample {
  double seconds_per_op = 0;
  bool gpu_clock = false;  // timed on the GPU clock (Operation::device_seconds), else the host clock
  // Submit: the host time from the first launch() call to the return of the last, / depth (results/SCHEMA.md,
  // "breakdown"): the CPU time inside the issuing calls per operation. One clock read more than the timing takes.
  double submit_seconds_per_op = 0;
};

// One timed sample: oneshot = one operation launched on every issuing rank and waited for;
// pipelined = depth operations back to back, then one wait, / depth. Arming (pre-posting) is never
// timed. In a multi-process run every process arms, meets the others at a barrier (untimed), times its
// own launches and wait, and the sample is the slowest process's time (results/SCHEMA.md, "Timing"), its submit the
// longest of the processes' submits.
// Throws on runtime errors (in a multi-process run, on every process when one has one).
Sample take_sample(const Subject& s);

struct Timed {
  LatencyStats latency_us;
  Bandwidth bandwidth;          // at the p50
  MedianInterval p50_interval;  // µs: the p50's 95% interval (below 6 samples [min, max])
  // The bandwidth interval: at the p50 interval's high end (S / high, its low end) and low end (S / low, its high
  // end; nullopt where that sample is 0 µs, a clock that did not tick).
  Bandwidth bandwidth_at_high;
  std::optional<Bandwidth> bandwidth_at_low;
  // The interval is wider than the sampling's max_noise allows, or there is none (fewer than 6 samples).
  bool noisy = false;
  Sampling rule;             // the case's sampling rule (its adaptive parameters apply where outcome.adaptive)
  SamplingOutcome outcome;  // how the samples were taken
};
// The submit part of the record's `breakdown` (results/SCHEMA.md): the CPU time inside the issuing calls per
// operation over the timed samples, and the descriptors one operation submits (Operation::descriptors).
struct Submit {
  MedianInterval us;                        // its p50 and the p50's 95% interval (below 6 samples [min, max])
  std::optional<std::size_t> descriptors;  // nullopt: the engine does not count them
};
// Of samples whose submit_us matches us one for one; nullopt otherwise (none taken).
std::optional<Submit> submit_of(const Samples& samples, std::optional<std::size_t> descriptors);

// The statistics of samples (µs per operation) of a plan, taken by `rule`; nullopt for no samples.
std::optional<Timed> timed(const Samples& samples, const Plan& plan, const Sampling& rule);

}  // namespace dmabench::measure
