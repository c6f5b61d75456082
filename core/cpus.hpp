#pragma once
// The CPUs this process may run on, and moving the calling thread among them. One owner for both users: the host
// engine pins its rank threads (engines/host.cpp) and the sampling thread chooses a quiet core
// (bench/measure/cpu_choice.hpp).
#include <vector>

namespace dmabench::cpus {

// The CPUs the process was allowed at its first call (sched_getaffinity: what taskset, numactl, srun or a cgroup
// allowed), in order; empty where the call failed. Read once and kept, so that a thread pinned since does not narrow it.
const std::vector<int>& allowed();

// Pins the calling thread to `cpu`; false where the kernel refused (e.g. a CPU outside the allowed set).
bool pin_this_thread(int cpu);

// Gives the calling thread every allowed CPU back (after pin_this_thread); false where the kernel refused.
bool unpin_this_thread();

// The CPU the calling thread runs on now (sched_getcpu), or -1.
int current();

// The CPU the sampling thread samples on (bench/measure/cpu_choice.hpp sets it at each choice; -1: none, the thread
// is left to the scheduler). The host engine places its rank threads from it, so that where they run relative to
// the thread that hands them work, and waits for them, is the same in every process.
void set_sampling_cpu(int cpu);
int sampling_cpu();

}  // namespace dmabench::cpus
