#pragma once
// The heaviest pair of an uneven plan (alltoallv): the (source, destination) pair that moves the most bytes, timed
// alone with the case's engine and options, so that its time against the whole operation's says how much of a step the
// largest pair explains (results/SCHEMA.md, `alltoallv.heaviest_pair`).
#include <cstdint>
#include <optional>
#include <string>

#include "bench/measure/subject.hpp"

namespace dmabench::measure {

struct HeaviestPair {
  int src = 0, dst = 0;
  std::uint64_t bytes = 0;
  bool validated = false;          // the pair's own operation was validated before it was timed
  std::optional<double> p50_us;    // the pair alone: the median of `samples` samples (µs per operation)
  int samples = 0;
  std::string error;               // why it was not measured (then p50_us is empty)
};

// Finds the pair (ties: the lowest source, then destination), prepares an operation of its transfers alone (the rest
// of the destination must keep its poison), validates it once, and takes 2 untimed and `samples` timed samples shaped
// like the case's. Never throws: an error is recorded in the result. Not measured in a multi-process run.
HeaviestPair measure_heaviest_pair(const Subject& s, int samples);

}  // namespace dmabench::measure
