#include "bench/watchdog.hpp"

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

void Watchdog::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (!current_) {
      cv_.wait(lock, [&] { return stop_ || current_.has_value(); });
      continue;
    }
    const auto deadline = since_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s_));
    const auto started = since_;
    if (cv_.wait_until(lock, deadline, [&] { return stop_ || !current_ || since_ != started; })) continue;
    const Case c = *current_;
    lock.unlock();
    on_timeout_(c, timeout_s_);  // does not return when it ends the process
    return;
  }
}

}  // namespace dmabench
