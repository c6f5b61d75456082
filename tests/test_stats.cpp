#include <cmath>
#include <random>
#include <tuple>

#include <gtest/gtest.h>

#include "patterns/pattern.hpp"
#include "bench/sampling/stats.hpp"

using namespace dmabench;

TEST(Stats, PercentilesInterpolateLinearly) {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_DOUBLE_EQ(percentile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile(v, 1.0), 10.0);
  EXPECT_DOUBLE_EQ(percentile(v, 0.5), 5.5);     // position 4.5
  EXPECT_DOUBLE_EQ(percentile(v, 0.95), 9.55);   // position 8.55
  EXPECT_DOUBLE_EQ(percentile(v, 0.99), 9.91);   // position 8.91
  EXPECT_DOUBLE_EQ(percentile({7.0}, 0.99), 7.0);
  EXPECT_THROW(percentile({}, 0.5), std::invalid_argument);
}

TEST(Stats, SummaryOfUnsortedSamples) {
  const LatencyStats s = summarize({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_DOUBLE_EQ(s.p95, 3.85);  // position 2.85
  // sample stddev: sqrt(((1.5^2)*2 + (0.5^2)*2) / 3) = sqrt(5/3)
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(5.0 / 3.0));
  EXPECT_DOUBLE_EQ(summarize({2.0}).stddev, 0.0);
  EXPECT_THROW(summarize({}), std::invalid_argument);
}

TEST(Stats, BandwidthFollowsNcclTests) {
  // 1 GiB all-gather per rank on 8 ranks in 10 ms: S = 8 GiB.
  const Plan ag = allgather_pattern().plan({0, 1, 2, 3, 4, 5, 6, 7}, std::size_t{1} << 30);
  Bandwidth b = bandwidth(static_cast<double>(ag.total_bytes), ag.bus_factor, 10000.0);
  EXPECT_NEAR(b.algbw_GBps, 8.0 * 1073741824.0 / 0.01 / 1e9, 1e-9);  // 858.993...
  EXPECT_NEAR(b.busbw_GBps, b.algbw_GBps * 7.0 / 8.0, 1e-9);
  // copy: 256 MiB in 680 us -> 394.7 GB/s, busbw = algbw
  const Plan cp = copy_pattern().plan({0, 1}, std::size_t{256} << 20);
  b = bandwidth(static_cast<double>(cp.total_bytes), cp.bus_factor, 680.0);
  EXPECT_NEAR(b.algbw_GBps, 268435456.0 / 680e-6 / 1e9, 1e-9);
  EXPECT_DOUBLE_EQ(b.busbw_GBps, b.algbw_GBps);
  // bidir counts both directions: 2 x 1 MiB in 10 us
  const Plan bd = bidir_pattern().plan({0, 1}, 1 << 20);
  EXPECT_NEAR(bandwidth(static_cast<double>(bd.total_bytes), bd.bus_factor, 10.0).algbw_GBps, 2.0 * 1048576 / 10e-6 / 1e9, 1e-9);
  // alltoall on 2 ranks, 1 KiB per block: S = 2 KiB, busbw = algbw / 2
  const Plan a2a = alltoall_pattern().plan({0, 1}, 1024);
  b = bandwidth(static_cast<double>(a2a.total_bytes), a2a.bus_factor, 2.048);
  EXPECT_NEAR(b.algbw_GBps, 1.0, 1e-12);
  EXPECT_NEAR(b.busbw_GBps, 0.5, 1e-12);
  EXPECT_THROW(bandwidth(1, 1, 0), std::invalid_argument);
}

TEST(Stats, MedianOfAnyOrder) {
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median({7.0}), 7.0);
  EXPECT_THROW(median({}), std::invalid_argument);
}

// The p50's 95% interval from order statistics: ranks j, k = n + 1 - j with 1 - 2 P(B <= j - 1) >= 0.95, B ~ binomial(n, 1/2).
TEST(MedianInterval, ExactRanksForSmallSamplesByHand) {
  for (std::size_t n = 0; n < 6; ++n) EXPECT_FALSE(median_ranks(n)) << n;  // 5: [min, max] covers 1 - 2/32 = 93.75%
  // n = 6, 7, 8: P(B <= 0) = 1/64, 1/128, 1/256 <= 0.025 and P(B <= 1) = 7/64, 8/128, 9/256 > 0.025: j = 1
  // n = 9: P(B <= 1) = 10/512 = 0.0195, P(B <= 2) = 46/512 = 0.0898: j = 2
  // n = 10: P(B <= 1) = 11/1024 = 0.0107, P(B <= 2) = 56/1024 = 0.0547: j = 2
  // n = 20: P(B <= 5) = 21700/2^20 = 0.0207, P(B <= 6) = 60460/2^20 = 0.0577: j = 6
  // n = 50: P(B <= 17) = 0.0164, P(B <= 18) = 0.0325: j = 18
  const std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> want = {
      {6, 1, 6}, {7, 1, 7}, {8, 1, 8}, {9, 2, 8}, {10, 2, 9}, {20, 6, 15}, {50, 18, 33}};
  for (const auto& [n, j, k] : want) {
    const auto r = median_ranks(n);
    ASSERT_TRUE(r) << n;
    EXPECT_EQ(r->low, j) << n;
    EXPECT_EQ(r->high, k) << n;
  }
}

namespace {

// The largest j with P(B <= j - 1) <= 0.025, B ~ binomial(n, 1/2), summed in logarithms (any n).
std::size_t exact_low_rank(std::size_t n) {
  double log_pmf = -static_cast<double>(n) * std::log(2.0), cdf = 0;
  std::size_t j = 0;
  for (std::size_t i = 0; i <= n / 2; ++i) {
    if (i > 0) log_pmf += std::log(static_cast<double>(n - i + 1)) - std::log(static_cast<double>(i));
    cdf += std::exp(log_pmf);
    if (cdf > 0.025) break;
    j = i + 1;
  }
  return j;
}

}  // namespace

// Up to kExactMedianRanks the ranks are exact; above it the normal approximation is never narrower than exact
// (coverage stays at least 95%) and at most one rank wider.
TEST(MedianInterval, NormalApproximationAgainstExactBinomial) {
  for (std::size_t n = 6; n <= kExactMedianRanks; ++n) ASSERT_EQ(median_ranks(n)->low, exact_low_rank(n)) << n;
  std::size_t wider = 0, checked = 0;
  for (std::size_t n = kExactMedianRanks + 1; n <= 100000; n += (n < 5000 ? 1 : 97)) {
    const std::size_t exact = exact_low_rank(n), approx = median_ranks(n)->low;
    ASSERT_LE(approx, exact) << n;  // never narrower
    ASSERT_GE(approx + 1, exact) << n;
    EXPECT_EQ(median_ranks(n)->high, n + 1 - approx);
    wider += approx < exact;
    ++checked;
  }
  EXPECT_LT(wider, checked / 10) << "the approximation is one rank wide too often";
}

// 2000 draws of 50 samples of an exponential distribution (median ln 2): the interval holds the true median in
// 1 - 2 P(B <= 17) = 96.7% of them (j = 18 of 50), within 4 standard deviations of 2000 draws (+-1.6%).
TEST(MedianInterval, CoversTheTrueMedianAsOftenAsPromised) {
  std::mt19937_64 rng(20260);
  const double true_median = std::log(2.0);
  int covered = 0;
  constexpr int kDraws = 2000;
  for (int d = 0; d < kDraws; ++d) {
    std::vector<double> x(50);
    for (double& v : x) v = -std::log1p(-static_cast<double>(rng() >> 11) * 0x1.0p-53);  // u in [0, 1)
    const MedianInterval m = median_interval(x);
    covered += m.low <= true_median && true_median <= m.high;
  }
  const double coverage = static_cast<double>(covered) / kDraws;
  EXPECT_NEAR(coverage, 0.9672, 0.016) << covered << " of " << kDraws;
}

TEST(MedianInterval, P50AndNoiseOfAnyOrder) {
  std::vector<double> v;
  for (int i = 1; i <= 10; ++i) v.push_back(static_cast<double>((i * 7) % 11));  // 7 3 10 6 2 9 5 1 8 4: 1..10
  const MedianInterval m = median_interval(v);
  EXPECT_DOUBLE_EQ(m.p50, summarize(v).p50);  // 5.5
  EXPECT_DOUBLE_EQ(m.low, 2);                 // ranks 2 and 9 of 10
  EXPECT_DOUBLE_EQ(m.high, 9);
  EXPECT_TRUE(m.has_95);
  EXPECT_DOUBLE_EQ(m.noise(), 3.5 / 5.5);
  // below 6 samples: [min, max], no 95% interval
  const MedianInterval few = median_interval({4, 2, 3});
  EXPECT_FALSE(few.has_95);
  EXPECT_DOUBLE_EQ(few.low, 2);
  EXPECT_DOUBLE_EQ(few.high, 4);
  EXPECT_DOUBLE_EQ(few.noise(), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(median_interval({5.0}).noise(), 0);
  EXPECT_TRUE(std::isinf(median_interval({0, 0, 0, 0, 0, 0, 0, 1}).noise()));  // p50 0, a width
  EXPECT_THROW(median_interval({}), std::invalid_argument);
  // the same p50 as summarize() on every size, odd and even, with duplicates
  for (int n = 1; n < 40; ++n) {
    std::vector<double> w;
    for (int i = 0; i < n; ++i) w.push_back(static_cast<double>((i * 13) % 7) + 0.25 * i);
    EXPECT_DOUBLE_EQ(median_interval(w).p50, summarize(w).p50) << n;
  }
}
