#include "bench/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace dmabench::verdict {
namespace {

constexpr std::size_t kExactSmallSide = 12, kExactTotal = 40;

// Mid-ranks (1-based, ties averaged) of `v` in its order, doubled so that they are integers.
std::vector<long> doubled_ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<long> out(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) out[order[k]] = static_cast<long>(i + j + 2);
    i = j + 1;
  }
  return out;
}

// (P(W <= w), P(W >= w)) for W the sum of m of `scores`, every subset equally likely: subsets counted by sum (a
// dynamic program; counts as doubles, exact to their 53 bits, far below what a p-value needs).
std::pair<double, double> exact_tails(const std::vector<long>& scores, std::size_t m, long w) {
  std::vector<std::map<long, double>> counts(m + 1);
  counts[0][0] = 1;
  for (long s : scores)
    for (std::size_t k = m; k > 0; --k)
      for (const auto& [total, n] : counts[k - 1]) counts[k][total + s] += n;
  double low = 0, high = 0, all = 0;
  for (const auto& [total, n] : counts[m]) {
    all += n;
    if (total <= w) low += n;
    if (total >= w) high += n;
  }
  return {low / all, high / all};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double a = v[(v.size() - 1) / 2], b = v[v.size() / 2];
  return a == b ? a : a + (b - a) / 2;
}

}  // namespace

RankSum rank_sum_test(const std::vector<double>& base, const std::vector<double>& next) {
  const std::size_t m = next.size(), n = base.size();
  if (m == 0 || n == 0) return {};
  std::vector<double> all(next);
  all.insert(all.end(), base.begin(), base.end());
  const std::vector<long> r = doubled_ranks(all);
  const long w = std::accumulate(r.begin(), r.begin() + static_cast<long>(m), 0L);
  const long mean2 = static_cast<long>(m * (m + n + 1));
  const int direction = (w > mean2) - (w < mean2);
  if (std::min(m, n) <= kExactSmallSide || m + n <= kExactTotal) {
    const auto [low, high] = exact_tails(r, m, w);
    return {std::min(1.0, 2 * std::min(low, high)), direction};
  }
  std::map<long, double> ties;
  for (long x : r) ties[x] += 1;
  const double big = static_cast<double>(m + n);
  double tie_sum = 0;
  for (const auto& [_, t] : ties) tie_sum += t * t * t - t;
  const double var = static_cast<double>(m * n) / 12 * ((big + 1) - tie_sum / (big * (big - 1)));
  if (var <= 0) return {1.0, 0};
  const double z = std::max(0.0, std::abs(static_cast<double>(w - mean2)) - 1) / 2 / std::sqrt(var);
  return {std::min(1.0, std::erfc(z / std::sqrt(2.0))), direction};
}

double shift(const std::vector<double>& base, const std::vector<double>& next) {
  std::vector<double> logs;
  for (double a : next)
    for (double b : base) logs.push_back(std::log(a / b));
  return std::exp(median(logs)) - 1;
}

std::vector<bool> benjamini_hochberg(const std::vector<double>& p, double alpha) {
  std::vector<std::size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::size_t last = 0;
  for (std::size_t rank = 1; rank <= order.size(); ++rank)
    if (p[order[rank - 1]] <= alpha * static_cast<double>(rank) / static_cast<double>(p.size())) last = rank;
  std::vector<bool> out(p.size(), false);
  for (std::size_t i = 0; i < last; ++i) out[order[i]] = true;
  return out;
}

std::vector<Judged> judge_all(const std::vector<Case>& cases, double alpha) {
  std::vector<RankSum> tests;
  std::vector<double> ps;
  for (const Case& c : cases) {
    tests.push_back(rank_sum_test(c.base, c.next));
    ps.push_back(tests.back().p);
  }
  const std::vector<bool> supported = benjamini_hochberg(ps, alpha);
  std::vector<Judged> out;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Judged j;
    j.change = cases[i].base.empty() || cases[i].next.empty() ? 0 : shift(cases[i].base, cases[i].next);
    j.p = tests[i].p;
    j.supported = supported[i];
    j.min_change = cases[i].launch_bound ? kLaunchBoundMinChange : kBandwidthBoundMinChange;
    if (std::abs(j.change) <= j.min_change) j.verdict = "same";
    else if (j.supported && tests[i].direction == (j.change > 0 ? 1 : -1)) j.verdict = j.change > 0 ? "slower" : "faster";
    else j.verdict = "ambiguous";
    out.push_back(j);
  }
  return out;
}

}  // namespace dmabench::verdict
