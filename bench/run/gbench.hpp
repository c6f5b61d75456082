#pragma once
// The Google Benchmark adapter: the flags dmabench checks for it (gbench_flags.hpp, included here; what only
// parses flags includes that alone), and the Session through which each case is sampled (one registered
// benchmark, manual time) and shown with counters from its record.
#include <sstream>
#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "bench/output/case_table.hpp"
#include "bench/run/gbench_flags.hpp"
#include "bench/run/run_case.hpp"

namespace dmabench::gbench {

// Who samples a case in a run with these flags. Google Benchmark's manual-time loop takes the case's `iterations`
// per repetition (--benchmark_repetitions repeats it), or as many as --benchmark_min_time asks; dmabench's adaptive
// loop (bench/sampling/sampler.hpp) samples a case whose config gives no `iterations`, unless one of those two flags is given.
class Loops {
 public:
  explicit Loops(const Flags& flags);
  bool adaptive(const Case& c) const { return c.run.sampling.adaptive && !min_time_ && !repetitions_; }
  bool min_time() const { return min_time_; }  // the library chooses the count of a case it samples
  // The name Google Benchmark filters on: the case name, then "/iterations:N" where the library's loop takes a
  // fixed count, then "/manual_time".
  std::string benchmark_name(const Case& c) const;
  // What running the case will cost, estimated before it runs (the progress line's weights): its setup (a few
  // passes over its bytes to fill and validate them), warm-up and timed samples (the fixed count, times
  // --benchmark_repetitions; --benchmark_min_time; or the adaptive rule's time, between min_time and max_time),
  // each sample its operations at a nominal 10 GB/s plus 10 us each. Right in proportion, not in seconds.
  double estimated_seconds(const Case& c) const;

 private:
  bool min_time_ = false;     // --benchmark_min_time: the library chooses the count
  bool repetitions_ = false;  // --benchmark_repetitions
  double min_time_s_ = 0;     // --benchmark_min_time's seconds
  int repetition_count_ = 1;  // --benchmark_repetitions's count
};

// --benchmark_filter, compiled once: whether it selects a case (POSIX extended regex searched in the
// case's benchmark name; a leading '-' negates; empty, "all" and "." select every case).
class Filter {
 public:
  explicit Filter(const Flags& flags);
  bool selects(const Case& c) const;

 private:
  bool negate_ = false;            // before re_: compiling the filter sets it
  std::optional<std::regex> re_;  // none: every case
  Loops loops_;  // the names filtered on
};

class CaseReporter;

// What the console shows of a sweep in dmabench's table (--benchmark_format=console, the default).
struct Console {
  int verbosity = 1;        // CliOptions::verbosity: 0 (-q) failures alone, 1 a row per case, 2 (-v) with details
  std::size_t columns = 0;  // the terminal's width (0: not a terminal)
  table::Widths widths;     // table_widths() of the sweep's cases
};
// The columns' widths that fit every one of the cases.
table::Widths table_widths(const std::vector<const Case*>& cases);
// The table's row of a case's record (-v: `detail` adds how its sampling stopped and its setup time to an ok row).
table::CaseRow case_row(const CaseRecord& r, bool detail = false);

// The Google Benchmark side of one sweep: Google Benchmark is the sampler of fixed counts (its manual-time loop;
// dmabench's adaptive loop samples the other cases, Loops) and the reporter users know (the table or JSON
// --benchmark_format asks for, and --benchmark_out's file); dmabench runs the cases (run_case) and builds their records.
class Session {
 public:
  // name_width: the longest case name (the table's first column). display: false (the other processes
  // of a multi-process run) prints nothing. out_path: the --benchmark_out file as checked before the run
  // (bench/out_file: a symlink resolved), "" for none; nothing is opened until finish().
  // console: the table's settings (--benchmark_format=json shows Google Benchmark's JSON instead).
  Session(const Flags& flags, std::size_t name_width, bool display = true, std::string out_path = "",
          Console console = {});
  ~Session();  // finish(), a failure said on stderr
  // The reporters' final lines, and --benchmark_out written whole (core/json_file's atomic write: a new file
  // renamed into place) when a case was reported; no case reported leaves it untouched. Once; throws
  // std::runtime_error when the file cannot be written.
  void finish();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // run_case()'s sampler. Google Benchmark's loop (Loops): runs the case as one benchmark (manual time: a warm-up,
  // then the library's iteration loop over ex.sample_seconds()) and returns the samples (µs) of the runs the library
  // reports (its other invocations probed iteration counts). Adaptive: the warm-up and ex.take_samples(), reported as
  // one run dmabench makes as the library would ("<case>/manual_time", the samples as its iterations, µs).
  // Throws what a sample throws.
  Samples sample(CaseExecution& ex);
  // Shows the case's reported runs, with counters read from its record (p50_us, noise_pct, p99_us, busbw_GBps and
  // the overlap figures; the label "noisy" where the record is). Whether the table said all there is to say: false
  // when the case has no runs (not
  // sampled: skipped or failed before timing) or failed after sampling cleanly (the table shows no error),
  // true when it succeeded or its failure is the table's error row.
  // In dmabench's table (the default console) every case is a row: show() prints it and returns true, a case
  // never sampled (skipped, or failed while set up) included.
  bool show(const CaseRecord& r);
  // Whether the console is dmabench's table, which shows every case (show() of a case skipped before its setup too).
  bool shows_every_case() const;

 private:
  std::ostringstream out_text_;  // --benchmark_out's text, written by finish()
  std::string out_path_;
  bool finished_ = false;
  std::unique_ptr<CaseReporter> reporter_;
  Loops loops_;
  Samples library_loop(CaseExecution& ex);
  Samples adaptive_loop(CaseExecution& ex);
};

}  // namespace dmabench::gbench
