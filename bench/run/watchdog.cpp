#include "bench/run/watchdog.hpp"

#include <algorithm>

namespace dmabench {

Watchdog::Watchdog(double timeout_s, std::function<void(const Case&, double)> on_timeout)
    : timeout_s_(timeout_s), on_timeout_(std::move(on_timeout)) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::started(const Case& c) {
  std::lock_guard lock(mu_);
  current_ = c;
  since_ = std::chrono::steady_clock::now();
  cv_.notify_all();
}

void Watchdog::finished() {
  std::lock_guard lock(mu_);
  current_.reset();
}

// The case is timed by its own progress: the watchdog wakes every tick and counts at most two ticks per
// wake-up, so that a process stopped for a while (SIGSTOP, Ctrl-Z; the watchdog thread stops with it)
// does not fail its case as a timeout when it is resumed.
void Watchdog::run() {
  using clock = std::chrono::steady_clock;
  const auto timeout = std::chrono::duration<double>(timeout_s_);
  const auto tick = std::chrono::duration_cast<clock::duration>(std::min(std::chrono::duration<double>(0.25), timeout / 4));
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (!current_) {
      cv_.wait(lock, [&] { return stop_ || current_.has_value(); });
      continue;
    }
    const auto started = since_;
    clock::duration ran{0};
    auto last = clock::now();
    while (ran < timeout) {
      if (cv_.wait_until(lock, last + tick, [&] { return stop_ || !current_ || since_ != started; })) break;
      const auto now = clock::now();
      ran += std::min(now - last, 2 * tick);
      last = now;
    }
    if (stop_ || !current_ || since_ != started) continue;
    const Case c = *current_;
    lock.unlock();
    on_timeout_(c, timeout_s_);  // does not return when it ends the process
    return;
  }
}

}  // namespace dmabench
