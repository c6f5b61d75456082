#pragma once
// The run settings: how each case of a config is run (its warm-up, its samples, the operations in one sample, what
// else is measured after its timed samples), as the config gives them. The config holds one value
// (Config::run, bench/config/config.hpp) and every case it expands to gets that value whole (Case::run,
// bench/cases/cases.hpp): no setting is copied into a case field by field, and none is changed on the way. What
// differs per case is derived from it, each by one Case function: ops_per_sample() (the pipeline depth when
// pipelined, 1 when oneshot), timed_iterations() (`iterations`, fewer where max_timed_bytes caps them) and
// breakdown_applies() (where the pattern has the breakdown, Pattern::has_breakdown, and the timing is oneshot).
//
// A new run setting is one field here, its key, parse and echo in bench/config/config_run.cpp, and nothing else
// (docs/extending.md, "A new run setting"). This header is in bench/config/, the room below bench/cases/, so both the
// Config and the Case include it without an upward include (docs/design.md, Layout).
#include <cstdint>
#include <optional>

#include "bench/beside/load.hpp"
#include "bench/sampling/sampler.hpp"

namespace dmabench {

// Communication beside compute: the workload an overlap case runs beside, and how long.
struct OverlapConfig {
  beside::Spec compute;
  double duration_ms = 50;  // each compute run lasts at least this long alone
  int rounds = 3;           // alternating compute-alone / compute-with-communication runs
  int min_samples = 20;     // each run lasts at least this many communication samples (alone)
  bool operator==(const OverlapConfig&) const = default;
};

struct RunSettings {
  int warmup = 5;  // "warmup": untimed samples before the timed ones
  // "iterations": timed samples per case (at most, when max_timed_bytes is set; Case::timed_iterations()) where the
  // config gives it (or Google Benchmark's --benchmark_repetitions / --benchmark_min_time keep its own loop); without
  // it, `sampling` is adaptive.
  int iterations = 100;
  // "pipeline_depth": operations per pipelined sample, as configured (a oneshot case's sample is one operation
  // whatever this says: Case::ops_per_sample()).
  int pipeline_depth = 20;
  Sampling sampling;  // fixed (`iterations` given) or adaptive, and max_noise ("max_noise", "min_samples", ...)
  // "max_timed_bytes": byte budget of one case's timed samples: a case whose samples would move more than this
  // (S x operations per sample x iterations) takes fewer samples, down to min_iterations. Unset: every case takes
  // `iterations`. Chosen from bytes, not measured time, so that two runs of one config take the same samples
  // everywhere.
  std::optional<std::uint64_t> max_timed_bytes;
  int min_iterations = 10;  // "min_iterations"
  // "breakdown": the latency breakdown of oneshot copies (needs a copy tracer: CUPTI), as configured; a case measures
  // it where Case::breakdown_applies().
  bool breakdown = false;
  bool keep_samples = false;  // "samples" (or --samples): every timed sample in each record
  // "overlap": every case also runs beside this compute workload (bench/measure/overlap.hpp).
  std::optional<OverlapConfig> overlap;
  bool operator==(const RunSettings&) const = default;
};

}  // namespace dmabench
