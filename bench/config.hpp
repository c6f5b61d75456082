#pragma once
// Sweep definitions: parse and validate a JSON config, then expand its axes into cases.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/overlap.hpp"
#include "engines/engine.hpp"

namespace dmabench {

class Pattern;

enum class Timing { oneshot, pipelined };
std::string_view to_string(Timing t);

struct EngineVariant {
  std::string engine;
  Options options;  // every option of the engine, defaults filled in
};

struct DeviceSet {
  bool all = false;      // "all": every device of the backend
  std::vector<int> ids;  // when !all
};

struct Config {
  std::string name;
  std::string description;
  std::vector<std::uint64_t> sizes;  // bytes per rank, in sweep order
  std::vector<std::string> patterns;
  std::vector<EngineVariant> engines;
  std::vector<DeviceSet> devices;
  std::vector<Timing> timings;
  // Placement axis: false = out of place; true = in place, for patterns that have an in-place form
  // (allgather); other patterns get no in-place case.
  std::vector<bool> in_place = {false};
  int warmup = 5;           // untimed samples before the timed ones
  int iterations = 100;     // timed samples per case (at most, when max_timed_bytes is set)
  // Byte budget of one case's timed samples: a case whose samples would move more than this
  // (S x operations per sample x iterations) takes fewer samples, down to min_iterations. Unset:
  // every case takes `iterations`. Chosen from bytes, not measured time, so that two runs of one
  // config take the same samples everywhere.
  std::optional<std::uint64_t> max_timed_bytes;
  int min_iterations = 10;
  // Buffer rotation axis: a case keeps `rotate` sets of its buffers and successive operations
  // move successive sets (Plan::sets), so no two operations in a row touch the same bytes.
  std::vector<int> rotate = {1};
  int pipeline_depth = 20;  // operations per pipelined sample
  bool breakdown = false;   // latency breakdown of oneshot copies (needs a copy tracer: CUPTI)
  // Power: measured per ok case after its timed samples when enabled (config or --power).
  bool power = false;
  std::string power_source = "auto";  // auto, nvml, rocm-smi, rapl, none
  double power_window_s = 2.0;
  // Overlap: every case also runs beside this compute workload (bench/overlap.hpp).
  std::optional<OverlapConfig> overlap;
  // "sweeps": parts of one run, each the top-level settings overridden by one entry of the list
  // (e.g. sizes with a matching GEMM shape). When present, the top level holds only the run-wide
  // settings (name, description, power) and cases come from the parts, in order.
  std::vector<Config> sweeps;
};

// Parses a config document; throws InputError naming the field and what it accepts.
Config parse_config(const nlohmann::json& doc);
// Reads and parses a config file (JSON syntax errors are InputErrors too).
Config load_config(const std::string& path);

// The config in canonical form (sizes as an explicit list, options filled), for the results' context.
nlohmann::json to_json(const Config& config);

// Parses a device list such as "0,1,3" or "all" (the --devices flag).
DeviceSet parse_device_list(const std::string& text, const std::string& field);

struct Case {
  std::string pattern;
  EngineVariant engine;
  std::vector<int> devices;  // the devices the pattern uses (rank i on devices[i])
  std::uint64_t bytes_per_rank = 0;
  Timing timing = Timing::oneshot;
  bool in_place = false;  // the pattern's in-place form (Pattern::in_place)
  int warmup = 0, iterations = 0, pipeline_depth = 1;
  int rotate = 1;  // buffer sets the operations cycle through
  bool breakdown = false;    // measure the four-phase latency breakdown after timing
  std::optional<OverlapConfig> overlap;  // also measured beside this compute workload
  // The pattern object of this case (its in-place form when in_place).
  const Pattern& pattern_impl() const;
  std::string not_runnable;  // non-empty: the case is skipped with this reason (e.g. too few devices)

  // Unique, stable name, e.g. "allgather/sm,blocks=auto/oneshot/dev=0,1/64KiB" (Google Benchmark's name;
  // in-place cases start "allgather-inplace/");
  // overlap cases end in "/beside=<workload label>".
  std::string name() const;
  // Seed of the validation data: differs per case.
  std::uint64_t seed() const;
};

// Calls `fn` on the config itself, or on each of its sweeps when it has them.
void for_each_sweep(Config& config, const std::function<void(Config&)>& fn);

// Expands the axes: device sets x patterns x engine variants x timings x sizes. Device ids are
// checked against [0, device_count) and "all" becomes `all_devices`. Throws InputError.
std::vector<Case> expand(const Config& config, int device_count, const std::vector<int>& all_devices,
                         const std::string& device_word);

}  // namespace dmabench
