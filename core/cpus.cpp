#include "core/cpus.hpp"

#include <pthread.h>
#include <sched.h>

#include <atomic>

namespace dmabench::cpus {
namespace {

std::vector<int> read_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

bool set_this_thread(const std::vector<int>& cpus) {
  if (cpus.empty()) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// Read before main() runs, so that no thread of this process has been pinned yet when it is.
[[maybe_unused]] const std::vector<int>& at_start = allowed();

}  // namespace

const std::vector<int>& allowed() {
  static const std::vector<int> cpus = read_allowed();
  return cpus;
}

bool pin_this_thread(int cpu) { return set_this_thread({cpu}); }

bool unpin_this_thread() { return set_this_thread(allowed()); }

int current() { return sched_getcpu(); }

namespace {
std::atomic<int> sampling{-1};
}

void set_sampling_cpu(int cpu) { sampling.store(cpu); }

int sampling_cpu() { return sampling.load(); }

}  // namespace dmabench::cpus
