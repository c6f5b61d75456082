#pragma once
// Validation of destination bytes the host can read (the host engine's buffers, the sdma engine's
// read-back copies): the datagen source stream and the first mismatch against the plan.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "engines/engine.hpp"

namespace dmabench {

// Bytes [0, n) of the stream `key` (datagen::byte_at) into p.
void fill_stream(unsigned char* p, std::size_t n, std::uint64_t key);

// The first mismatch (ranks, sets and offsets in order) between what `expected` says each rank's
// destination holds after one operation on every buffer set and the bytes `destination(rank)` returns
// (the rank's whole destination allocation, every set).
std::optional<Mismatch> first_host_mismatch(const Plan& expected, std::uint64_t seed,
                                            const std::function<const unsigned char*(int rank)>& destination);

}  // namespace dmabench
