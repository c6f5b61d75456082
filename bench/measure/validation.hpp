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

// Poisons the destinations (the sources keep what validate_once filled them with), so that
// check_written can tell what the operations run after it wrote.
void poison(const Subject& s);
// Every destination byte against the plan, after operations that ran since validate_once or poison:
// what was wrong (rank, device, offset, bytes), or nullopt. Throws on runtime errors.
std::optional<std::string> check_written(const Subject& s);

}  // namespace dmabench::measure
