#include "engines/host_validation.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <limits>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "core/datagen.hpp"

namespace dmabench {

WhyNot host_memory_shortfall(std::size_t bytes) {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  std::size_t idle = 0;  // what the sweep's pool keeps idle in host memory is freed when a case needs it
  if (const BufferPool* pool = current_pool()) idle = pool->idle_bytes([](const BufferPlace& p) { return p.host; });
  if (pages > 0 && page > 0) {
    const double free_b = static_cast<double>(pages) * static_cast<double>(page) + static_cast<double>(idle);
    if (static_cast<double>(bytes) > free_b / 2)
      return fmt::format("needs {:.2f} GiB of host buffers, more than half of the {:.2f} GiB of free host memory",
                         bytes / 1073741824.0, free_b / 1073741824.0);
  }
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

hostmem::BufferInfo buffer_info(int rank, const char* side, const Location& at, const BufferLease& lent) {
  hostmem::BufferInfo info = buffer_info(rank, side, at, lent.size());
  const hostmem::BufferInfo& made = lent.buffer().info;
  info.placement = made.placement;
  info.alloc_s = made.alloc_s;
  info.register_s = made.register_s;
  info.method = made.method;
  info.reused = lent.reused();
  return info;
}

namespace {

// A stretch of host memory against a stream: p[0, n) and bytes [first, first + n) of the stream `key`.
struct Stretch {
  unsigned char* p = nullptr;
  std::size_t n = 0;
  std::uint64_t key = 0;
  std::uint64_t first = 0;
};

constexpr std::size_t kPiece = std::size_t{16} << 20;          // bytes one thread takes at a time
constexpr std::size_t kParallelFrom = std::size_t{64} << 20;   // fewer bytes in all: one thread

// The stretches cut into pieces of at most kPiece bytes (a multiple of 8: word alignment is kept), in order;
// `owner[i]` is the stretch piece i comes from.
std::vector<Stretch> pieces(const std::vector<Stretch>& stretches, std::vector<std::size_t>& owner, std::size_t& total) {
  std::vector<Stretch> out;
  total = 0;
  for (std::size_t s = 0; s < stretches.size(); ++s) {
    const Stretch& st = stretches[s];
    total += st.n;
    for (std::size_t at = 0; at < st.n; at += kPiece) {
      out.push_back(Stretch{st.p + at, std::min(kPiece, st.n - at), st.key, st.first + at});
      owner.push_back(s);
    }
  }
  return out;
}

// fn(i) for i in [0, count), on every core when `bytes` is large; fn must not throw.
template <class F>
void for_each_piece(std::size_t count, std::size_t bytes, F&& fn) {
  const std::size_t threads = bytes >= kParallelFrom ? std::min<std::size_t>(std::max(1u, std::thread::hardware_concurrency()), count) : 1;
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < count;) fn(i);
  };
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (auto& h : helpers) h.join();
}

constexpr bool kLittleEndian = std::endian::native == std::endian::little;  // datagen's words are little-endian

void write_stretch(const Stretch& s) {
  std::size_t i = 0;
  for (; i < s.n && (s.first + i) % 8 != 0; ++i) s.p[i] = datagen::byte_at(s.key, s.first + i);
  if constexpr (kLittleEndian)
    for (; i + 8 <= s.n; i += 8) {
      const std::uint64_t v = datagen::word(s.key, (s.first + i) / 8);
      std::memcpy(s.p + i, &v, 8);
    }
  for (; i < s.n; ++i) s.p[i] = datagen::byte_at(s.key, s.first + i);
}

// The first byte of the stretch that differs from its stream, or s.n.
std::size_t first_difference(const Stretch& s) {
  std::size_t i = 0;
  for (; i < s.n && (s.first + i) % 8 != 0; ++i)
    if (s.p[i] != datagen::byte_at(s.key, s.first + i)) return i;
  if constexpr (kLittleEndian)
    for (; i + 8 <= s.n; i += 8) {
      std::uint64_t got;
      std::memcpy(&got, s.p + i, 8);
      if (got != datagen::word(s.key, (s.first + i) / 8)) break;  // the byte is found below
    }
  for (; i < s.n; ++i)
    if (s.p[i] != datagen::byte_at(s.key, s.first + i)) return i;
  return s.n;
}

void write_stretches(const std::vector<Stretch>& stretches) {
  std::vector<std::size_t> owner;
  std::size_t total = 0;
  const std::vector<Stretch> ps = pieces(stretches, owner, total);
  for_each_piece(ps.size(), total, [&](std::size_t i) { write_stretch(ps[i]); });
}

// The first stretch (in order) with a byte that differs from its stream: (stretch, offset in it), or nullopt.
std::optional<std::pair<std::size_t, std::size_t>> first_different(const std::vector<Stretch>& stretches) {
  std::vector<std::size_t> owner;
  std::size_t total = 0;
  const std::vector<Stretch> ps = pieces(stretches, owner, total);
  std::vector<std::size_t> diff(ps.size(), 0);
  std::atomic<std::size_t> found{std::numeric_limits<std::size_t>::max()};  // the earliest piece with a difference
  for_each_piece(ps.size(), total, [&](std::size_t i) {
    if (i > found.load()) return;  // an earlier piece already differs
    diff[i] = first_difference(ps[i]);
    if (diff[i] < ps[i].n)
      for (std::size_t f = found.load(); i < f && !found.compare_exchange_weak(f, i);) {
      }
  });
  const std::size_t i = found.load();
  if (i == std::numeric_limits<std::size_t>::max()) return std::nullopt;
  return std::pair{owner[i], static_cast<std::size_t>(ps[i].p - stretches[owner[i]].p) + diff[i]};
}

}  // namespace

void fill_stream(unsigned char* p, std::size_t n, std::uint64_t key, std::uint64_t first) {
  write_stretches({Stretch{p, n, key, first}});
}

void fill_ranges(unsigned char* base, const ByteRanges& ranges, std::uint64_t key) {
  std::vector<Stretch> s;
  for (const auto& [begin, end] : ranges) s.push_back(Stretch{base + begin, end - begin, key, begin});
  write_stretches(s);
}

std::optional<Mismatch> first_host_mismatch(const Plan& expected, std::uint64_t seed,
                                            const std::function<HostDestination(int rank)>& destination) {
  // every check in the order a mismatch is reported: ranks; the transfers' bytes, set by set; then the bytes
  // no transfer writes (block layouts in a pool), which still hold the poison
  std::vector<Stretch> checks;
  std::vector<std::pair<int, std::size_t>> where;  // per check: the rank and the offset in its destination
  const std::vector<Transfer> writes = expected.writes();
  for (int r = 0; r < expected.ranks(); ++r) {
    const HostDestination dst = destination(r);
    if (!dst.bytes) continue;  // the rank's destination is another process's to check
    auto* bytes = const_cast<unsigned char*>(dst.bytes);  // only read
    std::vector<Transfer> into;
    for (const Transfer& t : writes)
      if (t.dst_rank == r) into.push_back(t);
    std::sort(into.begin(), into.end(), [](const Transfer& a, const Transfer& b) { return a.dst_offset < b.dst_offset; });
    for (int set = 0; set < expected.sets; ++set)
      for (const Transfer& t : into) {
        const std::size_t dst_at = set * expected.dst_stride(r) + t.dst_offset;
        checks.push_back(Stretch{bytes + dst_at, t.bytes, datagen::stream_key(seed, t.src_rank),
                                 set * expected.src_stride(t.src_rank) + t.src_offset});
        where.emplace_back(r, dst_at);
      }
    for (int set = 0; set < expected.sets; ++set)
      for (const auto& [begin, end] : expected.unwritten(r)) {
        const std::size_t at = set * expected.dst_stride(r) + begin;
        checks.push_back(Stretch{bytes + at, end - begin, dst.poison, at});
        where.emplace_back(r, at);
      }
  }
  const auto bad = first_different(checks);
  if (!bad) return std::nullopt;
  const auto [c, i] = *bad;
  return Mismatch{.rank = where[c].first,
                  .offset = where[c].second + i,
                  .expected = datagen::byte_at(checks[c].key, checks[c].first + i),
                  .got = checks[c].p[i]};
}

}  // namespace dmabench
