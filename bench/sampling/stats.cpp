#include "bench/sampling/stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace dmabench {
namespace {

// Where percentile q of n sorted values lies: between indices lo and hi, `frac` of the way.
struct Position {
  std::size_t lo = 0, hi = 0;
  double frac = 0;
};
Position position(std::size_t n, double q) {
  const double pos = q * static_cast<double>(n - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  return {lo, std::min(lo + 1, n - 1), pos - static_cast<double>(lo)};
}

double interpolated(const std::vector<double>& values, const Position& at) {
  return values[at.lo] + (values[at.hi] - values[at.lo]) * at.frac;
}

// Puts at each index of `at` (ascending) the value a sort would put there: a selection from the largest index
// down, each within the part below the previous one (std::nth_element leaves nothing larger there).
void select(std::vector<double>& values, const std::vector<std::size_t>& at) {
  auto end = values.end();
  for (auto i = at.rbegin(); i != at.rend(); ++i) {
    const auto nth = values.begin() + static_cast<std::ptrdiff_t>(*i);
    if (nth == end) continue;  // the same index twice: in place already
    std::nth_element(values.begin(), nth, end);
    end = nth;
  }
}

}  // namespace

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile of no samples");
  return interpolated(sorted, position(sorted.size(), q));
}

std::optional<MedianRanks> median_ranks(std::size_t n) {
  if (n < 6) return std::nullopt;
  std::size_t j = 0;
  if (n <= kExactMedianRanks) {
    double pmf = std::ldexp(1.0, -static_cast<int>(n));  // P(B = 0); 2^-1000 is still a normal double
    for (double cdf = pmf; cdf <= 0.025; cdf += pmf) {    // cdf = P(B <= j)
      pmf *= static_cast<double>(n - j) / static_cast<double>(j + 1);
      ++j;
    }
  } else {  // P(B <= j - 1) ~ Phi((j - 1/2 - n/2) / (sqrt(n)/2)) <= 0.025, z(0.975) = 1.959964
    j = static_cast<std::size_t>(std::floor(static_cast<double>(n) / 2 + 0.5 - 1.959964 / 2 * std::sqrt(static_cast<double>(n))));
  }
  return MedianRanks{j, n + 1 - j};
}

double MedianInterval::noise() const {
  const double half = std::max(p50 - low, high - p50);
  if (p50 > 0) return half / p50;
  return half > 0 ? std::numeric_limits<double>::infinity() : 0.0;
}

MedianInterval median_interval(std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("median interval of no samples");
  const std::size_t n = samples.size();
  const Position mid = position(n, 0.5);
  const auto ranks = median_ranks(n);
  const std::size_t low = ranks ? ranks->low - 1 : 0, high = ranks ? ranks->high - 1 : n - 1;
  select(samples, {low, mid.lo, mid.hi, high});
  return MedianInterval{interpolated(samples, mid), samples[low], samples[high], ranks.has_value()};
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
