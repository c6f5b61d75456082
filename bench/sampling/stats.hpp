#pragma once
// Latency statistics, the p50's confidence interval and the nccl-tests bandwidth definitions.
#include <cstddef>
#include <optional>
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

// The distribution-free 95% confidence interval of the median from order statistics. With B ~ binomial(n, 1/2)
// the number of samples below the true median, the samples of ranks j and k = n + 1 - j (1-based, ascending)
// enclose it with probability 1 - 2 P(B <= j - 1); j is the largest rank for which that is at least 0.95. Exact
// binomial up to kExactMedianRanks samples, above it the normal approximation with continuity correction (never
// narrower than exact: tests/test_stats.cpp). nullopt below 6 samples: no pair of ranks reaches 95% (5 samples:
// [min, max] holds the median with 1 - 2/32 = 93.75%).
struct MedianRanks {
  std::size_t low = 0, high = 0;  // j and k, 1-based
};
inline constexpr std::size_t kExactMedianRanks = 1000;
std::optional<MedianRanks> median_ranks(std::size_t n);

// The p50 of samples and its 95% interval (median_ranks).
struct MedianInterval {
  double p50 = 0;        // percentile(sorted, 0.5)
  double low = 0, high = 0;
  bool has_95 = false;   // false: fewer than 6 samples, and [low, high] is [min, max]
  // The interval's half-width relative to the p50: max(p50 - low, high - p50) / p50 (infinite where p50 is 0 and
  // the interval has a width).
  double noise() const;
};
// Of samples in any order, by selection (O(n): no sort). Throws std::invalid_argument when empty.
MedianInterval median_interval(std::vector<double> samples);

// algbw = S / t and busbw = algbw * bus_factor, in GB/s (1e9 bytes per second).
struct Bandwidth {
  double algbw_GBps = 0;
  double busbw_GBps = 0;
};
Bandwidth bandwidth(double total_bytes, double bus_factor, double time_us);

}  // namespace dmabench
