#pragma once
// A plan: a pattern made concrete for N ranks and a size. Patterns produce plans; engines execute
// them; the harness validates the destination bytes against them. Nothing here knows an engine.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/host_memory.hpp"  // HostKind, NumaRequest

namespace dmabench {

// The vendor collective a plan is equivalent to, for engines that call a library (nccl):
// the data layout of the library call equals the plan's layout, which validation checks.
enum class Collective { none, all_gather, all_to_all };

// Where one of a rank's buffers lives: the rank's device memory (the default), or host memory of a
// kind on a NUMA node. Patterns say which buffers are host memory; the case says kind and node.
struct Location {
  bool host = false;
  HostKind kind = HostKind::pinned;
  NumaRequest numa;
  int node = -1;  // the NUMA node the request resolves to on this machine (set before engines see the plan)
  bool operator==(const Location&) const = default;
};

// A host-memory location with the default kind and NUMA request (host = false: device memory).
inline Location host_location(bool host = true) {
  Location l;
  l.host = host;
  return l;
}

// Byte ranges [begin, end) of a buffer.
using ByteRanges = std::vector<std::pair<std::size_t, std::size_t>>;
// The ranges sorted, overlapping and adjacent ones merged, empty ones dropped.
ByteRanges merged(ByteRanges ranges);

struct Transfer {
  int issuer = 0;              // rank whose device issues the transfer (its stream, its engine)
  int src_rank = 0;            // bytes come from this rank's source buffer ...
  std::size_t src_offset = 0;  // ... at this offset
  int dst_rank = 0;            // and go to this rank's destination buffer ...
  std::size_t dst_offset = 0;  // ... at this offset
  std::size_t bytes = 0;
};

struct Plan {
  std::string pattern;
  Collective collective = Collective::none;
  std::vector<int> devices;            // rank -> device id (GPU ordinal, or host rank id)
  std::size_t bytes_per_rank = 0;      // the pattern's per-rank size (see results/SCHEMA.md)
  std::size_t total_bytes = 0;         // S: the size of the operation, as nccl-tests defines it
  double bus_factor = 1.0;             // busbw = algbw * bus_factor
  std::vector<std::size_t> src_bytes;  // per rank: source buffer size
  std::vector<std::size_t> dst_bytes;  // per rank: destination buffer size
  std::vector<Transfer> transfers;
  // In-place collectives: blocks that already sit in the destination before the operation (e.g. a
  // rank's own block of an in-place all-gather). Operations put them there when they poison the
  // destinations (outside timing) and never issue them; validation checks them like transfers.
  std::vector<Transfer> preset;
  // The in-place alltoall: each rank's destination buffer IS its source buffer (src_bytes ==
  // dst_bytes), so a block and its mirror must be exchanged, not copied one after the other; only an
  // engine that swaps (Engine::exchanges) runs such a plan. Validation is unchanged: after one
  // operation the destination holds what the transfers say, read from the buffer as it was before.
  bool exchange = false;
  // Per rank: where its source and destination buffers live (empty: device memory for every rank).
  std::vector<Location> src_at, dst_at;
  Location src_location(int rank) const { return src_at.empty() ? Location{} : src_at[rank]; }
  Location dst_location(int rank) const { return dst_at.empty() ? Location{} : dst_at[rank]; }
  bool host_memory() const;  // any buffer in host memory
  // Whether the transfer reads or writes host memory (its engine must then reach host memory: PCIe).
  bool touches_host(const Transfer& t) const { return src_location(t.src_rank).host || dst_location(t.dst_rank).host; }
  // Block layouts in a pool (patterns/layout.hpp): destination bytes that no transfer writes.
  // They must still hold the poison after an operation (validation checks them: a block written to
  // the wrong slot fails the case even where no other block was meant to land).
  bool gaps = false;
  std::size_t block_bytes = 0;  // block layouts: every transfer is one block of this size (0: contiguous)
  // The byte ranges [begin, end) of one set of rank's destination that no transfer or preset block writes.
  ByteRanges unwritten(int rank) const;
  // The bytes of rank's whole source allocation (every buffer set) that one operation per set reads, and of its
  // destination allocation that it writes (transfers and preset blocks), merged: what a case must fill, and what
  // it may have changed.
  ByteRanges read_ranges(int rank) const { return touched(rank, true); }
  ByteRanges written_ranges(int rank) const { return touched(rank, false); }
  // Buffer rotation: the operation keeps `sets` copies of every buffer, one after another
  // (src_stride / dst_stride apart), and its k-th launch (counted from 0, validation included)
  // moves set k mod sets, so successive operations do not reuse the same bytes (nccl-tests moves
  // its buffers the same way). Transfer offsets are within one set.
  int sets = 1;
  std::size_t src_stride(int rank) const { return round_up(src_bytes[rank]); }
  std::size_t dst_stride(int rank) const { return round_up(dst_bytes[rank]); }
  // Bytes of one rank's buffers, every set included.
  std::size_t src_allocation(int rank) const { return src_stride(rank) * static_cast<std::size_t>(sets); }
  std::size_t dst_allocation(int rank) const { return dst_stride(rank) * static_cast<std::size_t>(sets); }
  // The buffer set operation `op` (counted from 0, validation included) moves.
  int set_of(std::uint64_t op) const { return static_cast<int>(op % static_cast<std::uint64_t>(sets)); }

  int ranks() const { return static_cast<int>(devices.size()); }
  // The transfers rank `issuer` issues, in plan order.
  std::vector<Transfer> issued_by(int issuer) const;
  // Ranks that issue at least one transfer.
  std::vector<int> issuers() const;
  // transfers and preset together: everything a destination holds after one operation.
  std::vector<Transfer> writes() const;
  // Why the plan is inconsistent, or nullopt: every transfer and preset block in bounds and
  // non-empty, no two destinations overlap, and every destination byte is written by exactly one
  // (at most one where the plan has gaps).
  std::optional<std::string> check() const;

 private:
  ByteRanges touched(int rank, bool source) const;
  static std::size_t round_up(std::size_t n) { return (n + 255) / 256 * 256; }  // sets start 256-byte aligned
};

// `transfers` with every run of adjacent ones (same issuer and ranks, source and destination both
// continuing the previous transfer's) merged into one: how an engine's coalesce option issues blocks.
std::vector<Transfer> coalesce(const std::vector<Transfer>& transfers);

}  // namespace dmabench
