#pragma once
// A layout says how a transfer's bytes lie in its buffers: contiguous (one range, as patterns make
// them), or blocks: the transfer cut into `count` blocks of `block_bytes`, each placed in a slot of
// a pool by an order (KV-cache pages, layer-major tensors). It rewrites a pattern's plan and knows
// nothing about engines; every engine then moves the blocks its own way (one copy per block, one
// batch, one gather kernel, one packet per block).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "core/plan.hpp"

namespace dmabench {

struct Layout {
  enum class Order { sequential, strided, random };
  enum class Sides { both, src, dst };
  bool blocks = false;           // false: contiguous (the plan as the pattern made it)
  std::uint64_t block_bytes = 0;
  std::uint64_t count = 0;       // blocks per transfer; 0: the case's size / block_bytes
  Order order = Order::sequential;
  std::uint64_t stride_bytes = 0;  // strided: slot i starts at i * stride_bytes (>= block_bytes)
  std::uint64_t pool_bytes = 0;    // random: the pool the blocks are scattered in (0: exactly count * block_bytes)
  std::uint64_t seed = 1;          // random: the permutation's seed
  Sides sides = Sides::both;       // which buffers are laid out in slots; the other side holds the blocks packed
  // Fragmentation (strided, random): blocks lie in runs of run_blocks adjacent slots, on every laid-out side, the runs
  // placed by the order (block i is block i % k of run i / k; the last run may be shorter); 1: every block on its own
  std::uint64_t run_blocks = 1;
  // "" for contiguous, else e.g. "blocks=4096x4KiB,random,pool=64MiB" for transfers of `bytes`
  // (the case name's layout part; defaults left out).
  std::string label(std::uint64_t bytes) const;
  bool operator==(const Layout&) const = default;
};
std::string_view to_string(Layout::Order o);
std::string_view to_string(Layout::Sides s);
// {"kind": "contiguous"} or {"kind": "blocks", "block_bytes", "blocks" (null: from the size), "order",
// "stride_bytes", "pool_bytes", "seed", "sides", "run_blocks"} (results/SCHEMA.md, `layout`).
nlohmann::json to_json(const Layout& l);

// Rewrites `plan` (contiguous, as a pattern made it) into the layout's blocks. Throws InputError,
// naming the layout field, when the pattern's plan is not one whole buffer per transfer (allgather,
// alltoall), the size is not a whole number of blocks, a run is longer than the blocks, or the pool cannot hold them.
void apply_layout(Plan& plan, const Layout& layout);

}  // namespace dmabench
