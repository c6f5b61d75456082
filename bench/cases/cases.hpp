#pragma once
// The cases a config expands into: its sweep, run in that order (pattern x engine variant x devices x
// timing x rotation x size), each with its name, validation seed and plan. Config parsing is bench/config/config.hpp.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "bench/config/config.hpp"
#include "patterns/layout.hpp"
#include "core/plan.hpp"

namespace dmabench {

struct Case {
  std::string pattern;
  EngineVariant variant;  // the engine and its options
  std::vector<int> devices;  // the devices the pattern uses (rank i on devices[i])
  std::uint64_t bytes_per_rank = 0;
  Timing timing = Timing::oneshot;
  bool in_place = false;  // the pattern's in-place form (Pattern::in_place)
  // How it is run: its config's run settings, whole and as configured (bench/config/run_settings.hpp). Not part of
  // what the case is (seed), but through ops_per_sample(). What differs per case is derived by the functions below.
  RunSettings run;
  int rotate = 1;  // buffer sets the operations cycle through (the plan's `sets`)
  Layout layout;   // contiguous, or blocks (patterns/layout.hpp)
  // Routed patterns (alltoallv): the routing the plan is made from (patterns/routing.hpp); bytes_per_rank is
  // then its tokens_per_rank x token_bytes.
  std::optional<Routing> routing;
  Location host = host_location();  // host-memory patterns: the kind and NUMA request of their host buffers
  std::string not_runnable;  // non-empty: the case is skipped with this reason (e.g. too few devices)
  // What moves, made by plan_case() (expand() does it); empty when the case is not runnable.
  std::optional<Plan> plan;
  std::size_t index = 0;  // its place in the config's expansion (0-based; the record's `case_index`)

  // Operations per timed sample (the record's `pipeline_depth`): run.pipeline_depth when pipelined, 1 when oneshot.
  int ops_per_sample() const;
  // Timed samples of a fixed sampling: run.iterations, or fewer where run.max_timed_bytes caps the bytes they move
  // (S x ops_per_sample() x samples; never fewer than run.min_iterations). Chosen from the plan's bytes, so two runs
  // of one config take the same samples everywhere.
  int timed_iterations() const;
  // Whether the four-phase latency breakdown is measured after timing: run.breakdown, for oneshot copies only.
  bool breakdown_applies() const;

  // Unique, stable name, e.g. "allgather/sm,blocks=auto/oneshot/dev=0,1/64KiB" (Google Benchmark's
  // name). Options at their default are left out; in-place cases start "allgather-inplace/",
  // host-memory patterns add "/host=<kind>,numa=<request>", block layouts "/<Layout::label()>", routed patterns
  // "/moe=<Routing::label()>",
  // rotated ones end in "/rotate=N", overlap cases in "/beside=<workload label>".
  std::string name() const;
  // Seed of the validation data: differs per case; a hash of what the case is (every engine option,
  // defaults included), not of its name, so a changed default or spelling leaves a case's data as it was.
  std::uint64_t seed() const;
};

// Makes the case's plan from its pattern (its in-place form when in_place), devices, size and
// rotation; leaves it empty for a case that is not runnable. Throws std::invalid_argument for an
// unknown pattern.
void plan_case(Case& c);

// Calls `fn` on the config itself, or on each of its parts (the entries of its "sweeps" list, whose cases
// are concatenated into the one sweep of the run) when it has them.
void for_each_part(Config& config, const std::function<void(Config&)>& fn);

// Expands the axes: device sets x patterns x in-place x engine variants x timings x rotation x
// sizes, each case planned. Device ids are checked against [0, device_count) and "all" becomes
// `all_devices`. Throws InputError.
std::vector<Case> expand(const Config& config, int device_count, const std::vector<int>& all_devices,
                         const std::string& device_word);

// The cases in a random order drawn from `seed` (a Fisher-Yates shuffle on splitmix64, the same on every platform
// and library: an order is reproduced from its recorded seed; --order random).
void shuffle_cases(std::vector<const Case*>& cases, std::uint64_t seed);

}  // namespace dmabench
