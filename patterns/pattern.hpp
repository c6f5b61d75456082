#pragma once
// A pattern says *what* moves. It turns (devices, bytes per rank) into a Plan and knows its
// bandwidth factor; it knows nothing about engines. One file per pattern.
#include <cstddef>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "patterns/routing.hpp"
#include "core/plan.hpp"

namespace dmabench {

class Pattern {
 public:
  virtual ~Pattern() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  // How many of `available` devices the pattern uses (the first ones of the list), or 0 when
  // it cannot run on that many.
  virtual int ranks_used(int available) const = 0;
  // The plan for these devices (exactly ranks_used of them) and bytes per rank (>= 1).
  virtual Plan plan(const std::vector<int>& devices, std::size_t bytes_per_rank) const = 0;
  // The pattern's in-place form (each rank's own block already in its destination, like NCCL's
  // in-place calls; the plan's `preset`), or nullptr when it has none.
  virtual const Pattern* in_place() const { return nullptr; }
  // Whether the pattern's plans put buffers in host memory (h2d, d2h, ...): the case's host kind and
  // NUMA request apply to it.
  virtual bool uses_host_memory() const { return false; }
  // Whether the pattern is planned from a routing (alltoallv): its cases come from the config's "alltoallv" axis and
  // take their size from it (tokens_per_rank x token_bytes), not from "sizes".
  virtual bool routed() const { return false; }
  // Whether data moves both ways at once (bidir, h2d-bidir): a link's expected rate counts both directions.
  virtual bool bidirectional() const { return false; }
  // Whether the four-phase latency breakdown (bench/measure/breakdown.cpp: an operation's control, schedule, copy and
  // sync) applies: the patterns one rank issues, whose copies are one copy or a block layout's copies (copy, h2d,
  // d2h, d2d); the copy phase then runs from the first copy's start to the last one's end.
  virtual bool has_breakdown() const { return false; }
  // The plan of a routed pattern for these devices (the routing may put several ranks on one); throws
  // std::logic_error for a pattern that is not routed, InputError for a routing that cannot be made.
  virtual Plan plan_routed(const std::vector<int>& devices, const Routing& routing) const;
};

// The registry: the built-in patterns (below), then those added by register_pattern, in that order.
const std::vector<const Pattern*>& all_patterns();
const Pattern* find_pattern(std::string_view name);  // nullptr when unknown

// What each pattern is, in the registry's order (the order reports print them in): name, description and the
// properties above, plus "pairs": "one-device" or "two-device" for patterns that measure one device or one pair
// (devices "pairs"; null for those on all their devices at once). The results file's context.patterns; Python reads
// these (python/dmabench/patterns.json holds them for files written before the field), never a list of its own.
nlohmann::json pattern_specs_json();
// "one-device", "two-device" or "" (runs on all its devices at once): which devices "pairs" gives the pattern.
std::string_view pairing(const Pattern& pattern);

// Adds a pattern defined outside this directory (a test's toy pattern, an experiment) to the registry:
// configs, case expansion and every suite that loops over all_patterns() see it from then on. The
// pattern must outlive its use (a static object); register before building cases, from one thread.
// Throws std::invalid_argument when the name is empty or a pattern of that name exists.
void register_pattern(const Pattern& pattern);

// The built-in patterns, in the registry's order (--list, a config without "patterns", the reports' display order):
// each X(name) is a
// `const Pattern& name_pattern()` defined in a file of this directory. A new pattern is its file and one
// word here (CMake builds every patterns/*.cpp).
#define DMABENCH_PATTERNS(X) \
  X(copy) X(d2d) X(bidir) X(allgather) X(alltoall) X(alltoallv) X(h2d) X(d2h) X(h2d_bidir) X(host_to_all) X(all_to_host)

#define DMABENCH_DECLARE_PATTERN(name) const Pattern& name##_pattern();
DMABENCH_PATTERNS(DMABENCH_DECLARE_PATTERN)
#undef DMABENCH_DECLARE_PATTERN

}  // namespace dmabench
