// Kernels of the GPU layer: validation fill/check, the GPU-core copy, trigger and poll. One source,
// compiled by nvcc for NVIDIA and as HIP (hipcc) for AMD; only the GPU clock differs.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "core/datagen.hpp"
#include "gpu/gpu.hpp"
#include "gpu/vendor.hpp"

namespace dmabench::gpu {
namespace {

constexpr int kThreads = 256;
constexpr int kCopyThreads = 512;
constexpr int kCopyUnroll = 4;

int grid_for(std::size_t items, int threads, int max_blocks = 8192) {
  std::size_t blocks = (items + threads - 1) / threads;
  return static_cast<int>(std::max<std::size_t>(1, std::min<std::size_t>(blocks, max_blocks)));
}

GPU(Stream_t) native(const Stream& s) { return static_cast<GPU(Stream_t)>(s.native()); }

// Each thread handles groups of 8 destination bytes. When the stream index of byte 0 is a multiple
// of 8 and the buffer is 8-byte aligned, a group is one datagen word stored with one 8-byte store.
__global__ void fill_kernel(std::uint8_t* dst, std::size_t bytes, std::uint64_t key, std::uint64_t first, bool fast) {
  const std::size_t groups = (bytes + 7) / 8;
  for (std::size_t g = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t i0 = g * 8;
    if (fast && i0 + 8 <= bytes) {
      reinterpret_cast<std::uint64_t*>(dst)[g] = datagen::word(key, (first + i0) >> 3);
    } else {
      for (std::size_t i = i0; i < i0 + 8 && i < bytes; ++i) dst[i] = datagen::byte_at(key, first + i);
    }
  }
}

__global__ void check_kernel(const std::uint8_t* buf, std::size_t bytes, std::uint64_t key, std::uint64_t first, bool fast,
                             unsigned long long* first_bad) {
  const std::size_t groups = (bytes + 7) / 8;
  for (std::size_t g = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; g < groups;
       g += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t i0 = g * 8;
    if (fast && i0 + 8 <= bytes) {
      const std::uint64_t got = reinterpret_cast<const std::uint64_t*>(buf)[g];
      const std::uint64_t want = datagen::word(key, (first + i0) >> 3);
      if (got != want) {
        int b = 0;
        while (((got ^ want) >> (8 * b) & 0xff) == 0) ++b;
        atomicMin(first_bad, static_cast<unsigned long long>(i0 + b));
      }
    } else {
      for (std::size_t i = i0; i < i0 + 8 && i < bytes; ++i)
        if (buf[i] != datagen::byte_at(key, first + i)) {
          atomicMin(first_bad, static_cast<unsigned long long>(i));
          break;
        }
    }
  }
}

// The one copy loop of both copy kernels: this thread's elements first, first + stride, ... below end, loaded
// kCopyUnroll at a time before they are stored.
template <typename V>
__device__ __forceinline__ void copy_strided(const V* __restrict__ src, V* __restrict__ dst, std::size_t first,
                                             std::size_t end, std::size_t stride) {
  for (std::size_t base = first; base < end; base += stride * kCopyUnroll) {
    V v[kCopyUnroll];
#pragma unroll
    for (int k = 0; k < kCopyUnroll; ++k)
      if (base + k * stride < end) v[k] = src[base + k * stride];
#pragma unroll
    for (int k = 0; k < kCopyUnroll; ++k)
      if (base + k * stride < end) dst[base + k * stride] = v[k];
  }
}

template <typename V>
__global__ void __launch_bounds__(kCopyThreads) copy_kernel(const CopyJob* jobs, int blocks_per_job) {
  const CopyJob job = jobs[blockIdx.y];
  copy_strided(static_cast<const V*>(job.src), static_cast<V*>(job.dst),
               blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x, job.bytes / sizeof(V),
               static_cast<std::size_t>(blocks_per_job) * blockDim.x);
}

// The multiprocessor (NVIDIA SM, AMD CU) this block runs on.
__device__ __forceinline__ int sm_id() {
#if defined(DMABENCH_GPU_HIP)
  return static_cast<int>(__smid());
#else
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return static_cast<int>(id);
#endif
}

// The copy held to an SM budget: a one-dimensional grid of exactly the budget's blocks (so at most that
// many multiprocessors hold it), each taking items b, b + grid, ... of jobs x parts (item i is part
// i % parts of job i / parts: a job split so that a few large jobs still spread over the grid). Where
// sm_of_block is given (a CopyKernel's first launch only: no extra store in the launches timed after it),
// each block records the multiprocessor it ran on, for the record's sms_used.
template <typename V>
__global__ void __launch_bounds__(kCopyThreads) budget_copy_kernel(const CopyJob* jobs, int njobs, int parts, int* sm_of_block) {
  if (sm_of_block != nullptr && threadIdx.x == 0) sm_of_block[blockIdx.x] = sm_id();
  const long long items = static_cast<long long>(njobs) * parts;
  for (long long i = blockIdx.x; i < items; i += gridDim.x) {
    const CopyJob job = jobs[i / parts];
    const auto part = static_cast<std::size_t>(i % parts);
    const std::size_t n = job.bytes / sizeof(V);
    copy_strided(static_cast<const V*>(job.src), static_cast<V*>(job.dst), n * part / parts + threadIdx.x,
                 n * (part + 1) / parts, static_cast<std::size_t>(blockDim.x));
  }
}

// NVIDIA: %globaltimer (ns). AMD: s_memrealtime, a constant-rate counter (hipDeviceAttributeWallClockRate).
__device__ __forceinline__ std::uint64_t global_timer() {
#if defined(DMABENCH_GPU_HIP)
  return __builtin_amdgcn_s_memrealtime();
#else
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#endif
}

__global__ void trigger_kernel(std::uint32_t* flag, std::uint32_t value, std::uint64_t* stamp) {
  *stamp = global_timer();
  __threadfence_system();
  *reinterpret_cast<volatile std::uint32_t*>(flag) = value;
  __threadfence_system();
}

__global__ void poll_kernel(const std::uint32_t* slots, int count, std::uint32_t target, std::uint64_t* stamp) {
  const volatile std::uint32_t* v = slots;
  for (int i = 0; i < count; ++i)
    while (static_cast<std::int32_t>(v[i] - target) < 0) {
    }
  *stamp = global_timer();
  __threadfence_system();
}

// One 64-bit store with release order at system scope: every store this thread made before it (and, after a
// barrier, every store of the block's threads that fenced before that barrier) is visible to the whole system
// (host, SDMA engines) before this one. HIP: clang's __hip_atomic_store (ROCm >= 5.2's clang has it), as
// ROCm/mori stores the SDMA doorbell (include/mori/core/transport/sdma/anvil_device.hpp @ 624002c submitPacket:
// __hip_atomic_store relaxed at system scope, after an s_waitcnt(0) that waits for the wave's earlier stores;
// a release store here gives that order by itself; mori's older application/transport/sdma/anvil_device.hpp
// used plain stores after s_waitcnt(0)). CUDA (no sdma engine runs there): a system fence
// then a volatile 64-bit store, CUDA's documented publication pattern.
__device__ __forceinline__ void store_release_system(std::uint64_t* p, std::uint64_t v) {
#if defined(DMABENCH_GPU_HIP)
  __hip_atomic_store(p, v, __ATOMIC_RELEASE, __HIP_MEMORY_SCOPE_SYSTEM);
#else
  __threadfence_system();
  *reinterpret_cast<volatile std::uint64_t*>(p) = v;
#endif
}

// trigger=gpu-flag: releases the engines' POLL_REGMEM with one system-scope release store of the 64-bit word.
__global__ void store_u64_kernel(std::uint64_t* word, std::uint64_t value) {
  __threadfence_system();
  store_release_system(word, value);
}

// submit=gpu: the block's threads copy the packets into the ring; each thread fences its own stores at system scope
// before the barrier (a fence orders only the stores of the thread that issues it, so one thread's fence after the
// barrier says nothing about the other waves' ring dwords); then one thread publishes the write pointer and rings
// the doorbell, both 64-bit release stores at system scope (SDMA-FACTS.md §7; ROCm/mori anvil_device.hpp
// submitPacket stores wptr then doorbell with __hip_atomic_store; mori writes a packet and its doorbell from one
// thread, so it needs no barrier).
// The dwords go from ring dword `first` on, wrapping at the ring's end (`mask` = ring dwords - 1): the host pads
// a packet that would cross the end with a NOP and puts it at offset 0, so one submission may span the end.
__global__ void ring_submit_kernel(std::uint32_t* ring, std::uint64_t mask, std::uint64_t first, const std::uint32_t* src,
                                   std::size_t n, std::uint64_t* wptr, std::uint64_t* doorbell, std::uint64_t value) {
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x)
    reinterpret_cast<volatile std::uint32_t*>(ring)[(first + i) & mask] = src[i];
  __threadfence_system();  // this thread's ring dwords, visible system-wide before the barrier
  __syncthreads();
  if (threadIdx.x != 0) return;
  __threadfence_system();  // what the barrier made this thread observe, before the write pointer
  store_release_system(wptr, value);
  store_release_system(doorbell, value);
}

bool fast_path(const void* p, std::uint64_t first) {
  return reinterpret_cast<std::uintptr_t>(p) % 8 == 0 && first % 8 == 0;
}

}  // namespace

void fill(void* dst, std::size_t bytes, std::uint64_t key, std::uint64_t first_index, const Stream& stream) {
  if (bytes == 0) return;
  DMABENCH_GPU_CHECK(GPU(SetDevice)(stream.device()));
  fill_kernel<<<grid_for((bytes + 7) / 8, kThreads), kThreads, 0, native(stream)>>>(
      static_cast<std::uint8_t*>(dst), bytes, key, first_index, fast_path(dst, first_index));
  DMABENCH_GPU_CHECK(GPU(GetLastError)());
}

std::optional<std::size_t> first_mismatch(const void* buf, std::size_t bytes, std::uint64_t key,
                                          std::uint64_t first_index, const Stream& stream) {
  if (bytes == 0) return std::nullopt;
  DMABENCH_GPU_CHECK(GPU(SetDevice)(stream.device()));
  DeviceBuffer result(stream.device(), sizeof(unsigned long long));
  const unsigned long long none = std::numeric_limits<unsigned long long>::max();
  DMABENCH_GPU_CHECK(GPU(MemcpyAsync)(result.data(), &none, sizeof none, GPU(MemcpyHostToDevice), native(stream)));
  check_kernel<<<grid_for((bytes + 7) / 8, kThreads), kThreads, 0, native(stream)>>>(
      static_cast<const std::uint8_t*>(buf), bytes, key, first_index, fast_path(buf, first_index),
      static_cast<unsigned long long*>(result.data()));
  DMABENCH_GPU_CHECK(GPU(GetLastError)());
  unsigned long long bad = none;
  DMABENCH_GPU_CHECK(GPU(MemcpyAsync)(&bad, result.data(), sizeof bad, GPU(MemcpyDeviceToHost), native(stream)));
  stream.synchronize();
  if (bad == none) return std::nullopt;
  return static_cast<std::size_t>(bad);
}

void launch_trigger(const Stream& stream, std::uint32_t* flag, std::uint32_t value, std::uint64_t* stamp) {
  trigger_kernel<<<1, 1, 0, native(stream)>>>(flag, value, stamp);
  DMABENCH_GPU_CHECK(GPU(GetLastError)());
}

void launch_store_u64(const Stream& stream, std::uint64_t* word, std::uint64_t value) {
  DMABENCH_GPU_CHECK(GPU(SetDevice)(stream.device()));
  store_u64_kernel<<<1, 1, 0, native(stream)>>>(word, value);
  DMABENCH_GPU_CHECK(GPU(GetLastError)());
}

void launch_ring_submit(const Stream& stream, std::uint32_t* ring, std::uint64_t ring_bytes, std::uint64_t from,
                        const std::uint32_t* src, std::size_t n, std::uint64_t* wptr, std::uint64_t* doorbell,
                        std::uint64_t value) {
  if (ring_bytes < 4 || (ring_bytes & (ring_bytes - 1)) != 0 || from % 4 != 0 || n * 4 > ring_bytes)
    throw std::logic_error("launch_ring_submit: a ring of a power-of-two size, a dword position and at most a ring of dwords");
  DMABENCH_GPU_CHECK(GPU(SetDevice)(stream.device()));
  ring_submit_kernel<<<1, 256, 0, native(stream)>>>(ring, ring_bytes / 4 - 1, (from & (ring_bytes - 1)) / 4, src, n, wptr,
                                                    doorbell, value);
  DMABENCH_GPU_CHECK(GPU(GetLastError)());
}

void launch_poll(const Stream& stream, const std::uint32_t* slots, int count, std::uint32_t target, std::uint64_t* stamp) {
  poll_kernel<<<1, 1, 0, native(stream)>>>(slots, count, target, stamp);
  DMABENCH_GPU_CHECK(GPU(GetLastError)());
}

__global__ void empty_kernel() {}

void launch_empty(const Stream& stream) {
  DMABENCH_GPU_CHECK(GPU(SetDevice)(stream.device()));
  empty_kernel<<<1, 1, 0, native(stream)>>>();
  DMABENCH_GPU_CHECK(GPU(GetLastError)());
}

void preload_kernels(int device) {
  DMABENCH_GPU_CHECK(GPU(SetDevice)(device));
  GPU(FuncAttributes) attr{};
  auto load = [&](const void* fn) { DMABENCH_GPU_CHECK(GPU(FuncGetAttributes)(&attr, fn)); };
  load(reinterpret_cast<const void*>(fill_kernel));
  load(reinterpret_cast<const void*>(check_kernel));
  load(reinterpret_cast<const void*>(copy_kernel<uint4>));
  load(reinterpret_cast<const void*>(copy_kernel<unsigned char>));
  load(reinterpret_cast<const void*>(budget_copy_kernel<uint4>));
  load(reinterpret_cast<const void*>(budget_copy_kernel<unsigned char>));
  load(reinterpret_cast<const void*>(trigger_kernel));
  load(reinterpret_cast<const void*>(poll_kernel));
  load(reinterpret_cast<const void*>(empty_kernel));
}

CopyKernel::CopyKernel(int device, std::vector<CopyJob> jobs, int blocks_total, int sm_budget)
    : jobs_(static_cast<int>(jobs.size())), budget_(sm_budget) {
  if (jobs.empty()) return;
  if (blocks_total <= 0) blocks_total = 2 * properties(device).multiprocessors;
  std::size_t largest = 0;
  aligned16_ = true;
  for (const auto& j : jobs) {
    largest = std::max(largest, j.bytes);
    if ((reinterpret_cast<std::uintptr_t>(j.dst) | reinterpret_cast<std::uintptr_t>(j.src) | j.bytes) % 16 != 0)
      aligned16_ = false;
  }
  const std::size_t unit = aligned16_ ? 16 : 1;
  if (budget_ > 0) {
    // Parts per job: enough items for the grid, none smaller than one element per thread.
    const std::size_t most = std::max<std::size_t>(1, largest / unit / kCopyThreads);
    const std::size_t wanted = (static_cast<std::size_t>(budget_) + jobs.size() - 1) / jobs.size();
    parts_ = static_cast<int>(std::min(most, wanted));
    sm_of_block_ = DeviceBuffer(device, static_cast<std::size_t>(budget_) * sizeof(int));
    DMABENCH_GPU_CHECK(GPU(Memset)(sm_of_block_.data(), 0xff, sm_of_block_.size()));
  } else {
    // No more blocks per job than the largest job has work for.
    const std::size_t per_block = static_cast<std::size_t>(kCopyThreads) * kCopyUnroll * unit;
    const std::size_t needed = (largest + per_block - 1) / per_block;
    blocks_per_job_ = static_cast<int>(std::max<std::size_t>(
        1, std::min<std::size_t>(needed, static_cast<std::size_t>(std::max(1, blocks_total / jobs_)))));
  }
  table_ = DeviceBuffer(device, jobs.size() * sizeof(CopyJob));
  DMABENCH_GPU_CHECK(GPU(Memcpy)(table_.data(), jobs.data(), jobs.size() * sizeof(CopyJob), GPU(MemcpyHostToDevice)));
}

void CopyKernel::launch(const Stream& stream) {
  if (jobs_ == 0) return;
  const auto* table = static_cast<const CopyJob*>(table_.data());
  if (budget_ > 0) {
    int* sms = launched_ ? nullptr : static_cast<int*>(sm_of_block_.data());
    launched_ = true;
    if (aligned16_)
      budget_copy_kernel<uint4><<<budget_, kCopyThreads, 0, native(stream)>>>(table, jobs_, parts_, sms);
    else
      budget_copy_kernel<unsigned char><<<budget_, kCopyThreads, 0, native(stream)>>>(table, jobs_, parts_, sms);
  } else {
    const dim3 grid(blocks_per_job_, jobs_);
    if (aligned16_)
      copy_kernel<uint4><<<grid, kCopyThreads, 0, native(stream)>>>(table, blocks_per_job_);
    else
      copy_kernel<unsigned char><<<grid, kCopyThreads, 0, native(stream)>>>(table, blocks_per_job_);
  }
  DMABENCH_GPU_CHECK(GPU(GetLastError)());
}

long long CopyKernel::grid_blocks() const {
  return budget_ > 0 ? budget_ : static_cast<long long>(blocks_per_job_) * jobs_;
}

std::optional<int> CopyKernel::sms_used() const {
  if (budget_ <= 0 || jobs_ == 0) return std::nullopt;
  std::vector<int> ids(static_cast<std::size_t>(budget_));
  DMABENCH_GPU_CHECK(GPU(Memcpy)(ids.data(), sm_of_block_.data(), sm_of_block_.size(), GPU(MemcpyDeviceToHost)));
  if (std::find(ids.begin(), ids.end(), -1) != ids.end()) return std::nullopt;  // not launched yet
  std::sort(ids.begin(), ids.end());
  return static_cast<int>(std::unique(ids.begin(), ids.end()) - ids.begin());
}

}  // namespace dmabench::gpu
