// bench/output/progress.hpp: the [k/N] progress line, driven by a fake clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "bench/output/progress.hpp"

using namespace dmabench;

namespace {

// A clock the test moves by hand.
struct FakeClock {
  double now_s = 100.0;  // not 0: the line's times are from the first reading
  Progress::Clock clock() {
    return [this] { return now_s; };
  }
};

}  // namespace

TEST(Progress, DurationsAreSecondsMinutesOrHours) {
  EXPECT_EQ(format_duration(0), "0s");
  EXPECT_EQ(format_duration(-5), "0s");
  EXPECT_EQ(format_duration(45.9), "45s");
  EXPECT_EQ(format_duration(59.99), "59s");
  EXPECT_EQ(format_duration(60), "1m00s");
  EXPECT_EQ(format_duration(192), "3m12s");
  EXPECT_EQ(format_duration(3599), "59m59s");
  EXPECT_EQ(format_duration(3600), "1h00m");
  EXPECT_EQ(format_duration(3900), "1h05m");
  EXPECT_EQ(format_duration(100 * 3600 + 59), "100h00m");
}

TEST(Progress, QuietForTheFirstSecondsEvenAtTheLastCase) {
  FakeClock t;
  Progress p(10, /*terminal=*/false, t.clock());
  for (std::size_t k = 1; k <= 9; ++k) {
    t.now_s += 0.3;
    EXPECT_EQ(p.case_done(k, "c"), "") << k;
  }
  t.now_s = 103.0;  // exactly 3 s: still quiet
  EXPECT_EQ(p.case_done(10, "last"), "");
  EXPECT_EQ(p.clear(), "");
}

TEST(Progress, LogLineSaysElapsedAndEstimatedRemainder) {
  FakeClock t;
  Progress p(40, /*terminal=*/false, t.clock());
  t.now_s += 12.0;
  // 4 cases in 12 s: 3 s each, 36 left -> ~108 s
  EXPECT_EQ(p.case_done(4, "copy/host/oneshot/dev=0,1/4KiB"),
            "[4/40] 12s elapsed, ~1m48s left: copy/host/oneshot/dev=0,1/4KiB\n");
  t.now_s += 1.0;  // 13 s, 5 cases: ~91 s
  EXPECT_EQ(p.case_done(5, "b"), "[5/40] 13s elapsed, ~1m31s left: b\n");
}

TEST(Progress, LongSweepsSayHours) {
  FakeClock t;
  Progress p(1000, /*terminal=*/false, t.clock());
  t.now_s += 65.0;
  EXPECT_EQ(p.case_done(10, "x"), "[10/1000] 1m05s elapsed, ~1h47m left: x\n");  // 6.5 s x 990 = 6435 s
}

TEST(Progress, LogLinesAtMostOnePerSecondAndAlwaysTheLast) {
  FakeClock t;
  Progress p(100, /*terminal=*/false, t.clock());
  t.now_s += 4.0;
  EXPECT_NE(p.case_done(1, "a"), "");
  int lines = 0;
  for (std::size_t k = 2; k < 100; ++k) {  // 98 cases in 0.98 s: none due
    t.now_s += 0.01;
    lines += !p.case_done(k, "a").empty();
  }
  EXPECT_EQ(lines, 0);
  t.now_s += 0.001;
  EXPECT_EQ(p.case_done(100, "z"), "[100/100] 4s elapsed, done: z\n");
  EXPECT_EQ(p.clear(), "");  // not a terminal: nothing to erase
}

TEST(Progress, EveryCaseOnceASecondApart) {
  FakeClock t;
  Progress p(3, /*terminal=*/false, t.clock());
  t.now_s += 5.0;
  EXPECT_EQ(p.case_done(1, "a"), "[1/3] 5s elapsed, ~10s left: a\n");
  t.now_s += 1.0;
  EXPECT_EQ(p.case_done(2, "b"), "[2/3] 6s elapsed, ~3s left: b\n");
}

TEST(Progress, TerminalRedrawsInPlaceWithoutNewline) {
  FakeClock t;
  Progress p(2, /*terminal=*/true, t.clock());
  EXPECT_EQ(p.clear(), "");  // nothing drawn yet
  t.now_s += 10.0;
  EXPECT_EQ(p.case_done(1, "a"), "\r[1/2] 10s elapsed, ~10s left: a\x1b[K");
  EXPECT_EQ(p.clear(), "\r\x1b[K");
  t.now_s += 0.01;  // the last case: drawn however soon
  EXPECT_EQ(p.case_done(2, "b"), "\r[2/2] 10s elapsed, done: b\x1b[K");
}

TEST(Progress, TerminalRedrawIsThrottledAndCutToTheWidth) {
  FakeClock t;
  Progress p(10, /*terminal=*/true, t.clock(), /*columns=*/20);
  t.now_s += 4.0;
  const std::string line = p.case_done(1, "a-very-long-case-name-that-wraps");
  EXPECT_EQ(line, "\r[1/10] 4s elapsed, \x1b[K");  // 19 characters between "\r" and the erase
  t.now_s += 0.05;
  EXPECT_EQ(p.case_done(2, "b"), "");  // within 0.1 s of the last redraw
  t.now_s += 0.06;
  EXPECT_NE(p.case_done(3, "c"), "");
}

TEST(Progress, DefaultClockIsSteadyAndQuietAtFirst) {
  Progress p(1, /*terminal=*/false);
  EXPECT_EQ(p.case_done(1, "fast"), "");  // a sweep of one quick case: quiet
}

// The estimate is of the work, not the case count: a sweep whose last cases are the heaviest (here the last 2 of
// 10 hold 90% of the work) is not "~0s left" when most of its cases, but little of its work, are done.
TEST(Progress, TheRemainderIsOfTheWorkNotTheCases) {
  std::vector<double> work(8, 1.0);
  work.push_back(36.0);
  work.push_back(36.0);
  FakeClock t;
  Progress by_work(work, /*terminal=*/false, t.clock());
  FakeClock u;
  Progress by_cases(10, /*terminal=*/false, u.clock());
  t.now_s += 10.0;  // 8 light cases in 10 s: 8 of 80 units of work
  u.now_s += 10.0;
  EXPECT_EQ(by_cases.case_done(8, "light"), "[8/10] 10s elapsed, ~2s left: light\n");  // the old estimate
  EXPECT_EQ(by_work.case_done(8, "light"), "[8/10] 10s elapsed, ~1m30s left: light\n");  // 10 s x 72 / 8
  t.now_s += 45.0;  // 55 s, 44 of 80: 55 x 36 / 44 = 45 s
  EXPECT_EQ(by_work.case_done(9, "heavy"), "[9/10] 55s elapsed, ~45s left: heavy\n");
  t.now_s += 45.0;
  EXPECT_EQ(by_work.case_done(10, "heavy"), "[10/10] 1m40s elapsed, done: heavy\n");
}

TEST(Progress, WorkThatSumsToNothingWeighsEveryCaseTheSame) {
  FakeClock t;
  Progress p(std::vector<double>{0, -1, 0, 0}, /*terminal=*/false, t.clock());
  t.now_s += 12.0;
  EXPECT_EQ(p.case_done(2, "b"), "[2/4] 12s elapsed, ~12s left: b\n");
}

// Issue 52: the estimate is learned from the cases that finished. Here the plan says a "big" case is twice a "small"
// one, but it takes ten times as long: once one big case finished, the big ones left take its time (the work-rate
// estimate alone said ~14s for 30 s to go).
TEST(Progress, CasesLeftTakeTheMeanTimeOfTheirFinishedClass) {
  std::vector<Progress::Planned> plan;
  for (int i = 0; i < 4; ++i) plan.push_back({1.0, "small", "s" + std::to_string(i)});
  for (int i = 0; i < 4; ++i) plan.push_back({2.0, "big", "b" + std::to_string(i)});
  FakeClock t;
  Progress p(plan, /*terminal=*/false, t.clock());
  for (std::size_t k = 1; k <= 4; ++k) {
    t.now_s += 1.0;
    p.case_done(k, plan[k - 1].name);
  }
  // no big case finished yet: 8 units at the small cases' rate (1 s per unit)
  EXPECT_DOUBLE_EQ(p.remaining_s(), 8.0);
  t.now_s += 10.0;
  EXPECT_EQ(p.case_done(5, "b0"), "[5/8] 14s elapsed, ~30s left; running b1 (0s)\n");
  EXPECT_DOUBLE_EQ(p.remaining_s(), 30.0);
  std::vector<double> work;  // the estimate of the planned work alone: 14 s x 6 units left / 6 done = 14 s
  for (const auto& c : plan) work.push_back(c.work);
  FakeClock u;
  Progress by_work(work, /*terminal=*/false, u.clock());
  u.now_s += 14.0;
  EXPECT_EQ(by_work.case_done(5, "b0"), "[5/8] 14s elapsed, ~14s left: b0\n");
}

// The remainder is summed a class at a time (O(classes) a line, not O(cases)): the same as the rule applied case by
// case — a class with finished cases at its mean, other planned cases at the finished work's rate, cases beyond the
// plan at the mean finished case — at every step of a sweep of mixed classes, zero work and uneven times.
TEST(Progress, TheRemainderByClassesIsTheRuleCaseByCase) {
  std::vector<Progress::Planned> plan;
  const char* groups[] = {"", "a", "b", "c", "skip"};
  for (int i = 0; i < 120; ++i) plan.push_back({(i % 7 == 0) ? 0.0 : 0.5 + (i * 37 % 11), groups[i * 13 % 5], ""});
  FakeClock t;
  Progress p(plan, /*terminal=*/false, t.clock());
  std::vector<double> took;  // each finished case's seconds
  auto rule = [&](std::size_t i) {  // predicted_s(i), case by case, from the finished cases
    double sum_s = 0, work = 0, group_s = 0;
    std::size_t group_n = 0;
    for (std::size_t j = 0; j < took.size(); ++j) {
      sum_s += took[j];
      work += plan[j].work;
      if (!plan[i].group.empty() && plan[j].group == plan[i].group) {
        group_s += took[j];
        ++group_n;
      }
    }
    if (group_n > 0) return group_s / static_cast<double>(group_n);
    if (work > 0) return plan[i].work * sum_s / work;
    return took.empty() ? 0.0 : sum_s / static_cast<double>(took.size());
  };
  for (std::size_t k = 1; k <= plan.size(); ++k) {
    const double dt = 0.25 + static_cast<double>(k * 29 % 17);
    t.now_s += dt;
    took.push_back(dt);
    p.case_done(k, "x");
    if (k == plan.size()) break;
    t.now_s += 0.5;  // the running case, half a second in
    double want = std::max(0.0, rule(k) - 0.5);
    for (std::size_t i = k + 1; i < plan.size(); ++i) want += rule(i);
    ASSERT_NEAR(p.remaining_s(), want, 1e-5 * std::max(1.0, want)) << "after case " << k;
    t.now_s -= 0.5;
  }
  EXPECT_EQ(p.remaining_s(), 0.0);
}

// While a case runs, the line names it and counts its time; its own prediction runs down (never below 0).
TEST(Progress, RunningCaseCountsDownInTheRemainder) {
  std::vector<Progress::Planned> plan = {{1, "g", "a"}, {1, "g", "b"}, {1, "g", "c"}};
  FakeClock t;
  Progress p(plan, /*terminal=*/false, t.clock());
  t.now_s += 10.0;
  EXPECT_EQ(p.case_done(1, "a"), "[1/3] 10s elapsed, ~20s left; running b (0s)\n");
  t.now_s += 4.0;
  EXPECT_DOUBLE_EQ(p.remaining_s(), 16.0);  // b: 10 - 4, c: 10
  t.now_s += 100.0;
  EXPECT_DOUBLE_EQ(p.remaining_s(), 10.0);  // b ran past its prediction: only c is left
}

// On a terminal the timer redraws the line while a case runs (every kTickEverySeconds), not after clear() until the
// next case ends, and never elsewhere.
TEST(Progress, TimerRedrawsOnATerminalWhileACaseRuns) {
  std::vector<Progress::Planned> plan = {{1, "", "first"}, {1, "", "long-one"}, {1, "", "z"}};
  FakeClock t;
  Progress p(plan, /*terminal=*/true, t.clock());
  t.now_s += 2.0;
  EXPECT_EQ(p.tick(), "");  // quiet at first
  t.now_s += 2.0;
  EXPECT_EQ(p.tick(), "\r[0/3] 4s elapsed, ~? left; running first (4s)\x1b[K");  // a long first case shows too
  t.now_s += 1.0;
  EXPECT_EQ(p.case_done(1, "first"), "\r[1/3] 5s elapsed, ~10s left; running long-one (0s)\x1b[K");
  t.now_s += 0.2;
  EXPECT_EQ(p.tick(), "");  // drawn 0.2 s ago
  t.now_s += 7.8;
  EXPECT_EQ(p.tick(), "\r[1/3] 13s elapsed, ~5s left; running long-one (8s)\x1b[K");
  EXPECT_EQ(p.clear(), "\r\x1b[K");
  t.now_s += 1.0;
  EXPECT_EQ(p.tick(), "");  // cleared: something else is printing
  EXPECT_NE(p.case_done(2, "long-one"), "");
  t.now_s += 1.0;
  EXPECT_NE(p.tick(), "");
  FakeClock u;
  Progress log(plan, /*terminal=*/false, u.clock());
  u.now_s += 60.0;
  EXPECT_EQ(log.tick(), "");  // a log gets a line per case, no timer lines
}
