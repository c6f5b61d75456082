#pragma once
// What every GPU engine's operation shares: one source and one destination buffer per rank on the
// rank's device, one stream per rank, and validation through the GPU layer's kernels.
// In a multi-process run (team/team.hpp) only this process's rank has buffers and a stream here; the
// other ranks' buffers are opened through interprocess handles (when the engine addresses them), and
// fill, poison, check and wait touch this process's rank only.
// Vendor-neutral: it sees only gpu/gpu.hpp.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engines/buffer_pool.hpp"
#include "engines/engine.hpp"
#include "gpu/gpu.hpp"

namespace dmabench {

// How an operation allocates its device buffers: the runtime's allocator (kept across cases by the sweep's
// buffer pool) or a library's (nccl's ncclMemAlloc for its copy-engine collectives: never pooled, each case
// registers its buffers with its own communicator).
struct DeviceAllocator {
  std::string name = "gpu";
  gpu::Allocator make = gpu::allocate;
  bool pooled = true;
};

class GpuOperation : public Operation {
 public:
  ~GpuOperation() override;
  void wait() override;
  void close_peers() override;
  void fill_sources(std::uint64_t seed) override;
  void poison_destinations(std::uint64_t seed) override;
  std::optional<Mismatch> check_destinations(const Plan& expected, std::uint64_t seed) override;
  std::vector<hostmem::BufferInfo> host_buffers() const override { return host_buffers_; }

 protected:
  // Allocates the plan's buffers; `waited` are the ranks whose streams wait() synchronizes
  // (the ranks that receive work). `maps_peers`: in a multi-process run, open the other ranks'
  // buffers here (engines whose copies or kernels address them; not a library with its own transport).
  // Collective in a multi-process run.
  GpuOperation(const Plan& plan, std::vector<int> waited, const DeviceAllocator& allocator = {}, bool maps_peers = true);
  const Plan& plan() const { return plan_; }
  int device(int rank) const { return plan_.devices[rank]; }
  // The rank's stream (ranks of this process only).
  const gpu::Stream& stream(int rank) const;
  // Rank's buffers of buffer set `set` (Plan::sets; the k-th launch moves set k mod sets).
  char* src(int rank, int set = 0) const { return base(src_, peer_src_, rank) + set * plan_.src_stride(rank); }
  char* dst(int rank, int set = 0) const { return base(dst_, peer_dst_, rank) + set * plan_.dst_stride(rank); }
  int sets() const { return plan_.sets; }

 private:
  Plan plan_;
  std::vector<BufferLease> src_, dst_;              // this process's ranks' buffers
  std::vector<gpu::Memory> peer_src_, peer_dst_;    // other processes' ranks' buffers, opened here
  std::vector<std::unique_ptr<gpu::Stream>> streams_;  // null for ranks of other processes
  std::vector<int> waited_;
  std::vector<hostmem::BufferInfo> host_buffers_;
  bool checked_ = false;  // the last check of the destinations found every byte right
  static char* base(const std::vector<BufferLease>& own, const std::vector<gpu::Memory>& peer, int rank) {
    return own[rank] ? own[rank].data() : static_cast<char*>(peer[rank].get());
  }
  // The rank's buffer on its device (the allocator's) or, where the plan puts it, in host memory.
  BufferLease allocate_buffer(int rank, const Location& at, std::size_t bytes, const char* side,
                              const DeviceAllocator& allocator);
};

// Why the plan's buffers (of this process's ranks) would not fit in the devices' free memory (with
// headroom), or its host buffers in the host's, or nullopt.
WhyNot gpu_memory_shortfall(const Plan& plan);

}  // namespace dmabench
