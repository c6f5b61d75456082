#include "bench/sampling/sampler.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>

#include "bench/sampling/stats.hpp"

namespace dmabench {
namespace {

// The adaptive rule's state between samples: when the noise is next judged.
class Rule {
 public:
  explicit Rule(const Sampling& r) : r_(r), next_check_(static_cast<std::size_t>(std::max(r.min_samples, 1))) {}

  // The decision after the n-th sample (n = us.size()), `elapsed` seconds into the sampling.
  std::optional<Stop> decide(const std::vector<double>& us, double elapsed) {
    const std::size_t n = us.size();
    const bool enough = n >= static_cast<std::size_t>(r_.min_samples);
    const bool capped = n >= static_cast<std::size_t>(r_.max_samples) || (enough && elapsed >= r_.max_time_s);
    if (enough && elapsed >= r_.min_time_s && (n >= next_check_ || capped)) {
      next_check_ = n + std::max<std::size_t>(1, n / 16);
      const MedianInterval m = median_interval(us);
      if (m.has_95 && m.noise() <= r_.max_noise) return Stop::noise;
    }
    if (n >= static_cast<std::size_t>(r_.max_samples)) return Stop::max_samples;
    if (capped) return Stop::max_time;
    return std::nullopt;
  }

 private:
  const Sampling& r_;
  std::size_t next_check_;
};

}  // namespace

std::string_view to_string(Stop s) {
  switch (s) {
    case Stop::noise: return "noise";
    case Stop::max_time: return "max_time";
    case Stop::max_samples: return "max_samples";
    case Stop::iterations: return "iterations";
  }
  return "?";
}

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Samples take_samples(const std::function<double()>& sample, const Sampling& rule, int iterations,
                     const std::function<double()>& clock, const AgreeStop& agree) {
  Samples out;
  out.outcome.adaptive = rule.adaptive;
  const double start = clock();
  if (!rule.adaptive) {
    out.us.reserve(static_cast<std::size_t>(std::max(iterations, 0)));
    for (int i = 0; i < iterations; ++i) out.us.push_back(sample() * 1e6);
    out.outcome.seconds = clock() - start;
    return out;
  }
  Rule decision(rule);
  while (true) {
    out.us.push_back(sample() * 1e6);
    const double elapsed = clock() - start;
    std::optional<Stop> stop = decision.decide(out.us, elapsed);
    if (agree) stop = agree(stop);
    if (stop) {
      out.outcome.stopped = *stop;
      out.outcome.seconds = elapsed;
      return out;
    }
  }
}

}  // namespace dmabench
