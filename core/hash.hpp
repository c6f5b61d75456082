#pragma once
// FNV-1a (64 bit) over bytes: case seeds (Case::seed) and the config digest every process of a
// multi-process run compares. Not cryptographic: it tells inputs apart.
#include <cstdint>
#include <string_view>

namespace dmabench {

inline std::uint64_t fnv1a(std::string_view bytes) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : bytes) h = (h ^ ch) * 1099511628211ull;
  return h;
}

}  // namespace dmabench
