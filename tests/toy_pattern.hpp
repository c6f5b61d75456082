#pragma once
// A toy pattern defined outside patterns/ and added to the registry at run time (register_pattern):
// what a new pattern needs, and what the registry-driven suites then give it. "ring-shift": rank i sends
// its whole block to rank (i + 1) % n (pushed by rank i), on 2 or more ranks. On 3 or more ranks its plan
// is none of the built-in ones (bidir is the 2-rank ring). Tests register it once per test binary with
// registered_ring_shift() at namespace scope, before Google Test expands the registry-driven suites.
#include <cstddef>
#include <string>
#include <vector>

#include "patterns/pattern.hpp"

namespace dmabench::testing_support {

class RingShift : public Pattern {
 public:
  std::string_view name() const override { return "ring-shift"; }
  std::string_view description() const override { return "rank i -> rank (i + 1) % n (a test's toy pattern)"; }
  int ranks_used(int available) const override { return available >= 2 ? available : 0; }
  Plan plan(const std::vector<int>& devices, std::size_t bytes) const override {
    const int n = static_cast<int>(devices.size());
    Plan p;
    p.pattern = std::string(name());
    p.devices = devices;
    p.bytes_per_rank = bytes;
    p.total_bytes = bytes * n;
    p.bus_factor = 1.0;
    p.src_bytes.assign(n, bytes);
    p.dst_bytes.assign(n, bytes);
    for (int r = 0; r < n; ++r)
      p.transfers.push_back(Transfer{.issuer = r, .src_rank = r, .src_offset = 0, .dst_rank = (r + 1) % n, .dst_offset = 0, .bytes = bytes});
    return p;
  }
};

inline const Pattern& ring_shift() {
  static const RingShift pattern;
  return pattern;
}

// ring_shift(), in this process's registry from the first call on.
inline const Pattern& registered_ring_shift() {
  static const bool registered = (register_pattern(ring_shift()), true);
  (void)registered;
  return ring_shift();
}

}  // namespace dmabench::testing_support
