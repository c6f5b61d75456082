#include "bench/measure/validation.hpp"

#include <fmt/format.h>

namespace dmabench::measure {

std::optional<std::string> validate_once(const Subject& s) {
  const std::uint64_t seed = s.spec.seed();
  s.op.fill_sources(seed);
  s.op.poison_destinations(seed);
  for (int set = 0; set < s.plan.sets; ++set) {
    s.op.arm(1);
    s.op.launch();
    s.op.wait();
  }
  if (auto bad = s.op.check_destinations(s.plan, seed))
    return fmt::format("rank {} (device {}) destination byte {} is 0x{:02x}, expected 0x{:02x}", bad->rank,
                       s.spec.devices[bad->rank], bad->offset, bad->got, bad->expected);
  return std::nullopt;
}

}  // namespace dmabench::measure
