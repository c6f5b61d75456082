#include "engines/gpu_operation.hpp"

#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "core/datagen.hpp"
#include "engines/host_validation.hpp"
#include "team/team.hpp"

namespace dmabench {

GpuOperation::GpuOperation(const Plan& plan, std::vector<int> waited, const gpu::Allocator& allocator, bool maps_peers)
    : plan_(plan), waited_(std::move(waited)) {
  src_.resize(plan.ranks());
  dst_.resize(plan.ranks());
  streams_.resize(plan.ranks());
  std::string error;
  try {
    for (int r : team::local_ranks(plan)) {
      streams_[r] = std::make_unique<gpu::Stream>(device(r));
      src_[r] = allocate_buffer(r, plan.src_location(r), plan.src_allocation(r), "src", allocator);
      dst_[r] = allocate_buffer(r, plan.dst_location(r), plan.dst_allocation(r), "dst", allocator);
    }
  } catch (const std::exception& e) {
    if (!team::world().multi()) throw;
    error = e.what();
  }
  if (!team::world().multi()) return;
  // Every process's handles (or its error), then the other ranks' buffers opened here.
  const int me = team::world().rank();
  std::pair<team::Blob, team::Blob> mine;  // its source's and destination's IPC handles
  if (error.empty() && maps_peers && me < plan.ranks()) {
    try {
      mine = {team::Blob{gpu::ipc_handle(src_[me].get())}, team::Blob{gpu::ipc_handle(dst_[me].get())}};
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  const auto all = team::share(mine, error);
  if (!maps_peers || me >= plan.ranks()) return;  // a process outside the plan addresses nothing
  for (int r = 0; r < plan.ranks(); ++r) {
    if (r == me) continue;
    const auto& [src, dst] = all[r];
    if (src.bytes.empty() || dst.bytes.empty()) throw std::runtime_error(fmt::format("rank {} sent no buffer handle", r));
    src_[r] = gpu::ipc_open(device(me), src.bytes);
    dst_[r] = gpu::ipc_open(device(me), dst.bytes);
  }
}

gpu::Memory GpuOperation::allocate_buffer(int rank, const Location& at, std::size_t bytes, const char* side,
                                          const gpu::Allocator& allocator) {
  if (!at.host) return allocator(device(rank), bytes);
  hostmem::BufferInfo info = buffer_info(rank, side, at, bytes);
  gpu::Memory m = gpu::allocate_host(at.kind, bytes, at.node, info);
  host_buffers_.push_back(std::move(info));
  return m;
}

const gpu::Stream& GpuOperation::stream(int rank) const {
  if (!streams_[rank]) throw std::logic_error(fmt::format("internal error: rank {} has no stream in this process", rank));
  return *streams_[rank];
}

void GpuOperation::wait() {
  for (int r : waited_)
    if (streams_[r]) streams_[r]->synchronize();
}

void GpuOperation::close_peers() {
  for (const auto& s : streams_)
    if (s) s->synchronize();
  for (int r = 0; r < plan_.ranks(); ++r)
    if (!team::local(r)) {
      src_[r].reset();  // closes the IPC mapping (gpu::ipc_open's deleter)
      dst_[r].reset();
    }
}

// Every set of a rank's source is one run of the rank's data stream: set s holds the stream's bytes
// from s * src_stride, so no two sets (and no two operations) carry the same bytes.
void GpuOperation::fill_sources(std::uint64_t seed) {
  for (int r : team::local_ranks(plan_)) {
    if (plan_.src_location(r).host)  // host buffers are written by the host, whatever their kind
      fill_stream(reinterpret_cast<unsigned char*>(src(r)), plan_.src_allocation(r), datagen::stream_key(seed, r));
    else
      gpu::fill(src(r), plan_.src_allocation(r), datagen::stream_key(seed, r), 0, stream(r));
  }
  for (int r : team::local_ranks(plan_)) stream(r).synchronize();
}

void GpuOperation::poison_destinations(std::uint64_t seed) {
  for (int r : team::local_ranks(plan_)) {
    const std::uint64_t key = datagen::stream_key(seed ^ datagen::kPoisonSalt, r);
    if (plan_.dst_location(r).host)
      fill_stream(reinterpret_cast<unsigned char*>(dst(r)), plan_.dst_allocation(r), key);
    else
      gpu::fill(dst(r), plan_.dst_allocation(r), key, 0, stream(r));
  }
  // in-place blocks: in the destination before the operation starts
  for (int s = 0; s < sets(); ++s)
    for (const Transfer& t : plan_.preset)
      if (team::local(t.dst_rank))
        gpu::copy_async(dst(t.dst_rank, s) + t.dst_offset, src(t.src_rank, s) + t.src_offset, t.bytes, stream(t.dst_rank));
  for (int r : team::local_ranks(plan_)) stream(r).synchronize();
}

std::optional<Mismatch> GpuOperation::check_destinations(const Plan& expected, std::uint64_t seed) {
  // The plan writes every destination byte exactly once (Plan::check), so checking each
  // transfer's destination range against its source bytes checks every destination byte; with
  // buffer rotation, in every set (offsets below are from the start of the rank's first set).
  // In a multi-process run each process checks its own rank's destination.
  // Host destinations are read by the host; device destinations by the GPU's check kernel. Bytes no
  // transfer writes (block layouts in a pool) must still hold the poison.
  if (expected.sets != plan_.sets) throw std::logic_error("check_destinations: the plan's buffer sets differ from the operation's");
  std::optional<Mismatch> first = first_host_mismatch(expected, seed, [&](int r) -> const unsigned char* {
    return team::local(r) && plan_.dst_location(r).host ? reinterpret_cast<const unsigned char*>(dst(r)) : nullptr;
  });
  auto keep = [&](const Mismatch& m) {
    if (!first || m.rank < first->rank || (m.rank == first->rank && m.offset < first->offset)) first = m;
  };
  for (int s = 0; s < expected.sets; ++s)
    for (int r = 0; r < expected.ranks(); ++r) {
      if (!team::local(r) || plan_.dst_location(r).host) continue;
      const std::uint64_t key = datagen::stream_key(seed ^ datagen::kPoisonSalt, r);
      for (const auto& [begin, end] : expected.unwritten(r)) {
        const std::size_t at = s * expected.dst_stride(r) + begin;
        if (auto bad = gpu::first_mismatch(dst(r) + at, end - begin, key, at, stream(r)))
          keep(Mismatch{.rank = r, .offset = at + *bad, .expected = datagen::byte_at(key, at + *bad),
                        .got = gpu::read_byte(dst(r), at + *bad)});
      }
    }
  for (int s = 0; s < expected.sets; ++s)
    for (const Transfer& t : expected.writes()) {
      if (!team::local(t.dst_rank) || plan_.dst_location(t.dst_rank).host) continue;
      const std::uint64_t key = datagen::stream_key(seed, t.src_rank);
      const std::size_t src_at = s * expected.src_stride(t.src_rank) + t.src_offset;
      const std::size_t dst_at = s * expected.dst_stride(t.dst_rank) + t.dst_offset;
      auto bad = gpu::first_mismatch(dst(t.dst_rank) + dst_at, t.bytes, key, src_at, stream(t.dst_rank));
      if (!bad) continue;
      keep(Mismatch{.rank = t.dst_rank,
                    .offset = dst_at + *bad,
                    .expected = datagen::byte_at(key, src_at + *bad),
                    .got = gpu::read_byte(dst(t.dst_rank), dst_at + *bad)});
    }
  return first;
}

WhyNot gpu_memory_shortfall(const Plan& plan) {
  constexpr std::size_t kHeadroom = std::size_t{512} << 20;  // runtime, NCCL and kernels need some too
  std::map<int, std::size_t> need;
  std::size_t host = 0;
  for (int r : team::local_ranks(plan)) {
    (plan.src_location(r).host ? host : need[plan.devices[r]]) += plan.src_allocation(r);
    (plan.dst_location(r).host ? host : need[plan.devices[r]]) += plan.dst_allocation(r);
  }
  if (host)
    if (auto why = host_memory_shortfall(host)) return why;
  for (const auto& [dev, bytes] : need) {
    const std::size_t free_b = gpu::free_memory(dev);
    if (bytes + kHeadroom > free_b)
      return fmt::format("needs {:.2f} GiB of buffers on GPU {} (plus {:.1f} GiB headroom) but only {:.2f} GiB is free",
                         bytes / 1073741824.0, dev, kHeadroom / 1073741824.0, free_b / 1073741824.0);
  }
  return std::nullopt;
}

}  // namespace dmabench
