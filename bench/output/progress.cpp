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
  start_s_ = case_start_s_ = clock_();
}

Progress::Progress(std::vector<double> work, bool terminal, Clock clock, std::size_t columns)
    : Progress(work.size(), terminal, std::move(clock), columns) {
  for (const double w : work) plan_.push_back({std::isfinite(w) && w > 0 ? w : 0, "", ""});
  for (const Planned& p : plan_) {
    estimates_ = estimates_ || p.work > 0;
    auto& [work_left, n] = left_by_group_[p.group];
    work_left += p.work;
    ++n;
  }
}

Progress::Progress(std::vector<Planned> plan, bool terminal, Clock clock, std::size_t columns)
    : Progress(plan.size(), terminal, std::move(clock), columns) {
  plan_ = std::move(plan);
  for (Planned& p : plan_) {
    p.work = std::isfinite(p.work) && p.work > 0 ? p.work : 0;
    estimates_ = estimates_ || p.work > 0;
    auto& [work_left, n] = left_by_group_[p.group];
    work_left += p.work;
    ++n;
  }
}

double Progress::predicted_s(std::size_t i) const {
  const std::size_t done = seconds_.size();
  if (i < plan_.size() && !plan_[i].group.empty())
    if (const auto g = by_group_.find(plan_[i].group); g != by_group_.end() && g->second.second > 0)
      return g->second.first / static_cast<double>(g->second.second);  // its class's mean
  if (estimates_ && done_work_ > 0 && i < plan_.size()) return plan_[i].work * done_s_ / done_work_;  // the rate
  return done > 0 ? done_s_ / static_cast<double>(done) : 0;  // the mean finished case
}

// predicted_s summed over the unfinished cases a class at a time: a class with finished cases at its mean, else (and
// the cases of no class) at the rate of the finished work where there are estimates, else at the mean finished case;
// cases beyond the plan at the mean finished case.
double Progress::unfinished_s() const {
  const std::size_t done = seconds_.size();
  const double mean = done > 0 ? done_s_ / static_cast<double>(done) : 0;
  const bool by_rate = estimates_ && done_work_ > 0;
  double sum = 0;
  for (const auto& [group, left] : left_by_group_) {
    const auto& [work, n] = left;
    if (n == 0) continue;
    const auto g = group.empty() ? by_group_.end() : by_group_.find(group);
    if (g != by_group_.end() && g->second.second > 0)
      sum += static_cast<double>(n) * g->second.first / static_cast<double>(g->second.second);
    else
      sum += by_rate ? work * done_s_ / done_work_ : static_cast<double>(n) * mean;
  }
  const std::size_t planned_or_done = std::max(plan_.size(), done);
  if (total_ > planned_or_done) sum += static_cast<double>(total_ - planned_or_done) * mean;
  return sum;
}

double Progress::remaining_s() const {
  const std::size_t done = seconds_.size();
  if (done >= total_) return 0;
  const double running_s = clock_() - case_start_s_;
  const double running_predicted = predicted_s(done);
  const double left = std::max(0.0, running_predicted - running_s) + std::max(0.0, unfinished_s() - running_predicted);
  return std::round(left * 1e6) / 1e6;  // to the microsecond: a sum of equal shares is not floored a second short
}

std::string Progress::line(std::size_t k, const std::string& name, bool last) const {
  const double now_s = clock_();
  const std::string left = last ? std::string("done")
                           : seconds_.empty() || std::all_of(seconds_.begin(), seconds_.end(), [](double s) { return s <= 0; })
                               ? std::string("~? left")
                               : fmt::format("~{} left", format_duration(remaining_s()));
  const std::string running = k >= total_ ? std::string() : k < plan_.size() && !plan_[k].name.empty() ? plan_[k].name
                              : name_of_ ? name_of_(k) : std::string();
  const std::string what = last || running.empty()
                               ? fmt::format(": {}", name)
                               : fmt::format("; running {} ({})", running, format_duration(now_s - case_start_s_));
  std::string text = fmt::format("[{}/{}] {} elapsed, {}{}", k, total_, format_duration(now_s - start_s_), left, what);
  if (!terminal_) return fmt::format("{}\n", text);
  if (columns_ > 1 && text.size() > columns_ - 1) text.resize(columns_ - 1);
  return fmt::format("\r{}\x1b[K", text);  // (fmt, not operator+: GCC 12's -Wrestrict misreads the latter)
}

std::string Progress::case_done(std::size_t k, const std::string& case_name) {
  const double now_s = clock_();
  k = std::min(k, total_);
  if (k > seconds_.size()) {  // the cases finished since the last call share the time since it
    const double each = (now_s - case_start_s_) / static_cast<double>(k - seconds_.size());
    for (std::size_t i = seconds_.size(); i < k; ++i) {
      seconds_.push_back(std::max(0.0, each));
      done_s_ += seconds_.back();
      if (i < plan_.size()) {
        done_work_ += plan_[i].work;
        auto& [work_left, n] = left_by_group_[plan_[i].group];
        work_left -= plan_[i].work;
        --n;
        if (!plan_[i].group.empty()) {
          auto& [sum_s, n] = by_group_[plan_[i].group];
          sum_s += seconds_.back();
          ++n;
        }
      }
    }
  }
  case_start_s_ = now_s;
  finished_name_ = case_name;
  cleared_ = false;  // the case's row is out (the caller clears before it prints): the timer may draw again
  const bool last = k >= total_;
  if (now_s - start_s_ <= kQuietSeconds || k == 0) return "";
  const double every_s = terminal_ ? kRedrawEverySeconds : kLineEverySeconds;
  if (!last && shown_at_s_ >= 0 && now_s - shown_at_s_ < every_s) return "";
  shown_at_s_ = now_s;
  return line(k, case_name, last);
}

std::string Progress::tick() {
  const double now_s = clock_();
  const std::size_t k = seconds_.size();
  if (!terminal_ || cleared_ || k >= total_ || now_s - start_s_ <= kQuietSeconds) return "";
  if (shown_at_s_ >= 0 && now_s - shown_at_s_ < kTickEverySeconds) return "";
  shown_at_s_ = now_s;
  return line(k, finished_name_, false);
}

std::string Progress::clear() {
  if (!terminal_ || shown_at_s_ < 0) return "";
  cleared_ = true;
  return "\r\x1b[K";
}

ProgressTimer::ProgressTimer(bool on, std::function<void()> tick) {
  if (!on) return;
  thread_ = std::thread([this, tick = std::move(tick)] {
    std::unique_lock lock(mu_);
    const auto period = std::chrono::duration<double>(Progress::kTickEverySeconds);
    while (!cv_.wait_for(lock, period, [this] { return done_; })) {
      lock.unlock();
      tick();
      lock.lock();
    }
  });
}

ProgressTimer::~ProgressTimer() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace dmabench
