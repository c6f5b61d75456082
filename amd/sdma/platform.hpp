#pragma once
// What the sdma engine needs from the machine that runs its packets, behind one interface with two
// implementations: KFD user-mode SDMA queues through libhsakmt (gpu/kfd.cpp, AMD GPUs) and the
// software SDMA engine (amd/sdma/soft_engine.cpp: CPU threads that execute the same packets; CI and
// the host backend). No vendor header.
//
// Addresses in packets are plain 64-bit virtual addresses: KFD gives an allocation one address for
// the CPU and every GPU it is mapped to, and the software engine runs in the process's address space.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/host_memory.hpp"  // HostKind, hostmem::BufferInfo (vendor-neutral)
#include "core/why_not.hpp"

namespace dmabench::amd::sdma {

// A queue's ring and its pointer cells, as KFD's HsaQueueResource gives them (SDMA-FACTS.md §2.4):
// rptr and wptr are 64-bit byte counts that only increase; ring offset = value mod ring_bytes.
struct QueueCells {
  std::uint32_t* ring = nullptr;
  std::uint64_t ring_bytes = 0;            // a power of two
  volatile std::uint64_t* rptr = nullptr;  // written by the engine
  volatile std::uint64_t* wptr = nullptr;  // written by the producer
};

class Queue {
 public:
  virtual ~Queue() = default;
  virtual const QueueCells& cells() const = 0;
  // Publishes `wptr` (release order after the ring writes) in the wptr cell, then rings the doorbell
  // with the same value: the one submission path (host producers; the software engine's GPU stand-in).
  virtual void submit(std::uint64_t wptr) = 0;
  virtual int device() const = 0;
  virtual int engine() const = 0;          // SDMA engine id (0-based over PCIe then xGMI engines)
  virtual std::string describe() const = 0;  // e.g. "KFD SDMA_BY_ENG_ID queue 3 on engine 14"
  // Why the queue stopped executing (the software engine's "unknown opcode ... at ring offset ..."),
  // or nullopt. KFD queues report nothing here: a hardware fault surfaces as a timeout.
  virtual WhyNot fault() const { return std::nullopt; }
};

// Packets a GPU writes into a ring (submit=gpu): the dwords the host encoded, to be placed from byte
// position `from` on, then published. No packet crosses the ring's end, but the dwords may: where a packet
// would, the RingWriter pads to the end with a NOP and goes on at offset 0, so the writer wraps at the end.
struct StagedPackets {
  std::uint64_t from = 0;
  std::vector<std::uint32_t> dwords;
};

// A clock-counter reading (hsaKmtGetClockCounters): the GPU counter that TIMESTAMP packets read, and
// the host's steady clock (ns) taken at the same moment.
struct ClockPair {
  std::uint64_t gpu_ticks = 0;
  double host_ns = 0;
};

// A GPU's TIMESTAMP ticks as host steady-clock ns: the line through two clock-counter pairs of that same GPU,
// taken before and after the ticks (ROCr's GpuAgent::TranslateTime converts each agent's SDMA timestamps with
// that agent's own pairs; GPUs' counters differ in offset and need not share a rate).
struct ClockMap {
  ClockPair begin;
  double ns_per_tick = 0;
  // Why not: the counter did not advance between the pairs.
  static Maybe<ClockMap> between(const ClockPair& begin, const ClockPair& end) {
    if (end.gpu_ticks <= begin.gpu_ticks) return Maybe<ClockMap>::no("the GPU clock counter did not advance while tracing");
    return ClockMap{begin, (end.host_ns - begin.host_ns) / static_cast<double>(end.gpu_ticks - begin.gpu_ticks)};
  }
  double host_ns(std::uint64_t ticks) const {
    return begin.host_ns + (static_cast<double>(ticks) - static_cast<double>(begin.gpu_ticks)) * ns_per_tick;
  }
};

// Memory the platform allocates: freed when the last owner lets go.
using Allocation = std::shared_ptr<void>;

// A host buffer as a copy endpoint (a plan's Location in host memory): the host fills, poisons and checks
// it through `memory` (its CPU address); packets address it at `device_address`, which is the same address
// except where the GPU maps the pages elsewhere (registered memory on KFD: the userptr's GPU mapping lies in
// the GPU's own aperture, the address hsaKmtMapMemoryToGPUNodes returns).
struct HostBuffer {
  Allocation memory;
  std::uint64_t device_address = 0;
};

class Platform {
 public:
  virtual ~Platform() = default;
  virtual std::string name() const = 0;        // "software SDMA engine", "KFD (libhsakmt ...)"
  // False for the software engine: its times are CPU-thread times, never hardware times.
  virtual bool hardware_times() const = 0;
  virtual int device_count() const = 0;
  virtual int engine_count(int device) const = 0;      // SDMA engines of the device (PCIe + xGMI)
  virtual int first_xgmi_engine(int device) const = 0;  // engines below it face the host (PCIe)
  // The device's ISA ("gfx942"), where the platform knows it ("" otherwise): engine rules differ per ISA.
  virtual std::string gfx_target(int device) const {
    (void)device;
    return {};
  }
  // Why engine `engine` of `device` cannot take a queue, or nullopt: beyond the engines the device counts, or
  // counted but fused off (amd/topology.hpp usable_engines). Checked before any queue is made: a queue on an
  // engine that is not there hangs instead of failing.
  virtual WhyNot engine_unusable(int device, int engine) const {
    if (engine < 0 || engine >= engine_count(device))
      return "engine " + std::to_string(engine) + " does not exist: device " + std::to_string(device) + " has " +
             std::to_string(engine_count(device)) + " SDMA engines";
    return std::nullopt;
  }
  // Why `device`'s engines cannot complete a command with an ATOMIC on system memory (no PCIe 64-bit atomics on
  // its link to the CPU: the word would never change), or nullopt (amd/topology.hpp host_atomics).
  virtual WhyNot host_atomics_unsupported(int device) const {
    (void)device;
    return std::nullopt;
  }
  // The driver's recommended engine for copies src -> dst (KFD's per-link recommended_sdma_engine_id
  // mask with a single bit), or -1 where there is none.
  virtual int recommended_engine(int src, int dst) const = 0;
  // Device memory of `device` (VRAM) that every device in `peers` can address; zero-initialized
  // is not promised.
  virtual Allocation alloc_device(int device, std::size_t bytes, const std::vector<int>& peers) = 0;
  // Host memory every device in `devices` can address (signals, trigger words).
  virtual Allocation alloc_host(std::size_t bytes, const std::vector<int>& devices) = 0;
  // Why host memory of `kind` cannot be a copy endpoint here (e.g. pageable pages that no GPU maps), or nullopt.
  virtual WhyNot host_kind_unsupported(HostKind kind) const = 0;
  // Host memory of `kind` that every device in `devices` can address, its pages bound to NUMA node `node`
  // (-1: wherever the kernel puts them); fills info's method, alloc_s, register_s and placement (read back
  // from the kernel). Throws on failure, and for a kind host_kind_unsupported() refuses.
  virtual HostBuffer alloc_host_buffer(HostKind kind, std::size_t bytes, int node, const std::vector<int>& devices,
                                       hostmem::BufferInfo& info) = 0;
  // Copies between host memory and memory from alloc_device (validation, never timed).
  virtual void write(void* device_dst, const void* host_src, std::size_t bytes) = 0;
  virtual void read(void* host_dst, const void* device_src, std::size_t bytes) = 0;
  // A queue on engine `engine` of `device`, with a ring of `ring_bytes` (a power of two), or why not.
  virtual Maybe<std::unique_ptr<Queue>> create_queue(int device, int engine, std::size_t ring_bytes) = 0;
  virtual ClockPair clock_counters(int device) = 0;
  // GPU-initiated work: issued asynchronously on `device` (a one-block GPU kernel on KFD queues; a stand-in
  // thread per device on the software engine), in issue order per device. Why it cannot run here, or nullopt.
  virtual WhyNot gpu_initiated_unsupported() const = 0;
  // trigger=gpu-flag: the GPU stores `value` to the 64-bit word (system scope, after a fence).
  virtual void gpu_store(int device, std::uint64_t* word, std::uint64_t value) = 0;
  // submit=gpu: the GPU copies `staged.dwords` into the queue's ring from byte position `staged.from` on
  // (wrapping at the ring's end), then
  // publishes the write pointer from + 4 * n and rings the doorbell with it (Queue::submit's order).
  virtual void gpu_submit(int device, Queue& queue, const StagedPackets& staged) = 0;
  // What the results' details record about the platform (versions, queue types, clock rate).
  virtual nlohmann::json describe() const = 0;
};

}  // namespace dmabench::amd::sdma
