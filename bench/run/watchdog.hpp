#pragma once
// The per-case timeout (--case-timeout): a thread that watches the case in flight. A case that runs
// longer calls `on_timeout` from the watchdog's thread while the case is still blocked (a GPU
// operation that never completes cannot be cancelled): the caller records it and ends the process.
// Only time the process runs counts: a process stopped (SIGSTOP, Ctrl-Z) and resumed goes on.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "bench/cases/cases.hpp"

namespace dmabench {

class Watchdog {
 public:
  // timeout_s <= 0: no watchdog.
  Watchdog(double timeout_s, std::function<void(const Case&, double seconds)> on_timeout);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  void started(const Case& c);  // the case begins (its setup, samples and measurements)
  void finished();              // the case is recorded

 private:
  void run();

  double timeout_s_;
  std::function<void(const Case&, double)> on_timeout_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<Case> current_;
  std::chrono::steady_clock::time_point since_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace dmabench
