#pragma once
// Internal to the config parser, shared by its files (bench/config/config.hpp is the public interface):
// config_values.cpp: scalars, sizes and name lists, and the wording of errors; config_engines.cpp: the
// engine variants (an engine and its option axes); config_host.cpp: buffer layouts and host memory;
// config_overlap.cpp: the overlap workload; config_sampling.cpp: fixed or adaptive sampling; config_run.cpp: the run
// settings (their keys, parse and echo); config.cpp: the document (top level, "sweeps", to_json).
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/config/config.hpp"

namespace dmabench::config_parse {

using json = nlohmann::json;

inline constexpr std::size_t kMaxVariants = 4096;  // variants of one engine entry (the product of its option lists)

// ---- config_values.cpp ----
// Throws InputError "config: FIELD: WHAT".
[[noreturn]] void fail(const std::string& field, const std::string& what);
// A value as an error message quotes it (cut at 60 characters).
std::string show(const json& v);
// Every pattern's name, in registry order.
std::vector<std::string> pattern_names();
int parse_int(const json& v, const std::string& field, int min, int max);
// A byte count: an integer >= 1 or a string such as "64KiB".
std::uint64_t parse_size(const json& v, const std::string& field);
// "sizes": a size, a list of sizes, or a range {"from", "to", "factor" | "step"}.
std::vector<std::uint64_t> parse_sizes(const json& v);
// A name or a non-empty list of names from `accepted` ("all": every one), none twice.
std::vector<std::string> parse_names(const json& v, const std::string& field, const std::vector<std::string>& accepted);

// A value or a list of values (an axis), each parsed by `one` with its field name; none twice.
template <class T>
std::vector<T> axis(const json& v, const std::string& field, const std::function<T(const json&, const std::string&)>& one) {
  std::vector<T> out;
  if (!v.is_array()) {
    out.push_back(one(v, field));
    return out;
  }
  if (v.empty()) fail(field, "the list is empty");
  for (std::size_t i = 0; i < v.size(); ++i) {
    T x = one(v[i], fmt::format("{}[{}]", field, i));
    if (std::find(out.begin(), out.end(), x) != out.end()) fail(field, fmt::format("{} is listed twice", show(v[i])));
    out.push_back(std::move(x));
  }
  return out;
}

// ---- config_engines.cpp ----
// One "engines" entry (a name or {name, options}): the product of its option lists, each variant with
// every option filled in.
std::vector<EngineVariant> parse_engine(const json& item, const std::string& field);
// "engines": names or {name, options} objects ("all": every engine), each expanded into its option
// variants; absent: every engine with default options.
std::vector<EngineVariant> parse_engines(const json& doc);

// ---- config_host.cpp ----
// "layout": one entry or a list ("contiguous", or block layouts whose lists are axes).
std::vector<Layout> parse_layouts(const json& v);
// "host_memory": {"kind": ..., "numa": ...}, the product of its kinds and NUMA requests.
std::vector<Location> parse_host(const json& v);
json layouts_json(const std::vector<Layout>& layouts);
json host_json(const std::vector<Location>& host);

// ---- config_alltoallv.cpp ----
// "alltoallv": the routings of the alltoallv pattern (patterns/routing.hpp), the product of its lists; a
// trace file's splits give one routing per step.
// A relative trace path is read from `base_dir` (the config file's directory; empty: the working directory).
std::vector<Routing> parse_routings(const json& v, const std::string& base_dir);
json routings_json(const std::vector<Routing>& routings);

// ---- config_overlap.cpp ----
// "overlap": false or the workload an overlap case runs beside.
std::optional<OverlapConfig> parse_overlap(const json& v);
// The overlap workload as a config gives it (false when there is none).
json overlap_json(const std::optional<OverlapConfig>& o);

// ---- config_sampling.cpp ----
// "iterations" (a fixed number of samples per case, with "max_timed_bytes" and "min_iterations") or, without it,
// adaptive sampling ("min_samples", "min_time", "max_time", "max_samples"); "max_noise" in either mode.
void parse_sampling(const json& doc, RunSettings& c);
// The sampling mode and its parameters as the canonical config writes them (null: not used in this mode).
json sampling_json(const Sampling& s);

// ---- config_run.cpp ----
// The config keys of the run settings (bench/config/run_settings.hpp).
const std::vector<std::string>& run_setting_keys();
// The run settings `doc` gives, into `run` (a key left out keeps run's value); throws InputError naming the key.
void parse_run_settings(const json& doc, RunSettings& run);
// The run settings as the canonical config writes them (keys of the results' context.config).
json run_settings_json(const RunSettings& run);

}  // namespace dmabench::config_parse
