// The sampling thread's CPU choice (bench/measure/cpu_choice.hpp) on simulated readings: a scripted machine whose CPUs
// read shared or not, and which may change while a case runs; then the real thing on this machine's CPUs.
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/measure/cpu_choice.hpp"
#include "bench/run/run_case.hpp"
#include "core/cpus.hpp"
#include "engines/registry.hpp"
#include "tests/test_support.hpp"

using namespace dmabench;
using json = nlohmann::json;
using measure::CpuChoice;

namespace {

// A machine of CPUs, each reading a set ratio (changed by the test at will); the thread's CPU is where the last move
// put it. It counts readings per CPU, moves, releases and sleeps.
struct SimulatedMachine {
  std::map<int, double> ratio;  // per CPU: what a reading there gives
  std::map<int, std::deque<double>> next;  // per CPU: readings given first, one each, before `ratio`
  std::vector<int> refused;     // CPUs a move to fails (outside the allowed set)
  int at = -1;                  // -1: unpinned
  std::vector<int> moves;
  int releases = 0;
  std::vector<long> sleeps_us;
  std::map<int, int> readings;

  std::unique_ptr<CpuChoice> choice(std::vector<int> candidates, measure::CpuChoicePolicy p = {}) {
    return std::make_unique<CpuChoice>(
        std::move(candidates),
        [this] {
          ++readings[at];
          if (at >= 0 && !next[at].empty()) {
            const double r = next[at].front();
            next[at].pop_front();
            return r;
          }
          return at < 0 ? 0.5 : ratio.at(at);
        },
        [this](int cpu) {
          if (std::find(refused.begin(), refused.end(), cpu) != refused.end()) return false;
          moves.push_back(cpu);
          at = cpu;
          return true;
        },
        [this] {
          ++releases;
          at = -1;
        },
        [this](std::chrono::microseconds us) { sleeps_us.push_back(us.count()); }, p);
  }
};

}  // namespace

// The survey visits every candidate and settles on the one that reads unshared; the context says what it read.
TEST(CpuChoice, TheSurveyPicksTheCpuThatReadsUnshared) {
  SimulatedMachine m{.ratio = {{0, 1.2}, {1, 0.55}, {2, 0.9}, {3, 1.4}}};
  auto c = m.choice({0, 1, 2, 3});
  c->survey_now();
  EXPECT_EQ(c->cpu(), 1);
  EXPECT_EQ(m.releases, 1);  // after the first survey the thread has every CPU back
  for (int cpu : {0, 1, 2, 3}) EXPECT_EQ(m.readings[cpu], 4) << cpu;  // one discarded + 3 each
  const json ctx = c->context({0, 1, 2, 3});
  EXPECT_EQ(ctx["mode"], "quiet");
  EXPECT_EQ(ctx["candidates"], json::array({0, 1, 2, 3}));
  EXPECT_EQ(ctx["first_survey"]["1"], 0.55);
  EXPECT_EQ(ctx["first_survey"]["3"], 1.4);

  const CpuChoice::Scope pinned(c.get());  // a case: pinned to the choice, no new survey (it reads unshared)
  EXPECT_EQ(m.at, 1);
  EXPECT_LT(c->before_sample(), 0.75);
  const measure::CpuChoiceCase done = c->case_done();
  EXPECT_EQ(done.cpu, 1);
  EXPECT_EQ(done.moves, 0);
  EXPECT_EQ(done.surveys, 0);
  EXPECT_EQ(done.samples, 1u);
  EXPECT_EQ(done.waits, 0u);
}

// A case start that reads shared twice surveys; a CPU as quiet as the best (within 0.05) is kept (a move costs cold
// caches), a shared one is left.
TEST(CpuChoice, TheCurrentCpuIsKeptWhereItIsAsQuiet) {
  SimulatedMachine m{.ratio = {{0, 0.5}, {1, 0.6}}};
  auto c = m.choice({0, 1});
  c->survey_now();
  ASSERT_EQ(c->cpu(), 0);
  m.ratio = {{0, 0.5}, {1, 0.47}};
  m.next[0] = {0.9, 0.95};  // a moment of sharing at the case start
  {
    const CpuChoice::Scope pinned(c.get());
    EXPECT_EQ(c->cpu(), 0);
  }
  measure::CpuChoiceCase done = c->case_done();
  EXPECT_EQ(done.surveys, 1);
  EXPECT_EQ(done.moves, 0);
  m.ratio[0] = 0.9;  // shared for good: the next case start moves
  {
    const CpuChoice::Scope pinned(c.get());
    EXPECT_EQ(c->cpu(), 1);
    EXPECT_EQ(m.at, 1);
  }
  done = c->case_done();
  EXPECT_EQ(done.moves, 1);
  EXPECT_EQ(done.cpu, 1);
  EXPECT_EQ(m.at, -1);  // released after the case
}

// The core under the chosen CPU becomes shared while a case runs: after two shared readings in a row the thread
// surveys and moves; the sample that follows is taken after an unshared reading; the record counts it all.
TEST(CpuChoice, ASharedReadingIsWaitedOutAndTwoInARowMoveTheThread) {
  SimulatedMachine m{.ratio = {{4, 0.5}, {5, 0.6}, {6, 0.6}}};
  auto c = m.choice({4, 5, 6});
  c->survey_now();
  const CpuChoice::Scope pinned(c.get());
  ASSERT_EQ(m.at, 4);
  EXPECT_LT(c->before_sample(), 0.75);
  m.ratio[4] = 1.3;  // another tenant's thread on CPU 4's core
  const double r = c->before_sample();
  EXPECT_LT(r, 0.75);
  EXPECT_EQ(c->cpu(), 5);
  EXPECT_EQ(m.at, 5);
  EXPECT_EQ(m.sleeps_us, std::vector<long>({200}));  // the first shared reading waits; the second surveys
  const measure::CpuChoiceCase done = c->case_done();
  EXPECT_EQ(done.cpu, 5);
  EXPECT_EQ(done.moves, 1);
  EXPECT_EQ(done.surveys, 1);
  EXPECT_EQ(done.waits, 2u);
  EXPECT_EQ(done.samples, 2u);
  EXPECT_EQ(done.shared_samples, 0u);
  EXPECT_EQ(measure::to_json(done)["moves"], 1);
}

// Every CPU shared: the bounds hold (max_waits per sample, max_surveys_per_case, max_waits_per_case), the sample is
// taken after a shared reading and counted so.
TEST(CpuChoice, WhenEveryCoreIsSharedTheBoundsHold) {
  SimulatedMachine m{.ratio = {{0, 1.1}, {1, 1.2}}};
  measure::CpuChoicePolicy p;
  p.max_waits = 3;
  p.max_surveys_per_case = 1;
  p.max_waits_per_case = 7;
  auto c = m.choice({0, 1}, p);
  c->survey_now();
  EXPECT_EQ(c->cpu(), 0);  // the least shared
  const CpuChoice::Scope pinned(c.get());  // shared twice: its one survey of the case
  for (int i = 0; i < 5; ++i) EXPECT_GT(c->before_sample(), 0.75);
  const measure::CpuChoiceCase done = c->case_done();
  EXPECT_EQ(done.surveys, 1);
  EXPECT_EQ(done.waits, 7u);  // 3 + 3 + 1, then none
  EXPECT_EQ(done.samples, 5u);
  EXPECT_EQ(done.shared_samples, 5u);
  EXPECT_EQ(m.sleeps_us.size(), 7u);
}

// A CPU the kernel refuses is left out; no CPU at all leaves the thread where the scheduler puts it.
TEST(CpuChoice, RefusedCpusAreLeftOut) {
  SimulatedMachine m{.ratio = {{0, 0.5}, {1, 0.9}}, .refused = {0}};
  auto c = m.choice({0, 1});
  c->survey_now();
  EXPECT_EQ(c->cpu(), 1);
  SimulatedMachine none{.ratio = {{0, 0.5}}, .refused = {0}};
  auto d = none.choice({0});
  d->survey_now();
  EXPECT_EQ(d->cpu(), -1);
  EXPECT_TRUE(d->context({0})["first_survey"].empty());
}

// Processes of one node survey disjoint CPUs: every k-th from the local rank; more processes than CPUs: all of them.
TEST(CpuChoice, ProcessesOfANodeSurveyTheirOwnCpus) {
  const std::vector<int> allowed{0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(CpuChoice::candidates(allowed, 0, 1), allowed);
  EXPECT_EQ(CpuChoice::candidates(allowed, 1, 3), std::vector<int>({1, 4, 7}));
  EXPECT_EQ(CpuChoice::candidates(allowed, 0, 2), std::vector<int>({0, 2, 4, 6}));
  EXPECT_EQ(CpuChoice::candidates({2, 3}, 1, 4), std::vector<int>({2, 3}));
}

// The real thing on this machine: the samples run on an allowed CPU named in the record, and afterwards the thread has
// every allowed CPU back (threads made later are not confined).
TEST(CpuChoice, ACaseRunsOnTheChosenCpuAndTheThreadIsReleasedAfter) {
  const std::vector<int>& allowed = cpus::allowed();
  ASSERT_FALSE(allowed.empty());
  auto choice = CpuChoice::make(allowed);
  choice->survey_now();
  auto backend = testing_support::host_backend();
  auto host = make_engine("host").value();
  Case c = testing_support::planned(Case{.pattern = "copy", .variant = EngineVariant{"host", json::object()},
                                          .devices = {0, 1}, .bytes_per_rank = 4096, .timing = Timing::oneshot,
                                          .run = {.warmup = 2, .iterations = 9}});
  CaseRecord r = run_case(c, host.get(), *backend, CaseHooks{.cpu_choice = choice.get()});
  ASSERT_EQ(r.status, Status::ok) << r.reason;
  ASSERT_TRUE(r.cpu_choice.has_value());
  EXPECT_NE(std::find(allowed.begin(), allowed.end(), r.cpu_choice->cpu), allowed.end());
  EXPECT_EQ(r.cpu, r.cpu_choice->cpu);  // the record's cpu: where the samples were taken
  EXPECT_EQ(r.cpu_choice->samples, 11u);  // warm-up and timed
  EXPECT_EQ(to_json(r)["cpu_choice"]["cpu"], r.cpu_choice->cpu);
  cpu_set_t now;
  CPU_ZERO(&now);
  ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
  EXPECT_EQ(static_cast<std::size_t>(CPU_COUNT(&now)), allowed.size());
}
