#pragma once
// Communication beside compute (results/SCHEMA.md, "overlap"): the case's operation sampled while
// a compute workload runs on its devices, against each alone; the data validated again beside it.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/measure/subject.hpp"
#include "bench/sampling/stats.hpp"
#include "bench/beside/load.hpp"

namespace dmabench::measure {

struct OverlapTimes {
  double compute_alone_ms = 0;  // the workload alone (device clock)
  double compute_with_ms = 0;   // the same workload while the communication runs
  double comm_alone_us = 0;     // one communication operation alone (the case's clock)
  double comm_with_us = 0;      // one operation while the workload runs
  double comm_ops_with = 0;     // operations completed while the workload ran
};

struct OverlapFigures {
  double compute_slowdown_pct = 0;  // (with / alone - 1) x 100
  double comm_slowdown_pct = 0;
  // The share of the shorter activity hidden behind the longer: with C = compute alone,
  // M = comm_ops_with x comm alone (the communication's own time for the work it did) and
  // T = compute with (both ran together for this long), (C + M - T) / min(C, M), clamped to
  // [0, 1]: 1 = fully hidden (T = max(C, M)), 0 = serialized (T = C + M).
  double overlap_efficiency = 0;
};

// Pure arithmetic; throws std::invalid_argument when an alone time is not positive.
OverlapFigures overlap_figures(const OverlapTimes& t);

struct Overlap {
  beside::Spec workload;
  std::optional<nlohmann::json> workload_details;  // once the workload exists (Load::details)
  std::optional<int> rounds, launches;             // once the runs are sized
  std::string error;                               // non-empty: not measured, and why
  std::optional<bool> validated;                   // false: the data was wrong beside the workload
  std::string validation_error;                    // what was wrong, when validated is false
  // Measured (validated is true):
  double rate_alone = 0, rate_with = 0;  // the workload's rate in workload.rate_unit()
  OverlapTimes times;
  OverlapFigures figures;
  std::vector<double> compute_alone_ms_per_device, compute_with_ms_per_device;
  double comm_alone_p99_us = 0;
  LatencyStats comm_with_us;
  int comm_samples_dropped = 0;
  Bandwidth with_bandwidth;
  bool gpu_clock = false;  // the communication samples' clock
};

// `rounds` runs of the workload alone alternating with runs during which the operation is sampled
// back to back, then one more validation while the workload runs. `alone` are the case's timed
// samples' statistics. Never throws: a runtime error is the result's error.
Overlap measure_overlap(const Subject& s, const OverlapConfig& config, const std::function<beside::Load&()>& workload,
                        const LatencyStats& alone);

}  // namespace dmabench::measure
