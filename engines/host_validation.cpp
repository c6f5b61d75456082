#include "engines/host_validation.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "core/datagen.hpp"

namespace dmabench {

WhyNot host_memory_shortfall(std::size_t bytes) {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && bytes > static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 2)
    return fmt::format("needs {:.2f} GiB of host buffers, more than half of the {:.2f} GiB of free host memory",
                       bytes / 1073741824.0, static_cast<double>(pages) * page / 1073741824.0);
  return std::nullopt;
}

void fill_stream(unsigned char* p, std::size_t n, std::uint64_t key) {
  for (std::size_t i = 0; i < n; ++i) p[i] = datagen::byte_at(key, i);
}

std::optional<Mismatch> first_host_mismatch(const Plan& expected, std::uint64_t seed,
                                            const std::function<const unsigned char*(int rank)>& destination) {
  const std::vector<Transfer> writes = expected.writes();
  for (int r = 0; r < expected.ranks(); ++r) {
    std::vector<Transfer> into;
    for (const Transfer& t : writes)
      if (t.dst_rank == r) into.push_back(t);
    std::sort(into.begin(), into.end(), [](const Transfer& a, const Transfer& b) { return a.dst_offset < b.dst_offset; });
    const unsigned char* dst = destination(r);
    if (!dst) continue;  // the rank's destination is another process's to check
    for (int set = 0; set < expected.sets; ++set)
      for (const Transfer& t : into) {
        const std::uint64_t key = datagen::stream_key(seed, t.src_rank);
        const std::size_t src_at = set * expected.src_stride(t.src_rank) + t.src_offset;
        const std::size_t dst_at = set * expected.dst_stride(r) + t.dst_offset;
        for (std::size_t i = 0; i < t.bytes; ++i) {
          const unsigned want = datagen::byte_at(key, src_at + i);
          if (dst[dst_at + i] != want) return Mismatch{.rank = r, .offset = dst_at + i, .expected = want, .got = dst[dst_at + i]};
        }
      }
  }
  return std::nullopt;
}

}  // namespace dmabench
