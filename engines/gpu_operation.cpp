#include "engines/gpu_operation.hpp"

#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "core/datagen.hpp"

namespace dmabench {

GpuOperation::GpuOperation(const Plan& plan, std::vector<int> waited, const gpu::Allocator& allocator)
    : plan_(plan), waited_(std::move(waited)) {
  for (int r = 0; r < plan.ranks(); ++r) {
    streams_.emplace_back(device(r));
    src_.push_back(allocator(device(r), plan.src_allocation(r)));
    dst_.push_back(allocator(device(r), plan.dst_allocation(r)));
  }
}

void GpuOperation::wait() {
  for (int r : waited_) streams_[r].synchronize();
}

// Every set of a rank's source is one run of the rank's data stream: set s holds the stream's bytes
// from s * src_stride, so no two sets (and no two operations) carry the same bytes.
void GpuOperation::fill_sources(std::uint64_t seed) {
  for (int r = 0; r < plan_.ranks(); ++r)
    gpu::fill(src(r), plan_.src_allocation(r), datagen::stream_key(seed, r), 0, streams_[r]);
  for (auto& s : streams_) s.synchronize();
}

void GpuOperation::poison_destinations(std::uint64_t seed) {
  for (int r = 0; r < plan_.ranks(); ++r)
    gpu::fill(dst(r), plan_.dst_allocation(r), datagen::stream_key(seed ^ datagen::kPoisonSalt, r), 0, streams_[r]);
  // in-place blocks: in the destination before the operation starts
  for (int s = 0; s < sets(); ++s)
    for (const Transfer& t : plan_.preset)
      gpu::copy_async(dst(t.dst_rank, s) + t.dst_offset, src(t.src_rank, s) + t.src_offset, t.bytes, streams_[t.dst_rank]);
  for (auto& s : streams_) s.synchronize();
}

std::optional<Mismatch> GpuOperation::check_destinations(const Plan& expected, std::uint64_t seed) {
  // The plan writes every destination byte exactly once (Plan::check), so checking each
  // transfer's destination range against its source bytes checks every destination byte; with
  // buffer rotation, in every set (offsets below are from the start of the rank's first set).
  if (expected.sets != plan_.sets) throw std::logic_error("check_destinations: the plan's buffer sets differ from the operation's");
  std::optional<Mismatch> first;
  for (int s = 0; s < expected.sets; ++s)
    for (const Transfer& t : expected.writes()) {
      const std::uint64_t key = datagen::stream_key(seed, t.src_rank);
      const std::size_t src_at = s * expected.src_stride(t.src_rank) + t.src_offset;
      const std::size_t dst_at = s * expected.dst_stride(t.dst_rank) + t.dst_offset;
      auto bad = gpu::first_mismatch(dst(t.dst_rank) + dst_at, t.bytes, key, src_at, streams_[t.dst_rank]);
      if (!bad) continue;
      Mismatch m{.rank = t.dst_rank,
                 .offset = dst_at + *bad,
                 .expected = datagen::byte_at(key, src_at + *bad),
                 .got = gpu::read_byte(dst(t.dst_rank), dst_at + *bad)};
      if (!first || m.rank < first->rank || (m.rank == first->rank && m.offset < first->offset)) first = m;
    }
  return first;
}

WhyNot gpu_memory_shortfall(const Plan& plan) {
  constexpr std::size_t kHeadroom = std::size_t{512} << 20;  // runtime, NCCL and kernels need some too
  std::map<int, std::size_t> need;
  for (int r = 0; r < plan.ranks(); ++r) need[plan.devices[r]] += plan.src_allocation(r) + plan.dst_allocation(r);
  for (const auto& [dev, bytes] : need) {
    const std::size_t free_b = gpu::free_memory(dev);
    if (bytes + kHeadroom > free_b)
      return fmt::format("needs {:.2f} GiB of buffers on GPU {} (plus {:.1f} GiB headroom) but only {:.2f} GiB is free",
                         bytes / 1073741824.0, dev, kHeadroom / 1073741824.0, free_b / 1073741824.0);
  }
  return std::nullopt;
}

}  // namespace dmabench
