#pragma once
// The progress line of a sweep: `[k/N] <elapsed> elapsed, ~<remaining> left; running <case> (<its time>)` once the
// sweep has run longer than kQuietSeconds (a short sweep prints nothing). On a terminal the line is redrawn in place
// ("\r", the text, erase to the end of the line; no newline), after each case and on a timer while a case runs
// (tick(): the running case's time and the remainder move on during a long case); clear() erases it before anything
// else is printed, and the timer draws nothing until the next case ends. Elsewhere (a log, a pipe) it is one line per
// case, at most one per kLineEverySeconds, the last case always, and no timer lines.
// The remaining time is learned from the cases that finished (issue 52: the estimate made before the run was 3-5x
// optimistic): a case still to run takes the mean seconds of the finished cases of its class (Planned::group: the
// sweep's size class, or "skip"); a case of a class none finished takes its estimated work (Planned::work: samples,
// warm-up, size and setup at a nominal rate, bench/run/gbench.hpp Loops::estimated_seconds) at the rate the finished
// cases ran (their seconds / their estimated work), or without estimates the mean seconds of a finished case. The
// running case counts with what its prediction has left (never below 0). It is an estimate ("~").
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dmabench {

class Progress {
 public:
  using Clock = std::function<double()>;  // seconds, monotonic; default: std::chrono::steady_clock
  static constexpr double kQuietSeconds = 3.0;
  static constexpr double kLineEverySeconds = 1.0;  // not on a terminal
  static constexpr double kRedrawEverySeconds = 0.1;  // on a terminal, after a case
  static constexpr double kTickEverySeconds = 0.5;    // on a terminal, while a case runs (tick())

  // A case of the sweep as planned: its estimated work (any unit, >= 0), its class (cases of one class take about
  // the same time; "" for none) and its name (the line names the running case).
  struct Planned {
    double work = 0;
    std::string group;
    std::string name;
  };

  // The sweep starts now (the clock's first reading). `columns` > 0: a terminal's width; the line is cut to
  // columns - 1 characters so that it never wraps (a wrapped line cannot be redrawn in place).
  Progress(std::size_t total_cases, bool terminal, Clock clock = {}, std::size_t columns = 0);
  // The cases' estimated work, in the order they run (each >= 0; a sum of 0: no estimates).
  Progress(std::vector<double> work, bool terminal, Clock clock = {}, std::size_t columns = 0);
  // The cases as planned, in the order they run.
  Progress(std::vector<Planned> plan, bool terminal, Clock clock = {}, std::size_t columns = 0);
  // After case k (1-based) of the total finished: the text to print, or "" when nothing is due. It names the case
  // that runs next where the plan has names, else `case_name` (the one that finished).
  std::string case_done(std::size_t k, const std::string& case_name);
  // While a case runs (call it as often as you like): on a terminal, the line redrawn when kTickEverySeconds passed
  // since it was drawn and it was not cleared; "" otherwise.
  std::string tick();
  // On a terminal, once a line was drawn: what erases it ("\r\x1b[K"); "" otherwise. The timer then waits for the
  // next case_done.
  std::string clear();
  // Where the plan has no names: case i's (0-based) name, asked only when a line names it (a sweep of 16000 cases
  // does not build every name before its first case).
  void set_names(std::function<std::string(std::size_t)> name_of) { name_of_ = std::move(name_of); }
  // The estimated seconds left now (the running case's rest and the cases after it); exposed for tests.
  double remaining_s() const;

 private:
  double predicted_s(std::size_t i) const;  // case i (0-based) still to run
  double unfinished_s() const;               // the sum of predicted_s over every case not finished yet
  std::string line(std::size_t k, const std::string& name, bool last) const;

  std::size_t total_;
  std::vector<Planned> plan_;     // empty: no plan (every case alike)
  bool estimates_ = false;        // some planned work > 0
  std::vector<double> seconds_;   // the finished cases' times, in order
  double done_s_ = 0, done_work_ = 0;  // their sum, and the sum of their planned work
  std::map<std::string, std::pair<double, std::size_t>> by_group_;  // a class's finished seconds and count
  // a class's planned cases not finished yet: their work and count ("": those of no class). The remainder is a sum
  // over classes, not over cases: a line of a 16000-case sweep costs as much as one of 4 (it was O(cases) a line).
  std::map<std::string, std::pair<double, std::size_t>> left_by_group_;
  bool terminal_;
  Clock clock_;
  std::size_t columns_;
  double start_s_;
  double case_start_s_;           // when the running case started (the last case_done)
  double shown_at_s_ = -1;        // when the last line was printed; < 0: none yet
  bool cleared_ = false;          // clear() since the last line: tick() draws nothing
  std::string finished_name_;     // the last finished case (named where the plan has no names)
  std::function<std::string(std::size_t)> name_of_;  // set_names
};

// Calls `tick` every Progress::kTickEverySeconds on a thread of its own from construction to destruction (`on`: else
// never): the sweep's redraw of the progress line while a case runs. The caller locks what `tick` shares.
class ProgressTimer {
 public:
  ProgressTimer(bool on, std::function<void()> tick);
  ~ProgressTimer();
  ProgressTimer(const ProgressTimer&) = delete;
  ProgressTimer& operator=(const ProgressTimer&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// 45s, 3m12s, 1h05m (seconds rounded down; negative as 0s).
std::string format_duration(double seconds);

}  // namespace dmabench
