#pragma once
// The Google Benchmark adapter: every case one registered benchmark (manual time) whose loop is
// the case's sampler, its counters read from the case's record, and a reporter that hands each
// case back when its runs are reported (all repetitions done).
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "bench/run_case.hpp"

namespace dmabench::gbench {

bool has_flag(const std::vector<std::string>& args, const std::string& name);
std::string flag_value(const std::vector<std::string>& args, const std::string& name);

// Refuses (InputError, one line) a --benchmark_* flag that Google Benchmark does not know, a value it
// would reject (it prints its usage and exits) or that makes no sense, and flags dmabench cannot honour
// (the flags of Google Benchmark 1.7, the version Debian 12 ships).
void check_flag(const std::string& arg);
// check_flag for each, no flag twice, and the filter's regular expression.
void check_flags(const std::vector<std::string>& args);

// --benchmark_repetitions times the most iterations of a case: the samples dmabench keeps for one case,
// at most 10^7 (InputError).
void check_samples(const std::vector<std::string>& args, int most_iterations);

// The name Google Benchmark filters on: the case name plus its iterations and manual-time suffixes.
std::string benchmark_name(const Case& c, bool fixed_iterations);

// --benchmark_filter, compiled once: whether it selects a case (POSIX extended regex searched in the
// case's benchmark name; a leading '-' negates; empty, "all" and "." select every case).
class Filter {
 public:
  // Throws InputError for a bad regex.
  explicit Filter(const std::vector<std::string>& benchmark_args);
  bool selects(const Case& c) const;

 private:
  std::optional<std::regex> re_;  // none: every case
  bool negate_ = false;
  bool fixed_iterations_ = true;   // no --benchmark_min_time: the name carries the iteration count
};

// Registers `ex` as one benchmark: each invocation runs run_invocation() with the hooks `hooks`
// returns and Google Benchmark's manual-time loop as the sampler.
void register_case(CaseExecution& ex, std::function<CaseHooks()> hooks, bool fixed_iterations);

class CaseReporter;

// The Google Benchmark side of one sweep: one display reporter (the one --benchmark_format asks for)
// for all of it; `on_case(name, reported_runs)` is called as each case's runs are reported.
class Session {
 public:
  // display: false (the other processes of a multi-process run) reports to the sweep only, printing nothing.
  Session(const std::vector<std::string>& args, std::function<void(const std::string&, std::size_t)> on_case,
          bool display = true);
  ~Session();  // the reporter's final lines
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // Whether the sweep may register and run its cases in batches (Google Benchmark's run over all
  // registered benchmarks grows faster than their number); not with --benchmark_out or
  // --benchmark_format=json, whose reporters expect one run.
  bool batches() const { return batches_; }
  // Runs every benchmark registered since the last call, then unregisters them.
  void run_registered();

 private:
  std::unique_ptr<CaseReporter> reporter_;
  bool batches_;
};

}  // namespace dmabench::gbench
