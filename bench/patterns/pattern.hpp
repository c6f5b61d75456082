#pragma once
// A pattern says *what* moves. It turns (devices, bytes per rank) into a Plan and knows its
// bandwidth factor; it knows nothing about engines. One file per pattern.
#include <cstddef>
#include <string_view>
#include <vector>

#include "bench/patterns/routing.hpp"
#include "engines/plan.hpp"

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
  // The plan of a routed pattern for these devices (the routing may put several ranks on one); throws
  // std::logic_error for a pattern that is not routed, InputError for a routing that cannot be made.
  virtual Plan plan_routed(const std::vector<int>& devices, const Routing& routing) const;
};

// The registry: the built-in patterns (below), then those added by register_pattern, in that order.
const std::vector<const Pattern*>& all_patterns();
const Pattern* find_pattern(std::string_view name);  // nullptr when unknown

// Adds a pattern defined outside this directory (a test's toy pattern, an experiment) to the registry:
// configs, case expansion and every suite that loops over all_patterns() see it from then on. The
// pattern must outlive its use (a static object); register before building cases, from one thread.
// Throws std::invalid_argument when the name is empty or a pattern of that name exists.
void register_pattern(const Pattern& pattern);

// Implementations (one file each).
const Pattern& copy_pattern();
const Pattern& bidir_pattern();
const Pattern& allgather_pattern();
const Pattern& alltoall_pattern();
const Pattern& h2d_pattern();
const Pattern& d2h_pattern();
const Pattern& h2d_bidir_pattern();
const Pattern& host_to_all_pattern();
const Pattern& all_to_host_pattern();
const Pattern& alltoallv_pattern();
const Pattern& d2d_pattern();

}  // namespace dmabench
