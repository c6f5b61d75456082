// Config run settings (bench/config/run_settings.hpp): their keys, their parse and their echo into the canonical
// config (the results' context.config), in one place. A new run setting adds its key, its parse and its echo here.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "bench/config/config_parse.hpp"

namespace dmabench::config_parse {

const std::vector<std::string>& run_setting_keys() {
  static const std::vector<std::string> keys = {"warmup",      "iterations", "max_timed_bytes", "min_iterations",
                                                "max_noise",   "min_samples", "min_time",       "max_time",
                                                "max_samples", "pipeline_depth", "breakdown",   "samples",
                                                "overlap"};
  return keys;
}

void parse_run_settings(const json& doc, RunSettings& run) {
  if (doc.contains("warmup")) run.warmup = parse_int(doc["warmup"], "warmup", 0, 1000000);
  parse_sampling(doc, run);  // iterations, max_timed_bytes, min_iterations and the sampling (config_sampling.cpp)
  if (doc.contains("pipeline_depth"))
    run.pipeline_depth = parse_int(doc["pipeline_depth"], "pipeline_depth", 1, 1000000);
  for (const char* key : {"breakdown", "samples"}) {
    if (!doc.contains(key)) continue;
    if (!doc[key].is_boolean()) fail(key, fmt::format("expected true or false, got {}", show(doc[key])));
    (std::string(key) == "breakdown" ? run.breakdown : run.keep_samples) = doc[key].get<bool>();
  }
  if (doc.contains("overlap")) run.overlap = parse_overlap(doc["overlap"]);
}

json run_settings_json(const RunSettings& run) {
  return {{"warmup", run.warmup},
          {"iterations", run.iterations},
          {"max_timed_bytes", run.max_timed_bytes ? json(*run.max_timed_bytes) : json()},
          {"min_iterations", run.min_iterations},
          {"sampling", sampling_json(run.sampling)},
          {"pipeline_depth", run.pipeline_depth},
          {"breakdown", run.breakdown},
          {"samples", run.keep_samples},
          {"overlap", overlap_json(run.overlap)}};
}

}  // namespace dmabench::config_parse
