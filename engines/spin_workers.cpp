#include "engines/spin_workers.hpp"

#include "core/cpus.hpp"

#include <sched.h>

#include <stdexcept>

namespace dmabench {
namespace {
inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

SpinWorkers::SpinWorkers(int n, std::function<void(int)> setup, std::function<void(int, std::uint32_t)> issue,
                         std::function<void(int)> settle)
    : setup_(std::move(setup)), issue_(std::move(issue)), settle_(std::move(settle)) {
  for (int i = 0; i < n; ++i) workers_.push_back(std::make_unique<Worker>());
  for (int i = 0; i < n; ++i) workers_[i]->thread = std::thread([this, i] { run(i); });
}

SpinWorkers::~SpinWorkers() {
  stop_.store(true);
  for (auto& w : workers_) w->thread.join();
}

std::optional<std::string> SpinWorkers::cpus_short(int n) {
  if (cpus::allowed().empty()) return std::nullopt;
  const int cpus = static_cast<int>(cpus::allowed().size());  // the process's, not this thread's (maybe pinned)
  if (cpus >= n + 1) return std::nullopt;
  return "issue thread-per-gpu spins " + std::to_string(n) + " host thread(s) beside the caller: it needs " +
         std::to_string(n + 1) + " CPUs but this process may run on " + std::to_string(cpus) +
         " (mpirun binds each process to one core by default: use --bind-to none, or --map-by slot:PE=" +
         std::to_string(n + 1) + ")";
}

void SpinWorkers::release(std::uint32_t g) { released_.store(g, std::memory_order_release); }

void SpinWorkers::settle() {
  const std::uint64_t req = settle_requests_.fetch_add(1, std::memory_order_acq_rel) + 1;
  for (auto& w : workers_)
    while (w->settled.load(std::memory_order_acquire) < req) relax();
  if (failed_.load()) {
    failed_.store(false);
    std::rethrow_exception(std::exchange(error_, nullptr));
  }
}

void SpinWorkers::run(int i) {
  std::uint32_t issued = 0;
  std::uint64_t settled = 0;
  bool ok = true;
  auto guard = [&](auto&& fn) {
    if (!ok) return;
    try {
      fn();
    } catch (...) {
      ok = false;
      if (!failed_.exchange(true)) error_ = std::current_exception();
    }
  };
  guard([&] { setup_(i); });
  while (!stop_.load(std::memory_order_relaxed)) {
    const std::uint32_t target = released_.load(std::memory_order_acquire);
    while (static_cast<std::int32_t>(target - issued) > 0) {
      ++issued;
      guard([&] { issue_(i, issued); });
    }
    const std::uint64_t req = settle_requests_.load(std::memory_order_acquire);
    if (settled < req) {
      // everything released before the request is issued: re-read to be sure
      const std::uint32_t latest = released_.load(std::memory_order_acquire);
      while (static_cast<std::int32_t>(latest - issued) > 0) {
        ++issued;
        guard([&] { issue_(i, issued); });
      }
      guard([&] { settle_(i); });
      settled = req;
      workers_[i]->settled.store(settled, std::memory_order_release);
      continue;
    }
    relax();
  }
}

}  // namespace dmabench
