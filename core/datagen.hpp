#pragma once
// The validation data: byte i of rank r's source for a case with seed s is a hash of (s, r, i/8),
// so every rank and every case carries different bytes. Destinations are poisoned with the same
// function under a different seed before the checked run. Shared by host code and GPU kernels.
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define DMABENCH_HD __host__ __device__
#else
#define DMABENCH_HD
#endif

namespace dmabench::datagen {

inline constexpr std::uint64_t kPoisonSalt = 0x5bd1e9955bd1e995ull;

DMABENCH_HD inline std::uint64_t mix64(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Per-(seed, rank) stream key.
DMABENCH_HD inline std::uint64_t stream_key(std::uint64_t seed, std::uint32_t rank) {
  return mix64(seed ^ (0xd6e8feb86659fd93ull * (static_cast<std::uint64_t>(rank) + 1)));
}

// The 8 bytes of word w (bytes 8w .. 8w+7) of a stream, little-endian.
DMABENCH_HD inline std::uint64_t word(std::uint64_t key, std::uint64_t w) { return mix64(key + w); }

DMABENCH_HD inline std::uint8_t byte_at(std::uint64_t key, std::uint64_t index) {
  return static_cast<std::uint8_t>(word(key, index >> 3) >> ((index & 7u) * 8u));
}

}  // namespace dmabench::datagen
