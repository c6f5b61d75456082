#include "patterns/layout.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "core/units.hpp"

namespace dmabench {
namespace {

[[noreturn]] void fail(const std::string& field, const std::string& what) {
  throw InputError(fmt::format("config: layout.{}: {}", field, what));
}

// The offsets of `count` blocks in a buffer laid out by `layout` (slot of block i), and the buffer's size.
struct Slots {
  std::vector<std::uint64_t> offset;
  std::uint64_t buffer_bytes = 0;
};

// The runs of `count` blocks of `l` (run_blocks adjacent blocks each, the last one possibly shorter).
std::uint64_t runs_of(const Layout& l, std::uint64_t count) { return (count + l.run_blocks - 1) / l.run_blocks; }

// A random layout's pool: pool_bytes, or exactly the runs' slots.
std::uint64_t pool_of(const Layout& l, std::uint64_t count) {
  return l.pool_bytes ? l.pool_bytes : runs_of(l, count) * l.run_blocks * l.block_bytes;
}

// The slots of the blocks: block i is block i % k of run i / k, the runs placed by the order.
Slots slots_for(const Layout& l, std::uint64_t count, std::uint64_t salt) {
  Slots s;
  s.offset.resize(count);
  const std::uint64_t b = l.block_bytes, k = l.run_blocks, runs = runs_of(l, count);
  switch (l.order) {
    case Layout::Order::sequential:
      for (std::uint64_t i = 0; i < count; ++i) s.offset[i] = i * b;
      s.buffer_bytes = count * b;
      break;
    case Layout::Order::strided:
      for (std::uint64_t i = 0; i < count; ++i) s.offset[i] = i / k * l.stride_bytes + i % k * b;
      s.buffer_bytes = (runs - 1) * l.stride_bytes + (count - (runs - 1) * k) * b;
      break;
    case Layout::Order::random: {
      const std::uint64_t pool = pool_of(l, count);
      const std::uint64_t slots = pool / (k * b);  // a slot holds one run
      // a seeded permutation of the pool's slots (std::mt19937_64 is specified bit for bit; the shuffle
      // is done here, not by std::shuffle, whose algorithm the standard leaves open)
      std::vector<std::uint64_t> perm(slots);
      std::iota(perm.begin(), perm.end(), 0);
      std::mt19937_64 rng(l.seed * 0x9e3779b97f4a7c15ull + salt);
      for (std::uint64_t i = slots - 1; i > 0; --i) std::swap(perm[i], perm[rng() % (i + 1)]);
      for (std::uint64_t i = 0; i < count; ++i) s.offset[i] = perm[i / k] * k * b + i % k * b;
      s.buffer_bytes = pool;
      break;
    }
  }
  return s;
}

}  // namespace

std::string_view to_string(Layout::Order o) {
  switch (o) {
    case Layout::Order::sequential: return "sequential";
    case Layout::Order::strided: return "strided";
    case Layout::Order::random: return "random";
  }
  return "?";
}

std::string_view to_string(Layout::Sides s) {
  switch (s) {
    case Layout::Sides::both: return "both";
    case Layout::Sides::src: return "src";
    case Layout::Sides::dst: return "dst";
  }
  return "?";
}

std::string Layout::label(std::uint64_t bytes) const {
  if (!blocks) return "";
  std::string s = fmt::format("blocks={}x{},{}", block_bytes ? bytes / block_bytes : 0, format_bytes(block_bytes), to_string(order));
  if (order == Order::strided) s += ",stride=" + format_bytes(stride_bytes);
  if (order == Order::random && pool_bytes) s += ",pool=" + format_bytes(pool_bytes);
  if (order == Order::random && seed != 1) s += fmt::format(",seed={}", seed);
  if (sides != Sides::both) s += fmt::format(",sides={}", to_string(sides));
  if (run_blocks != 1) s += fmt::format(",run={}", run_blocks);
  return s;
}

nlohmann::json to_json(const Layout& l) {
  if (!l.blocks) return {{"kind", "contiguous"}};
  return {{"kind", "blocks"},
          {"block_bytes", l.block_bytes},
          {"blocks", l.count ? nlohmann::json(l.count) : nlohmann::json()},
          {"order", to_string(l.order)},
          {"stride_bytes", l.order == Layout::Order::strided ? nlohmann::json(l.stride_bytes) : nlohmann::json()},
          {"pool_bytes", l.order == Layout::Order::random && l.pool_bytes ? nlohmann::json(l.pool_bytes) : nlohmann::json()},
          {"seed", l.seed},
          {"sides", to_string(l.sides)},
          {"run_blocks", l.run_blocks}};
}

void apply_layout(Plan& plan, const Layout& l) {
  if (!l.blocks) return;
  if (!plan.preset.empty() || plan.exchange) fail("kind", fmt::format("blocks do not apply to {} in place", plan.pattern));
  for (const Transfer& t : plan.transfers)
    if (t.src_offset != 0 || t.dst_offset != 0 || t.bytes != plan.src_bytes[t.src_rank] || t.bytes != plan.dst_bytes[t.dst_rank])
      fail("kind", fmt::format("blocks apply to patterns that move one whole buffer per transfer (copy, bidir, h2d, d2h, "
                               "h2d-bidir, host-to-all, all-to-host); {} moves parts of buffers",
                               plan.pattern));
  if (l.block_bytes == 0) fail("block_bytes", "must be at least 1 byte");
  std::vector<Transfer> blocks;
  for (const Transfer& t : plan.transfers) {
    if (t.bytes % l.block_bytes != 0)
      fail("block_bytes", fmt::format("{} bytes per transfer is not a whole number of {}-byte blocks", t.bytes, l.block_bytes));
    const std::uint64_t count = t.bytes / l.block_bytes;
    if (l.run_blocks > count)
      fail("run_blocks", fmt::format("runs of {} blocks need at least {} blocks per transfer; the case has {} ({} of {})",
                                     l.run_blocks, l.run_blocks, count, format_bytes(t.bytes), format_bytes(l.block_bytes)));
    const std::uint64_t run_bytes = l.run_blocks * l.block_bytes;
    if (l.order == Layout::Order::random && pool_of(l, count) / run_bytes < runs_of(l, count))
      fail("pool_bytes", fmt::format("a pool of {} holds {} runs of {} blocks of {}; the case has {}", format_bytes(l.pool_bytes),
                                     l.pool_bytes / run_bytes, l.run_blocks, format_bytes(l.block_bytes), runs_of(l, count)));
    const bool lay_src = l.sides != Layout::Sides::dst, lay_dst = l.sides != Layout::Sides::src;
    Layout packed = l;
    packed.order = Layout::Order::sequential;
    // each buffer its own permutation: source and destination slots differ, and so do ranks
    const Slots src = slots_for(lay_src ? l : packed, count, 2 * static_cast<std::uint64_t>(t.src_rank) + 1);
    const Slots dst = slots_for(lay_dst ? l : packed, count, 2 * static_cast<std::uint64_t>(t.dst_rank) + 2);
    plan.src_bytes[t.src_rank] = src.buffer_bytes;
    plan.dst_bytes[t.dst_rank] = dst.buffer_bytes;
    if (dst.buffer_bytes != count * l.block_bytes) plan.gaps = true;
    for (std::uint64_t i = 0; i < count; ++i)
      blocks.push_back(Transfer{.issuer = t.issuer, .src_rank = t.src_rank, .src_offset = src.offset[i],
                                .dst_rank = t.dst_rank, .dst_offset = dst.offset[i], .bytes = l.block_bytes});
  }
  plan.transfers = std::move(blocks);
  plan.block_bytes = l.block_bytes;
}

}  // namespace dmabench
