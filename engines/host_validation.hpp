#pragma once
// Host-memory helpers of the engines whose buffers the host can read (the host engine's buffers, the
// sdma engine's on the software engine and its read-back copies, the GPU engines' host buffers): the
// memory check, the datagen streams written and compared on the host (on every core for large buffers),
// and the first mismatch against the plan.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "engines/buffer_pool.hpp"
#include "engines/engine.hpp"

namespace dmabench {

// Why `bytes` of host memory (buffers the case needs) is too much: more than half of the free host
// memory (counting what the sweep's buffer pool keeps idle as free); or nullopt.
WhyNot host_memory_shortfall(std::size_t bytes);

// The record of a host buffer about to be allocated for `rank`'s `side` ("src" / "dst") at `at`; the
// allocator fills in how, how long and where its pages landed.
hostmem::BufferInfo buffer_info(int rank, const char* side, const Location& at, std::size_t bytes);
// The record of a host buffer lent to `rank`'s `side`: how it was allocated (for a reused buffer, in an
// earlier case of the sweep) and that it was reused.
hostmem::BufferInfo buffer_info(int rank, const char* side, const Location& at, const BufferLease& lent);

// Bytes [first, first + n) of the stream `key` (datagen::byte_at) into p[0, n).
void fill_stream(unsigned char* p, std::size_t n, std::uint64_t key, std::uint64_t first = 0);
// The stream `key` into each range [begin, end) of `base`, at its own offsets (byte i of the buffer holds
// datagen::byte_at(key, i)).
void fill_ranges(unsigned char* base, const ByteRanges& ranges, std::uint64_t key);

// A rank's destination as the host sees it: its whole allocation (every buffer set), and the datagen key
// of the poison its bytes that no transfer writes must still hold. bytes null: not checked here (another
// process's rank).
struct HostDestination {
  const unsigned char* bytes = nullptr;
  std::uint64_t poison = 0;
};

// The first mismatch (ranks, sets and offsets in order) between what `expected` says each rank's
// destination holds after one operation on every buffer set and the bytes `destination(rank)` gives.
std::optional<Mismatch> first_host_mismatch(const Plan& expected, std::uint64_t seed,
                                            const std::function<HostDestination(int rank)>& destination);

}  // namespace dmabench
