#pragma once
// The stopping rule of a case's timed samples: a fixed count (config `iterations`), or, after nvbench's stopping
// criterion, samples until the p50's 95% interval is tight enough or the case's time runs out (docs/methodology.md,
// "How many samples"). Pure logic: the samples come from a function and the time from a clock, both given by the
// caller (the program: the case's operation and the steady clock; the tests: scripted ones).
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

namespace dmabench {

// How a case's timed samples are taken: the config's `iterations` (fixed), or its adaptive keys.
struct Sampling {
  bool adaptive = false;    // false: exactly Case::timed_iterations() samples
  double max_noise = 0.01;  // the p50's 95% half-width over the p50 at which adaptive sampling may stop; in either
                            // mode, a case whose interval is wider is `noisy`
  int min_samples = 10;     // adaptive: never fewer samples
  double min_time_s = 0;    // adaptive: never less sampling time before the noise may stop it
  double max_time_s = 1.0;  // adaptive: stop after this much sampling time (once min_samples are taken)
  int max_samples = 100000;  // adaptive: never more samples
  bool operator==(const Sampling&) const = default;
};

// Why a sampling stopped: the noise target reached, the time or the sample cap run out (adaptive), or the
// fixed count taken.
enum class Stop { noise, max_time, max_samples, iterations };
std::string_view to_string(Stop s);

// How a case's samples were taken.
struct SamplingOutcome {
  bool adaptive = false;
  Stop stopped = Stop::iterations;
  // Wall time of the sampling, from the start of its first sample to the end of its last: the untimed arming
  // and (multi-process runs) barriers between samples included, the warm-up not.
  double seconds = 0;
};

struct Samples {
  std::vector<double> us;  // µs per operation, in the order taken
  std::vector<double> core_ratios;  // the core-share reading before each sample (measure/core_share.hpp), same order
  std::vector<double> submit_us;  // µs inside the launch calls per operation (measure::Sample), same order
  SamplingOutcome outcome;
};

// The steady (monotonic) clock in seconds.
double steady_seconds();

// The adaptive rule's decision after each sample (multi-process runs: every process's decision, agreed, so that all
// stop after the same sample; one process alone takes its own). Collective where it is.
using AgreeStop = std::function<std::optional<Stop>(std::optional<Stop> mine)>;

// Takes a case's timed samples; `sample()` returns one timed sample's seconds per operation, `clock()` the time in
// seconds. Fixed (!rule.adaptive): exactly `iterations` samples, stopped "iterations". Adaptive, after every sample
// with n samples taken and `elapsed` seconds since the first began:
//   1. n >= min_samples, elapsed >= min_time and the p50's noise (MedianInterval::noise; infinite below 6 samples)
//      <= max_noise: "noise". The noise is judged on a growing schedule, not after every sample: at min_samples,
//      then every n/16 samples (at least every sample), and at the last sample before a cap stops it;
//   2. n == max_samples: "max_samples";
//   3. n >= min_samples and elapsed >= max_time: "max_time".
// Throws what sample() throws.
Samples take_samples(const std::function<double()>& sample, const Sampling& rule, int iterations,
                     const std::function<double()>& clock = steady_seconds, const AgreeStop& agree = {});

}  // namespace dmabench
