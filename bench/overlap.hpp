#pragma once
// Communication beside compute: what an overlap case is configured with, and the arithmetic that
// turns its measured times into slowdowns and an overlap efficiency (pure, unit-tested).

#include "compute/load.hpp"

namespace dmabench {

struct OverlapConfig {
  compute::Spec compute;
  double duration_ms = 50;  // each compute run lasts at least this long alone
  int rounds = 3;           // alternating compute-alone / compute-with-communication runs
  int min_samples = 20;     // each run lasts at least this many communication samples (alone)
};

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

OverlapFigures overlap_figures(const OverlapTimes& t);

}  // namespace dmabench
