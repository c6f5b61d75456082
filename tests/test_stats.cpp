#include <cmath>

#include <gtest/gtest.h>

#include "bench/patterns/pattern.hpp"
#include "bench/stats.hpp"

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
