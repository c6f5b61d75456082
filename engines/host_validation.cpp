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

hostmem::BufferInfo buffer_info(int rank, const char* side, const Location& at, std::size_t bytes) {
  hostmem::BufferInfo info;
  info.rank = rank;
  info.side = side;
  info.kind = at.kind;
  info.numa = at.numa.label();
  info.numa_node = at.node;
  info.bytes = bytes;
  return info;
}

void fill_stream(unsigned char* p, std::size_t n, std::uint64_t key) {
  // whole words at a time (datagen's words are little-endian: byte 8w + k is bits 8k.. of word w)
  const std::size_t words = n / 8;
  for (std::size_t w = 0; w < words; ++w) {
    const std::uint64_t v = datagen::word(key, w);
    for (int k = 0; k < 8; ++k) p[8 * w + k] = static_cast<unsigned char>(v >> (8 * k));
  }
  for (std::size_t i = words * 8; i < n; ++i) p[i] = datagen::byte_at(key, i);
}

namespace {

// The first byte of got[0, n) that differs from the stream `key` from index `first`, or n.
std::size_t first_stream_difference(const unsigned char* got, std::size_t n, std::uint64_t key, std::size_t first) {
  std::size_t i = 0;
  if (first % 8 == 0)  // the usual case: compare word by word, then find the byte
    for (; i + 8 <= n; i += 8) {
      const std::uint64_t v = datagen::word(key, (first + i) / 8);
      bool same = true;
      for (int k = 0; k < 8 && same; ++k) same = got[i + k] == static_cast<unsigned char>(v >> (8 * k));
      if (!same) break;
    }
  for (; i < n; ++i)
    if (got[i] != datagen::byte_at(key, first + i)) return i;
  return n;
}

}  // namespace

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
        if (const std::size_t i = first_stream_difference(dst + dst_at, t.bytes, key, src_at); i < t.bytes)
          return Mismatch{.rank = r, .offset = dst_at + i, .expected = datagen::byte_at(key, src_at + i), .got = dst[dst_at + i]};
      }
    // bytes no transfer writes (block layouts in a pool) still hold the poison
    const std::uint64_t poison = datagen::stream_key(seed ^ datagen::kPoisonSalt, r);
    for (int set = 0; set < expected.sets; ++set)
      for (const auto& [begin, end] : expected.unwritten(r)) {
        const std::size_t at = set * expected.dst_stride(r) + begin;
        if (const std::size_t i = first_stream_difference(dst + at, end - begin, poison, at); i < end - begin)
          return Mismatch{.rank = r, .offset = at + i, .expected = datagen::byte_at(poison, at + i), .got = dst[at + i]};
      }
  }
  return std::nullopt;
}

}  // namespace dmabench
