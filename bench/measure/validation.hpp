#pragma once
// Validation: the case's data checked once before any timing (and again where a measurement
// changes the conditions, e.g. beside a compute workload).
#include <optional>
#include <string>

#include "bench/measure/subject.hpp"

namespace dmabench::measure {

// Fills the sources and poisons the destinations with the case's seed, runs one operation per
// buffer set (so every set is written once) and checks every destination byte against the plan.
// What was wrong (rank, device, offset, bytes), or nullopt. Throws on runtime errors.
std::optional<std::string> validate_once(const Subject& s);

}  // namespace dmabench::measure
