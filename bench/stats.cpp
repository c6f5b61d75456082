#include "bench/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace dmabench {

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile of no samples");
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of an empty list");
  std::sort(values.begin(), values.end());
  return percentile(values, 0.5);
}

LatencyStats summarize(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("statistics of no samples");
  std::sort(samples.begin(), samples.end());
  LatencyStats s;
  s.count = samples.size();
  s.min = samples.front();
  s.max = samples.back();
  s.p50 = percentile(samples, 0.50);
  s.p95 = percentile(samples, 0.95);
  s.p99 = percentile(samples, 0.99);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(s.count);
  if (s.count > 1) {
    double sq = 0;
    for (double v : samples) sq += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(sq / static_cast<double>(s.count - 1));
  }
  return s;
}

Bandwidth bandwidth(double total_bytes, double bus_factor, double time_us) {
  if (!(time_us > 0)) throw std::invalid_argument("bandwidth needs a positive time");
  Bandwidth b;
  b.algbw_GBps = total_bytes / (time_us * 1e-6) / 1e9;
  b.busbw_GBps = b.algbw_GBps * bus_factor;
  return b;
}

}  // namespace dmabench
