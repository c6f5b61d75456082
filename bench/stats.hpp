#pragma once
// Latency statistics and the nccl-tests bandwidth definitions.
#include <cstddef>
#include <vector>

namespace dmabench {

struct LatencyStats {
  double min = 0, p50 = 0, mean = 0, p95 = 0, p99 = 0, max = 0;
  double stddev = 0;  // sample standard deviation (n - 1); 0 for one sample
  std::size_t count = 0;
};

// Percentile q in [0, 1] of sorted values, linear interpolation between closest ranks
// (position q * (n - 1); numpy's default "linear" method).
double percentile(const std::vector<double>& sorted, double q);

// Median of a non-empty list (any order). Throws std::invalid_argument when empty.
double median(std::vector<double> values);

// Summary of samples (any order). Throws std::invalid_argument when empty.
LatencyStats summarize(std::vector<double> samples);

// algbw = S / t and busbw = algbw * bus_factor, in GB/s (1e9 bytes per second).
struct Bandwidth {
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};
Bandwidth bandwidth(double total_bytes, double bus_factor, double time_us);

}  // namespace dmabench
