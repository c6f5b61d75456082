#pragma once
// Host-memory helpers of the engines whose buffers the host can read (the host engine's buffers, the
// sdma engine's on the software engine and its read-back copies): the memory check, the datagen
// source stream and the first mismatch against the plan.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "engines/engine.hpp"

namespace dmabench {

// Why `bytes` of host memory (buffers the case needs) is too much: more than half of the free host
// memory; or nullopt.
WhyNot host_memory_shortfall(std::size_t bytes);

// The record of a host buffer about to be allocated for `rank`'s `side` ("src" / "dst") at `at`; the
// allocator fills in how, how long and where its pages landed.
hostmem::BufferInfo buffer_info(int rank, const char* side, const Location& at, std::size_t bytes);

// Bytes [0, n) of the stream `key` (datagen::byte_at) into p.
void fill_stream(unsigned char* p, std::size_t n, std::uint64_t key);

// The first mismatch (ranks, sets and offsets in order) between what `expected` says each rank's
// destination holds after one operation on every buffer set and the bytes `destination(rank)` returns
// (the rank's whole destination allocation, every set; null: not checked here, another process's rank).
std::optional<Mismatch> first_host_mismatch(const Plan& expected, std::uint64_t seed,
                                            const std::function<const unsigned char*(int rank)>& destination);

}  // namespace dmabench
