#include "bench/measure/validation.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "team/team.hpp"

namespace dmabench::measure {
namespace {

// One step of validation on every process; in a multi-process run each step ends when every process
// finished it (a rank's copies land in the others' buffers), and an error on any process is an error
// on all of them.
template <class F>
void step(F&& f) {
  if (!team::world().multi()) return f();
  std::string error;
  try {
    f();
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (auto e = team::first_error(error)) throw std::runtime_error(*e);
}

}  // namespace

std::optional<std::string> validate_once(const Subject& s) {
  const std::uint64_t seed = s.spec.seed();
  step([&] {
    s.op.fill_sources(seed);
    s.op.poison_destinations(seed);
  });
  for (int set = 0; set < s.plan.sets; ++set)
    step([&] {
      s.op.arm(1);
      s.op.launch();
      s.op.wait();
    });
  return check_written(s);
}

void poison(const Subject& s) {
  step([&] { s.op.poison_destinations(s.spec.seed()); });
}

std::optional<std::string> check_written(const Subject& s) {
  std::string bad;
  step([&] {
    if (auto m = s.op.check_destinations(s.plan, s.spec.seed()))
      bad = fmt::format("rank {} (device {}) destination byte {} is 0x{:02x}, expected 0x{:02x}", m->rank,
                        s.spec.devices[m->rank], m->offset, m->got, m->expected);
  });
  return team::first_error(bad, /*name_rank=*/false);  // each process checked its own rank: the lowest rank's mismatch
}

}  // namespace dmabench::measure
