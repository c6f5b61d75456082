#pragma once
// The HSA runtime (AMD): SDMA copies on explicit engines, dependency and completion signals, and the
// copy timestamps of the latency breakdown. Vendor-neutral interface: only gpu/hsa.cpp
// includes the HSA headers. Built only in HIP builds that found hsa-runtime64.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpu/copy_tracer.hpp"

namespace dmabench::gpu::hsa {

// An HSA signal (RAII). Completion signals start at the number of copies that decrement them;
// dependency signals start at 1 and release the copies waiting on them when stored 0.
class Signal {
 public:
  explicit Signal(std::int64_t initial);
  ~Signal();
  Signal(const Signal&) = delete;
  Signal& operator=(const Signal&) = delete;
  void store(std::int64_t value) const;  // store-release
  void add(std::int64_t value) const;    // add-release
  std::int64_t load() const;             // load-acquire
  // Spins (load-acquire, no sleeping) until the value is 0; throws after `timeout_s`.
  void spin_until_zero(double timeout_s) const;
  std::uint64_t handle() const { return handle_; }

 private:
  std::uint64_t handle_ = 0;
};

struct Copy {
  void* dst = nullptr;
  int dst_device = 0;
  const void* src = nullptr;
  int src_device = 0;
  std::size_t bytes = 0;
  int engine = -1;  // SDMA engine index (bit of hsa_amd_sdma_engine_id_t); -1: the runtime picks
  // A side in host memory: the handle of the CPU agent that owns it (HostMemory::cpu_agent; 0: the side is
  // the device's memory, its agent the device's), and dst / src are then the addresses GPU agents use.
  std::uint64_t dst_cpu_agent = 0, src_cpu_agent = 0;
};

// How an HSA copy names a host buffer: the CPU agent that owns it and the address GPU agents use for the
// byte `p` points at (hsa_amd_pointer_info; the host's address for runtime allocations, the locked
// mapping's for registered memory).
struct HostMemory {
  std::uint64_t cpu_agent = 0;
  void* agent_address = nullptr;
};
// Host memory as an HSA copy endpoint, or why HSA does not know it as memory a GPU agent can access
// (pageable memory: neither allocated by the runtime nor locked).
Maybe<HostMemory> host_memory(const void* p);
// Host-facing (PCIe) SDMA engines of a GPU, HSA engine ids 0 .. n-1 (HSA_AMD_AGENT_INFO_NUM_SDMA_ENG where
// the headers have it, else the driver's num_sdma_engines); 0 when unknown.
int host_sdma_engine_count(int device);

// Posts one copy that starts once `dependency` (if any) is 0 and decrements `completion` when done.
void async_copy(const Copy& c, const Signal* dependency, const Signal& completion);

// Why explicit engines (hsa_amd_memory_async_copy_on_engine) are not in this build, or nullopt.
WhyNot copy_on_engine_unsupported();
// hsa_amd_memory_get_preferred_copy_engine's engine mask for copies from src to dst.
std::uint32_t preferred_engines(int src_device, int dst_device);
// SDMA engines a GPU's copies can use: the runtime's count where the headers have it, else the
// kernel driver's topology (num_sdma_engines + num_sdma_xgmi_engines); 0 when unknown.
int sdma_engine_count(int device);

// Copy timestamps (hsa_amd_profiling_get_async_copy_time, converted to steady_clock ns) of copies
// whose completion signals the engine reports while a tracer is running.
bool tracing();
void record_copy(const Signal& completion, std::uint64_t bytes);
Maybe<std::unique_ptr<CopyTracer>> make_tracer();

}  // namespace dmabench::gpu::hsa
