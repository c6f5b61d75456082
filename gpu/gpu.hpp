#pragma once
// The GPU layer's vendor-neutral interface, implemented once for the CUDA and HIP runtimes
// (gpu/vendor.hpp). Only gpu/*.cu|.cpp include a vendor runtime header; everything
// else (engines, harness) sees these types. Every runtime call is checked and
// throws std::runtime_error with the call, file:line and the vendor's error string.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/host_memory.hpp"
#include "core/why_not.hpp"

namespace dmabench::gpu {

// "cuda" (NVIDIA, CUDA runtime) or "hip" (AMD, HIP runtime): the backend this build's GPU layer drives.
std::string_view backend_name();

// ---- devices -------------------------------------------------------------------------------
// Number of visible GPUs (at least 1), or the reason there is none: no driver or device (never an
// exception).
Maybe<int> device_count();

struct DeviceProps {
  int ordinal = 0;
  std::string name;
  std::string bus_id;          // "0000:06:00.0"
  std::size_t memory_bytes = 0;
  int copy_engines = 0;        // NVIDIA: asyncEngineCount; AMD: SDMA engines from the driver topology (0: unknown)
  int multiprocessors = 0;
  int cc_major = 0, cc_minor = 0;
  std::string arch;            // "sm_90", "gfx942:sramecc+:xnack-"
  int sdma_engines = -1;       // AMD: host-facing SDMA engines (num_sdma_engines), -1 unknown / NVIDIA
  int sdma_xgmi_engines = -1;  // AMD: xGMI SDMA engines (num_sdma_xgmi_engines), -1 unknown / NVIDIA
};
DeviceProps properties(int device);

struct PeerLink {
  bool access = false;       // can `from` load/store `to`'s memory
  int performance_rank = 0;  // the runtime's relative link performance (lower is better)
  bool native_atomics = false;
};
PeerLink peer_link(int from, int to);

// The ordinal of the visible GPU with this PCI bus id ("0000:06:00.0"), or -1 when it is not visible.
int device_by_bus_id(const std::string& bus_id);

// Enables peer access between every ordered pair that supports it (idempotent).
void enable_peer_access(const std::vector<int>& devices);
std::size_t free_memory(int device);

struct Versions {
  std::string runtime;        // e.g. "13.0"
  std::string driver_api;     // CUDA version the driver supports, e.g. "13.0"
  std::string kernel_driver;  // e.g. "580.159.04" (from /proc/driver/nvidia/version), or ""
};
Versions versions();

// ---- resources (RAII, move-only) -------------------------------------------------------------
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::size_t bytes);  // bytes == 0: no allocation
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return ptr_; }
  std::size_t size() const { return bytes_; }
  int device() const { return device_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  int device_ = -1;
};

// Device memory with its own release (runtime or library allocation); null for 0 bytes.
using Memory = std::unique_ptr<void, std::function<void(void*)>>;
using Allocator = std::function<Memory(int device, std::size_t bytes)>;
// cudaMalloc'd memory.
Memory allocate(int device, std::size_t bytes);

// Host memory of `kind` (core/host_memory.hpp: pinned, mapped, registered, pageable) placed on NUMA
// node `node` (-1: not bound), for the runtime's copies and, for mapped memory, kernels of any GPU (the
// pointer is the GPUs' address too: unified addressing is checked). Fills info's method, alloc_s,
// register_s and placement (read back from the kernel after allocation, never assumed).
Memory allocate_host(HostKind kind, std::size_t bytes, int node, hostmem::BufferInfo& info);

// Interprocess access (one process per rank): the handle of memory that gpu::allocate returned (the
// allocation's start; cudaIpcGetMemHandle / hipIpcGetMemHandle) as bytes, "" for null; and another
// process's memory opened from such a handle on `device` (peer access enabled as needed), closed
// when the Memory goes.
std::string ipc_handle(const void* base);
Memory ipc_open(int device, const std::string& handle);

class Stream {
 public:
  explicit Stream(int device);  // a non-blocking stream on `device`
  ~Stream();
  Stream(Stream&& o) noexcept;
  Stream& operator=(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  int device() const { return device_; }
  void synchronize() const;
  void* native() const { return handle_; }  // the vendor stream handle (for gpu/ only)

 private:
  void* handle_ = nullptr;
  int device_ = -1;
};

// Makes `device` current for the calling thread.
void set_device(int device);
// Waits until every stream of `device` has finished its work.
void synchronize_device(int device);

// Page-locked host memory mapped into every GPU's address space (flags the host and GPUs share).
class HostMapped {
 public:
  explicit HostMapped(std::size_t bytes);  // zero-filled
  ~HostMapped();
  HostMapped(const HostMapped&) = delete;
  HostMapped& operator=(const HostMapped&) = delete;
  void* data() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

class Event {
 public:
  // timing false: a completion marker only; true: a timing event (ce-batch's event_before needs one: engines/ce.cpp)
  explicit Event(int device, bool timing = false);
  ~Event();
  Event(Event&& o) noexcept;
  Event& operator=(Event&&) = delete;
  Event(const Event&) = delete;
  void record(const Stream& stream) const;
  void synchronize() const;
  void* native() const { return handle_; }

 private:
  void* handle_ = nullptr;
  int device_ = -1;
};

// `waiter` waits (on the GPU) for everything recorded in `event` so far.
void stream_wait_event(const Stream& waiter, const Event& event);

// ---- stream memory operations ------------------------------------------------------------------
// Why the device cannot wait on / write 32-bit values from a stream, or nullopt.
WhyNot stream_memops_unsupported(int device);
// The stream waits until the 32-bit word at `addr` (device or host-mapped memory) reaches `value`
// (wrap-safe: (int32)(*addr - value) >= 0). Work queued after it starts only then.
void stream_wait_value(const Stream& stream, const void* addr, std::uint32_t value);
// The stream writes `value` to `addr` once everything before it on the stream completed (with a
// memory barrier: the earlier copies' bytes are visible first).
void stream_write_value(const Stream& stream, void* addr, std::uint32_t value);

// ---- trigger and poll kernels (one thread each) ---------------------------------------------------
// Reads the GPU clock (%globaltimer, ns) into *stamp, then stores `value` to *flag (device memory)
// with a system-wide fence: the GPU-side trigger of pre-posted copies.
void launch_trigger(const Stream& stream, std::uint32_t* flag, std::uint32_t value, std::uint64_t* stamp);
// Spins until every one of `count` words at `slots` (device memory) reached `target`
// (wrap-safe), then writes %globaltimer to *stamp: GPU-side observation of completion.
void launch_poll(const Stream& stream, const std::uint32_t* slots, int count, std::uint32_t target, std::uint64_t* stamp);
// ---- GPU-initiated SDMA work (the sdma engine on KFD queues; one block each) ----------------------
// Stores `value` to the 64-bit *word (memory the GPU can address) after a system-wide fence.
void launch_store_u64(const Stream& stream, std::uint64_t* word, std::uint64_t value);
// Copies `n` dwords from `src` into the ring of `ring_bytes` (a power of two) from byte position `from` on,
// wrapping at its end, then (one thread, after a system-wide fence) stores `value` to the queue's 64-bit
// write-pointer cell and then to its doorbell: a GPU submitting SDMA packets to a user-mode queue, as ROCm's
// mori does (libhsakmt maps the doorbell page into the GPU's address space at its CPU address on discrete GPUs).
void launch_ring_submit(const Stream& stream, std::uint32_t* ring, std::uint64_t ring_bytes, std::uint64_t from,
                        const std::uint32_t* src, std::size_t n, std::uint64_t* wptr, std::uint64_t* doorbell,
                        std::uint64_t value);
// The trigger and poll kernels stamp the GPU clock: %globaltimer (ns) on NVIDIA, s_memrealtime
// ticks on AMD. Why this build/device cannot convert them to time (or nullopt), and the nanoseconds per tick.
WhyNot gpu_clock_unsupported(int device);
double gpu_clock_ns_per_tick(int device);
// A kernel of one thread that does nothing: what a launch costs (context.calibration).
void launch_empty(const Stream& stream);
// Loads every kernel of the GPU layer on every device now (a spinning kernel must never wait for
// a lazily loaded one).
void preload_kernels(int device);

// ---- graphs ---------------------------------------------------------------------------------------
// Captures the work issued to `origin` (and to streams joined to it through events) into a graph.
void begin_capture(const Stream& origin);
class Graph {
 public:
  Graph() = default;
  ~Graph();
  Graph(Graph&& o) noexcept;
  Graph& operator=(Graph&& o) noexcept;
  Graph(const Graph&) = delete;
  void launch(const Stream& stream) const;

 private:
  friend Graph end_capture(const Stream& origin);
  void* graph_ = nullptr;
  void* exec_ = nullptr;
};
Graph end_capture(const Stream& origin);

// Asynchronous copy between any two device pointers (peer access or not) on `stream`: the
// runtime's copy path, which uses the copy (DMA) engines (copy_kind() names the copy kind).
std::string copy_kind();
void copy_async(void* dst, const void* src, std::size_t bytes, const Stream& stream);

struct CopyJob;
struct CopyBatch;
// All of `batch`'s copies in one runtime call (cudaMemcpyBatchAsync: stream-ordered source access, with or
// without the prefer-overlap-with-compute hint). `device` is the device of the sources (the issuing GPU). No
// location hints (CUDA ignores them for memory CUDA allocated; taking them out changed nothing). An h2d batch's CPU
// time grows 2.4-5x without an event recorded on the stream just before it: the caller's choice (ce-batch's
// event_before; results/LAB-NOTES.md, 2026-12-06).
void copy_batch_async(const CopyBatch& batch, int device, const Stream& stream, bool prefer_overlap_with_compute = true);
// Why this runtime has no batched copies, or nullopt.
WhyNot copy_batch_unsupported();

// ---- kernels (gpu/kernels.cu) ----------------------------------------------------------
// Fills bytes [0, bytes) of `dst` with datagen::byte_at(key, first_index + i).
void fill(void* dst, std::size_t bytes, std::uint64_t key, std::uint64_t first_index, const Stream& stream);
// Offset of the first byte of `buf` that differs from datagen::byte_at(key, first_index + i), or
// nullopt. Synchronizes the stream.
std::optional<std::size_t> first_mismatch(const void* buf, std::size_t bytes, std::uint64_t key,
                                          std::uint64_t first_index, const Stream& stream);
std::uint8_t read_byte(const void* device_ptr, std::size_t offset);
// Synchronous small copies between host and device memory (flags, stamps).
void copy_to_host(void* host, const void* device_ptr, std::size_t bytes);
// Sets `count` 32-bit words at `device_ptr` to `value` (synchronous).
void fill_words(std::uint32_t* device_ptr, std::size_t count, std::uint32_t value);
// Overwrites one byte (used by tests that plant corruption).
void write_byte(void* device_ptr, std::size_t offset, std::uint8_t value);

struct CopyJob {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t bytes = 0;
};

// The three arrays one batched call takes, built once from the jobs (when the case is set up), so that issuing a batch
// builds nothing: the call is all that runs after event_before's record, as in tools/batch_submit_probe.cu. Built at
// issue, n entries of work sat between the record and the call, and at n >= 4096 the h2d batch took the driver's
// synchronous path where the probe did not (results/LAB-NOTES.md, 2026-12-06 sixth).
struct CopyBatch {
  CopyBatch() = default;
  explicit CopyBatch(const std::vector<CopyJob>& jobs) {
    for (const CopyJob& j : jobs) {
      dsts.push_back(j.dst);
      srcs.push_back(const_cast<void*>(j.src));  // the runtimes take void**: the sources are only read
      sizes.push_back(j.bytes);
    }
  }
  std::size_t size() const { return sizes.size(); }
  std::vector<void*> dsts, srcs;
  std::vector<std::size_t> sizes;
};

// A GPU-core copy: one kernel launch copies every job (each job gets a share of the blocks),
// loading from `src` and storing to `dst` (a peer's memory over NVLink when dst is remote).
class CopyKernel {
 public:
  // blocks_total: blocks for the whole launch (0: two per multiprocessor of `device`), a grid of
  // jobs x blocks per job. sm_budget > 0 instead holds the copy to that many thread blocks (so at most
  // that many multiprocessors): a one-dimensional grid of sm_budget blocks that share the jobs' parts.
  CopyKernel(int device, std::vector<CopyJob> jobs, int blocks_total, int sm_budget = 0);
  void launch(const Stream& stream);
  // The launch's thread blocks.
  long long grid_blocks() const;
  // Under a budget, the distinct multiprocessors the first launch's blocks ran on (synchronous read; only the
  // first launch records them); nullopt without a budget or before a launch.
  std::optional<int> sms_used() const;

 private:
  DeviceBuffer table_;
  DeviceBuffer sm_of_block_;  // under a budget: each block's multiprocessor
  int jobs_ = 0;
  int blocks_per_job_ = 1;
  int budget_ = 0;
  int parts_ = 1;
  bool aligned16_ = false;
  bool launched_ = false;  // the first launch recorded each block's multiprocessor
};

}  // namespace dmabench::gpu
