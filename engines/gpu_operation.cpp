#include "engines/gpu_operation.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "core/datagen.hpp"
#include "engines/host_validation.hpp"
#include "team/team.hpp"

namespace dmabench {

GpuOperation::GpuOperation(const Plan& plan, std::vector<int> waited, const DeviceAllocator& allocator, bool maps_peers)
    : plan_(plan), waited_(std::move(waited)) {
  src_.resize(plan.ranks());
  dst_.resize(plan.ranks());
  peer_src_.resize(plan.ranks());
  peer_dst_.resize(plan.ranks());
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
      mine = {team::Blob{gpu::ipc_handle(src_[me].data())}, team::Blob{gpu::ipc_handle(dst_[me].data())}};
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  const auto all = team::share(mine, error);
  if (!maps_peers || me >= plan.ranks()) return;  // a process outside the plan addresses nothing
  for (int r = 0; r < plan.ranks(); ++r) {
    if (r == me) continue;
    const auto& [src, dst] = all[r];
    // a buffer of 0 bytes (copy's receiver has no source) has no handle; any other must have one
    if ((src.bytes.empty() && plan.src_allocation(r) > 0) || (dst.bytes.empty() && plan.dst_allocation(r) > 0))
      throw std::runtime_error(fmt::format("rank {} sent no buffer handle", r));
    peer_src_[r] = gpu::ipc_open(device(me), src.bytes);
    peer_dst_[r] = gpu::ipc_open(device(me), dst.bytes);
  }
}

GpuOperation::~GpuOperation() {
  // a destination whose bytes were not found right (or never checked) may have been written anywhere: the next
  // case that borrows it poisons all of it
  if (!checked_)
    for (auto& d : dst_)
      if (d) d.state().forget();
  // no work of the case (on its streams or a derived engine's) may still touch a buffer once it goes back to the
  // pool for the next case
  std::vector<int> devices;
  for (int r : team::local_ranks(plan_))
    if (std::find(devices.begin(), devices.end(), device(r)) == devices.end()) devices.push_back(device(r));
  for (int d : devices) {
    try {
      gpu::synchronize_device(d);
    } catch (...) {  // a failed device: its error was the case's
    }
  }
}

BufferLease GpuOperation::allocate_buffer(int rank, const Location& at, std::size_t bytes, const char* side,
                                          const DeviceAllocator& allocator) {
  if (!at.host)
    return lend_buffer(BufferPlace{.maker = allocator.name, .device = device(rank)}, bytes,
                       [&](hostmem::BufferInfo&) { return allocator.make(device(rank), bytes); }, allocator.pooled);
  BufferLease b = lend_buffer(BufferPlace{.maker = "gpu", .host = true, .kind = at.kind, .node = at.node}, bytes,
                              [&](hostmem::BufferInfo& info) { return gpu::allocate_host(at.kind, bytes, at.node, info); });
  host_buffers_.push_back(buffer_info(rank, side, at, b));
  return b;
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
  for (auto* peers : {&peer_src_, &peer_dst_})
    for (auto& m : *peers) m.reset();  // closes the IPC mapping (gpu::ipc_open's deleter)
}

namespace {

// The datagen stream `key` into the ranges of a rank's buffer (host buffers by the host, device buffers by
// the GPU's fill kernel on `stream`, not waited for).
void fill(char* base, bool host, const ByteRanges& ranges, std::uint64_t key, const gpu::Stream& stream) {
  if (host) return fill_ranges(reinterpret_cast<unsigned char*>(base), ranges, key);
  for (const auto& [begin, end] : ranges) gpu::fill(base + begin, end - begin, key, begin, stream);
}

}  // namespace

// Every set of a rank's source is one run of the rank's data stream: set s holds the stream's bytes
// from s * src_stride, so no two sets (and no two operations) carry the same bytes. Only the bytes the
// plan reads are written: a buffer kept from an earlier case is not rewritten whole.
void GpuOperation::fill_sources(std::uint64_t seed) {
  for (int r : team::local_ranks(plan_)) {
    if (!src_[r]) continue;  // a rank that sends nothing has no source
    const ByteRanges read = plan_.read_ranges(r);
    fill(src(r), plan_.src_location(r).host, read, datagen::stream_key(seed, r), stream(r));
    BufferState& st = src_[r].state();
    st.dirty.insert(st.dirty.end(), read.begin(), read.end());  // no longer the resting poison there
  }
  for (int r : team::local_ranks(plan_)) stream(r).synchronize();
}

// The destinations hold the resting poison (engines/buffer_pool.hpp) everywhere: a buffer of this case's own,
// or one whose state is unknown, is poisoned whole; a buffer kept from an earlier case only where that case
// wrote. Its state then says that this operation's writes may change it.
void GpuOperation::poison_destinations(std::uint64_t) {
  checked_ = false;
  for (int r : team::local_ranks(plan_)) {
    if (!dst_[r]) continue;  // a rank that receives nothing has no destination
    BufferState& st = dst_[r].state();
    fill(dst(r), plan_.dst_location(r).host, to_restore(st, plan_.dst_allocation(r)), resting_key(), stream(r));
    st.resting = true;
    st.dirty = plan_.written_ranges(r);
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
  // transfer writes (block layouts in a pool) must still hold the resting poison.
  if (expected.sets != plan_.sets) throw std::logic_error("check_destinations: the plan's buffer sets differ from the operation's");
  checked_ = false;
  std::optional<Mismatch> first = first_host_mismatch(expected, seed, [&](int r) {
    const bool here = team::local(r) && plan_.dst_location(r).host;
    return HostDestination{here ? reinterpret_cast<const unsigned char*>(dst(r)) : nullptr, resting_key()};
  });
  auto keep = [&](const Mismatch& m) {
    if (!first || m.rank < first->rank || (m.rank == first->rank && m.offset < first->offset)) first = m;
  };
  auto check = [&](int r, std::size_t at, std::size_t bytes, std::uint64_t key, std::size_t index) {
    if (auto bad = gpu::first_mismatch(dst(r) + at, bytes, key, index, stream(r)))
      keep(Mismatch{.rank = r, .offset = at + *bad, .expected = datagen::byte_at(key, index + *bad),
                    .got = gpu::read_byte(dst(r), at + *bad)});
  };
  for (int r = 0; r < expected.ranks(); ++r) {
    if (!team::local(r) || plan_.dst_location(r).host) continue;
    const ByteRanges gaps = expected.unwritten(r);  // the same in every set
    for (int s = 0; s < expected.sets; ++s)
      for (const auto& [begin, end] : gaps) {
        const std::size_t at = s * expected.dst_stride(r) + begin;
        check(r, at, end - begin, resting_key(), at);
      }
  }
  const std::vector<Transfer> writes = expected.writes();
  for (int s = 0; s < expected.sets; ++s)
    for (const Transfer& t : writes) {
      if (!team::local(t.dst_rank) || plan_.dst_location(t.dst_rank).host) continue;
      check(t.dst_rank, s * expected.dst_stride(t.dst_rank) + t.dst_offset, t.bytes, datagen::stream_key(seed, t.src_rank),
            s * expected.src_stride(t.src_rank) + t.src_offset);
    }
  checked_ = !first;
  return first;
}

WhyNot gpu_memory_shortfall(const Plan& plan) {
  constexpr std::size_t kHeadroom = std::size_t{512} << 20;  // runtime, NCCL and kernels need some too
  std::map<int, std::size_t> need;
  std::size_t host = 0;
  const BufferPool* pool = current_pool();  // what it keeps idle on a GPU is freed when a case needs the room
  for (int r : team::local_ranks(plan)) {
    (plan.src_location(r).host ? host : need[plan.devices[r]]) += plan.src_allocation(r);
    (plan.dst_location(r).host ? host : need[plan.devices[r]]) += plan.dst_allocation(r);
  }
  if (host)
    if (auto why = host_memory_shortfall(host)) return why;
  for (const auto& [dev, bytes] : need) {
    const std::size_t free_b = gpu::free_memory(dev) +
                               (pool ? pool->idle_bytes([dev = dev](const BufferPlace& p) { return !p.host && p.device == dev; }) : 0);
    if (bytes + kHeadroom > free_b)
      return fmt::format("needs {:.2f} GiB of buffers on GPU {} (plus {:.1f} GiB headroom) but only {:.2f} GiB is free",
                         bytes / 1073741824.0, dev, kHeadroom / 1073741824.0, free_b / 1073741824.0);
  }
  return std::nullopt;
}

}  // namespace dmabench
