#include "bench/output/progress.hpp"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/format.h>

namespace dmabench {

std::string format_duration(double seconds) {
  const long s = std::isfinite(seconds) && seconds > 0 ? static_cast<long>(seconds) : 0;
  if (s < 60) return fmt::format("{}s", s);
  if (s < 3600) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}h{:02}m", s / 3600, s % 3600 / 60);
}

Progress::Progress(std::size_t total_cases, bool terminal, Clock clock, std::size_t columns)
    : total_(total_cases), terminal_(terminal), clock_(std::move(clock)), columns_(columns) {
  if (!clock_) {
    clock_ = [] { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); };
  }
  start_s_ = clock_();
}

Progress::Progress(std::vector<double> work, bool terminal, Clock clock, std::size_t columns)
    : Progress(work.size(), terminal, std::move(clock), columns) {
  double sum = 0;
  for (const double w : work) done_work_.push_back(sum += std::isfinite(w) && w > 0 ? w : 0);
  if (sum <= 0) done_work_.clear();
}

std::string Progress::case_done(std::size_t k, const std::string& case_name) {
  const double now_s = clock_();
  const double elapsed_s = now_s - start_s_;
  const bool last = k >= total_;
  if (elapsed_s <= kQuietSeconds || k == 0) return "";
  const double every_s = terminal_ ? kRedrawEverySeconds : kLineEverySeconds;
  if (!last && shown_at_s_ >= 0 && now_s - shown_at_s_ < every_s) return "";
  shown_at_s_ = now_s;
  // the share of the work done: of the estimates, or of the cases
  const double done = done_work_.empty() ? static_cast<double>(k) : done_work_[std::min(k, total_) - 1];
  const double all = done_work_.empty() ? static_cast<double>(total_) : done_work_.back();
  const std::string left = last        ? std::string("done")
                           : done <= 0 ? std::string("~? left")
                                       : fmt::format("~{} left", format_duration(elapsed_s / done * (all - done)));
  std::string line = fmt::format("[{}/{}] {} elapsed, {}: {}", k, total_, format_duration(elapsed_s), left, case_name);
  if (!terminal_) return fmt::format("{}\n", line);
  if (columns_ > 1 && line.size() > columns_ - 1) line.resize(columns_ - 1);
  return fmt::format("\r{}\x1b[K", line);  // (fmt, not operator+: GCC 12's -Wrestrict misreads the latter)
}

std::string Progress::clear() const { return terminal_ && shown_at_s_ >= 0 ? "\r\x1b[K" : ""; }

}  // namespace dmabench
