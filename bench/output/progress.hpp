#pragma once
// The progress line of a sweep: `[k/N] <elapsed> elapsed, ~<remaining> left: <case>` once the sweep has run
// longer than kQuietSeconds (a short sweep prints nothing). On a terminal the line is redrawn in place ("\r", the
// text, erase to the end of the line; no newline): clear() erases it before anything else is printed. Elsewhere
// (a log, a pipe) it is one line per case, at most one per kLineEverySeconds, the last case always.
// The remaining time is elapsed x (work left / work done), the work of each case estimated before it runs (its
// samples, warm-up, size and setup at a nominal rate, the rounds beside a workload: bench/run/gbench.hpp
// Loops::estimated_seconds; and the power window where power is measured); the
// estimate need not be right in seconds, only in proportion between cases. Without estimates every case weighs
// the same (elapsed / k x (N - k)). It is an estimate ("~").
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace dmabench {

class Progress {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic; default: std::chrono::steady_clock
  static constexpr double kQuietSeconds = 3.0;
  static constexpr double kLineEverySeconds = 1.0;  // not on a terminal
  static constexpr double kRedrawEverySeconds = 0.1;  // on a terminal

  // The sweep starts now (the clock's first reading). `columns` > 0: a terminal's width; the line is cut to
  // columns - 1 characters so that it never wraps (a wrapped line cannot be redrawn in place).
  Progress(std::size_t total_cases, bool terminal, Clock clock = {}, std::size_t columns = 0);
  // The cases' estimated work, in the order they run (any unit, each >= 0; a sum of 0 weighs them the same).
  Progress(std::vector<double> work, bool terminal, Clock clock = {}, std::size_t columns = 0);
  // After case k (1-based) of the total finished: the text to print, or "" when nothing is due.
  std::string case_done(std::size_t k, const std::string& case_name);
  // On a terminal, once a line was drawn: what erases it ("\r\x1b[K"); "" otherwise.
  std::string clear() const;

 private:
  std::size_t total_;
  std::vector<double> done_work_;  // the work of cases 1..k, for each k (empty: every case weighs the same)
  bool terminal_;
  Clock clock_;
  std::size_t columns_;
  double start_s_;
  double shown_at_s_ = -1;  // when the last line was printed; < 0: none yet
};

// 45s, 3m12s, 1h05m (seconds rounded down; negative as 0s).
std::string format_duration(double seconds);

}  // namespace dmabench
