#pragma once
// The verdict rule of python/dmabench/verdict.py (compare, history gate, ab), for --check against a reference levels
// file: per case `same`, `slower`, `faster` or `ambiguous` from the per-process p50s of both sides. The rule and its
// assumptions are that module's docstring and docs/methodology.md "How often a verdict is wrong"; the two
// implementations are held to the same answers by one fixture (tests/data/verdict-fixture.json: test_verdict.py and
// test_check.cpp read it).
#include <string>
#include <vector>

namespace dmabench::verdict {

inline constexpr double kAlpha = 0.02;
inline constexpr double kLaunchBoundMinChange = 0.05;
inline constexpr double kBandwidthBoundMinChange = 0.02;

struct RankSum {
  double p = 1;       // two-sided, in (0, 1]
  int direction = 0;  // +1: NEW's draws rank above BASE's (slower), -1 below, 0 level
};
// The Mann-Whitney (Wilcoxon rank-sum) test of NEW's draws against BASE's: exact with ties at mid-ranks where one side
// has at most 12 draws or both at most 40, else the normal approximation with the tie and continuity corrections.
RankSum rank_sum_test(const std::vector<double>& base, const std::vector<double>& next);

// The Hodges-Lehmann estimate of NEW / BASE - 1 (exp of the median of log(n / b) over every pair).
double shift(const std::vector<double>& base, const std::vector<double>& next);

// Which p-values Benjamini-Hochberg rejects at alpha, in their order.
std::vector<bool> benjamini_hochberg(const std::vector<double>& p, double alpha);

struct Case {
  std::vector<double> base, next;  // draws: per-process p50s (µs, > 0)
  bool launch_bound = true;
};
struct Judged {
  std::string verdict;  // slower, faster, ambiguous, same
  double change = 0, p = 1, min_change = 0;
  bool supported = false;
};
// The verdicts of one family of cases (Benjamini-Hochberg over all of them), in their order.
std::vector<Judged> judge_all(const std::vector<Case>& cases, double alpha = kAlpha);

}  // namespace dmabench::verdict
