#pragma once
// One spinning host thread per GPU, for engines that issue and wait per GPU in parallel instead of
// one GPU after the other from the caller's thread. Hand-off is through atomics (no sleeping), so
// it costs well under a microsecond; the threads burn a core each while the operation exists.
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dmabench {

class SpinWorkers {
 public:
  // Worker i calls setup(i) once, then issue(i, g) for every generation g up to the latest
  // release(g), in order, and settle(i) for every settle request.
  SpinWorkers(int n, std::function<void(int)> setup, std::function<void(int, std::uint32_t)> issue,
              std::function<void(int)> settle);
  ~SpinWorkers();
  SpinWorkers(const SpinWorkers&) = delete;
  SpinWorkers& operator=(const SpinWorkers&) = delete;

  // Why `n` workers and the caller (all spinning) would share CPUs, or nullopt: the CPUs this process
  // may run on (sched_getaffinity) are fewer than n + 1. Sharing one core, a spinning thread runs only
  // when the scheduler preempts another (milliseconds: 8 ms per operation was measured under mpirun,
  // which binds each process to one core by default).
  static std::optional<std::string> cpus_short(int n);
  // Asks every worker to issue generations up to g (returns at once).
  void release(std::uint32_t g);
  // Asks every worker to settle once everything released so far is issued, and returns when all
  // have; rethrows the first error a worker met.
  void settle();

 private:
  struct alignas(64) Worker {
    std::atomic<std::uint64_t> settled{0};
    std::thread thread;
  };
  void run(int i);

  std::function<void(int)> setup_;
  std::function<void(int, std::uint32_t)> issue_;
  std::function<void(int)> settle_;
  std::vector<std::unique_ptr<Worker>> workers_;
  alignas(64) std::atomic<std::uint32_t> released_{0};
  alignas(64) std::atomic<std::uint64_t> settle_requests_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
};

}  // namespace dmabench
