// Config sampling: a fixed number of samples per case ("iterations", with "max_timed_bytes" and "min_iterations"),
// or adaptive sampling ("max_noise", "min_samples", "min_time", "max_time", "max_samples"; bench/sampling/sampler.hpp), and
// it written back.
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "bench/config/config_parse.hpp"

namespace dmabench::config_parse {
namespace {

constexpr int kMaxSamples = 10000000;  // per case, fixed or adaptive: 80 MB of samples
constexpr double kMaxSeconds = 3600;   // of one case's sampling

// The keys only adaptive sampling has, and those only a fixed count has ("max_noise" belongs to both: it also
// judges whether a fixed count's interval is `noisy`).
const std::vector<std::string> kAdaptiveKeys = {"min_samples", "min_time", "max_time", "max_samples"};
const std::vector<std::string> kFixedKeys = {"max_timed_bytes", "min_iterations"};

// A number from lo to hi; above lo only where `above`.
double parse_number(const json& v, const std::string& field, double lo, double hi, bool above, const std::string& what) {
  const bool number = v.is_number() && std::isfinite(v.get<double>());
  if (!number || v.get<double>() > hi || v.get<double>() < lo || (above && v.get<double>() == lo))
    fail(field, fmt::format("expected {}, got {}", what, show(v)));
  return v.get<double>();
}

std::optional<std::string> first_key(const json& doc, const std::vector<std::string>& keys) {
  const auto k = std::find_if(keys.begin(), keys.end(), [&](const std::string& key) { return doc.contains(key); });
  return k == keys.end() ? std::nullopt : std::optional<std::string>(*k);
}

// The mode's own limits: no adaptive key beside iterations, no fixed-count key without it, the bounds in order.
void check_mode(const json& doc, const RunSettings& c) {
  const Sampling& s = c.sampling;
  if (const auto k = first_key(doc, kAdaptiveKeys); k && !s.adaptive)
    fail("iterations, " + *k, fmt::format("iterations takes a fixed number of samples, {} belongs to adaptive sampling "
                                          "(a config without iterations); give one or the other",
                                          *k));
  if (const auto k = first_key(doc, kFixedKeys); k && s.adaptive)
    fail(*k, "applies to a fixed number of samples: give iterations with it, or leave it out (adaptive sampling is "
             "bounded by max_time and max_samples)");
  if (doc.contains("min_iterations") && c.min_iterations > c.iterations)
    fail("min_iterations", fmt::format("{} is more than iterations ({})", c.min_iterations, c.iterations));
  if (s.adaptive && s.min_samples > s.max_samples)
    fail("min_samples", fmt::format("{} is more than max_samples ({})", s.min_samples, s.max_samples));
  if (s.adaptive && s.min_time_s > s.max_time_s)
    fail("min_time", fmt::format("{} s is more than max_time ({} s)", s.min_time_s, s.max_time_s));
}

}  // namespace

void parse_sampling(const json& doc, RunSettings& c) {
  Sampling& s = c.sampling;
  if (doc.contains("iterations")) c.iterations = parse_int(doc["iterations"], "iterations", 1, kMaxSamples);
  if (doc.contains("max_timed_bytes")) c.max_timed_bytes = parse_size(doc["max_timed_bytes"], "max_timed_bytes");
  if (doc.contains("min_iterations")) c.min_iterations = parse_int(doc["min_iterations"], "min_iterations", 1, kMaxSamples);
  if (doc.contains("max_noise"))
    s.max_noise = parse_number(doc["max_noise"], "max_noise", 0, 1, true, "a fraction above 0, at most 1 (0.01 = 1%)");
  if (doc.contains("min_samples")) s.min_samples = parse_int(doc["min_samples"], "min_samples", 1, kMaxSamples);
  if (doc.contains("max_samples")) s.max_samples = parse_int(doc["max_samples"], "max_samples", 1, kMaxSamples);
  if (doc.contains("min_time"))
    s.min_time_s = parse_number(doc["min_time"], "min_time", 0, kMaxSeconds, false,
                                fmt::format("seconds from 0 to {}", kMaxSeconds));
  if (doc.contains("max_time"))
    s.max_time_s = parse_number(doc["max_time"], "max_time", 0, kMaxSeconds, true,
                                fmt::format("seconds above 0, at most {}", kMaxSeconds));
  s.adaptive = !doc.contains("iterations");
  check_mode(doc, c);
}

json sampling_json(const Sampling& s) {
  const auto adaptive_only = [&](json v) { return s.adaptive ? v : json(); };
  return {{"mode", s.adaptive ? "adaptive" : "fixed"},
          {"max_noise", s.max_noise},
          {"min_samples", adaptive_only(s.min_samples)},
          {"min_time", adaptive_only(s.min_time_s)},
          {"max_time", adaptive_only(s.max_time_s)},
          {"max_samples", adaptive_only(s.max_samples)}};
}

}  // namespace dmabench::config_parse
