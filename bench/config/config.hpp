#pragma once
// The config: parse and validate a JSON config document into a Config (its axes and settings),
// and write it back in canonical form. Expanding the axes into cases is bench/cases/cases.hpp.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "patterns/layout.hpp"
#include "patterns/routing.hpp"
#include "bench/config/run_settings.hpp"
#include "engines/registry.hpp"

namespace dmabench {

// The timing axis: one operation per timed sample, or run.pipeline_depth of them back to back (Case::ops_per_sample()).
enum class Timing { oneshot, pipelined };
std::string_view to_string(Timing t);

struct DeviceSet {
  bool all = false;      // "all": every device of the backend
  std::vector<int> ids;  // when !all; with pairs: the devices to pair (empty: every device)
  // "pairs" (or {"pairs": [ids]}): every device of the backend (or of ids), taken a pair at a time: two-device patterns (copy, bidir) on
  // every ordered pair, one-device patterns (h2d, d2h, h2d-bidir) on every device alone (bench/cases/cases.cpp).
  bool pairs = false;
};

struct Config {
  std::string name;
  std::string description;
  std::string backend;  // "backend": the run's --backend where the command line gives none ("": auto); run-wide
  std::vector<std::uint64_t> sizes;  // bytes per rank, in sweep order
  std::vector<std::string> patterns;
  std::vector<EngineVariant> engines;
  std::vector<DeviceSet> devices;
  std::vector<Timing> timings;
  // Placement axis: false = out of place; true = in place, for patterns that have an in-place form
  // (allgather); other patterns get no in-place case.
  std::vector<bool> in_place = {false};
  // How each case is run (warm-up, samples, pipeline depth, breakdown, samples kept, overlap): every case gets this
  // value whole (Case::run; bench/config/run_settings.hpp).
  RunSettings run;
  // Buffer rotation axis: a case keeps `rotate` sets of its buffers and successive operations
  // move successive sets (Plan::sets), so no two operations in a row touch the same bytes.
  std::vector<int> rotate = {1};
  // Layout axis: contiguous, or block layouts (each a point of its block_bytes x blocks x order lists).
  std::vector<Layout> layouts = {Layout{}};
  // Routing axis of the alltoallv pattern ("alltoallv": its lists' product; a trace gives a routing per step).
  std::vector<Routing> routings = {Routing{}};
  // Host-memory axis (patterns that use host memory): kinds x NUMA requests.
  std::vector<Location> host = {host_location(true)};
  // Power: measured per ok case after its timed samples when enabled (config or --power).
  bool power = false;
  std::string power_source = "auto";  // auto, nvml, rocm-smi, rapl, none
  double power_window_s = 2.0;
  // "sweeps": parts of one run, each the top-level settings overridden by one entry of the list
  // (e.g. sizes with a matching GEMM shape). When present, the top level holds only the run-wide
  // settings (name, description, power) and cases come from the parts, in order.
  std::vector<Config> sweeps;
};

// One command-line flag that overrides a key of the config document (bench/cli.hpp): applied to the document as read
// (or to flags_document() when there is no config) before parse_config validates it, so each value is checked by the
// config's own parser and an error names the flag. `key`: a top-level key, or a dotted path into objects
// ("alltoallv.topk"); in a config with "sweeps", a sweep that sets the key itself gets the flag's value too.
struct ConfigOverride {
  std::string flag;  // the flag as the error names it, e.g. "-n" or "--set alltoallv.topk"
  std::string key;
  nlohmann::json value;
  bool operator==(const ConfigOverride&) const = default;
};

// The document a sweep from flags alone starts from: {"name": "flags", "timing": "oneshot"} (the config's own defaults
// for the rest: every pattern, every engine, devices "all", adaptive sampling); sizes must come from a flag.
nlohmann::json flags_document();
// Sets each override's key in `doc` (and in the sweeps that set it); throws InputError naming the flag where a dotted
// key runs into a value that is not an object.
void apply_overrides(nlohmann::json& doc, const std::vector<ConfigOverride>& overrides);
// apply_overrides, then parse_config; an error on a key a flag set names the flag ("-n (the config's iterations): ...").
Config parse_config(nlohmann::json doc, const std::vector<ConfigOverride>& overrides, const std::string& base_dir = "");

// Parses a config document; throws InputError naming the field and what it accepts. `base_dir`: where the config
// file is (load_config gives it), against which relative file paths in it are read (alltoallv's "file:PATH"); empty:
// the working directory.
Config parse_config(const nlohmann::json& doc, const std::string& base_dir = "");
// Reads and parses a config file (JSON syntax errors are InputErrors too), the overrides applied. `path`: a file, "-"
// (standard input), /dev/stdin or /dev/fd/N (a pipe: read to its end, at most the size cap; core/read_file.hpp); ""
// with overrides: flags_document().
Config load_config(const std::string& path, const std::vector<ConfigOverride>& overrides = {});
// Whether `path` names a config that can be read once only (standard input, a pipe): a fresh process cannot read it again.
bool config_read_once(const std::string& path);

// The config in canonical form (sizes as an explicit list, options filled), for the results' context.
nlohmann::json to_json(const Config& config);

// Parses a device list such as "0,1,3" or "all" (the --devices flag). repeats: an id may be listed more
// than once (a multi-process run, where the list gives each local rank its GPU and two may share one).
DeviceSet parse_device_list(const std::string& text, const std::string& field, bool repeats = false);

}  // namespace dmabench
