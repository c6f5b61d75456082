#include "bench/measure/overlap.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "bench/measure/timing.hpp"
#include "bench/measure/validation.hpp"

namespace dmabench::measure {
namespace {

double slowest(const std::vector<double>& per_device) { return *std::max_element(per_device.begin(), per_device.end()); }

// Per device, the median over runs.
std::vector<double> per_device_median(const std::vector<std::vector<double>>& runs) {
  std::vector<double> out_ms;
  for (std::size_t d = 0; d < runs.front().size(); ++d) {
    std::vector<double> v;
    for (const auto& run : runs) v.push_back(run[d]);
    out_ms.push_back(median(v));
  }
  return out_ms;
}

// Launches of the workload per run: at least the configured duration and min_samples operations.
int size_runs(beside::Load& load, const OverlapConfig& oc, const LatencyStats& alone, int depth) {
  load.start(1);  // one untimed launch (library warm-up), one timed
  load.wait_ms();
  load.start(1);
  const double one_ms = slowest(load.wait_ms());
  const double target_ms = std::max(oc.duration_ms, oc.min_samples * alone.p50 * depth * 1e-3);
  return static_cast<int>(std::clamp(std::ceil(target_ms / std::max(one_ms, 1e-6)), 1.0, 1e7));
}

struct Rounds {
  std::vector<double> alone_ms, with_ms, ops_with, samples_us;
  std::vector<std::vector<double>> alone_dev, with_dev;
  int dropped = 0;
  bool gpu_clock = false;
};

Rounds run_rounds(const Subject& s, beside::Load& load, int rounds, int launches) {
  Rounds r;
  for (int i = 0; i < rounds; ++i) {
    load.start(launches);
    r.alone_dev.push_back(load.wait_ms());
    r.alone_ms.push_back(slowest(r.alone_dev.back()));
    load.start(launches);
    int n = 0;
    while (!load.finished()) {
      const Sample sample = take_sample(s);
      if (load.finished()) {  // the workload ended during this sample: part of it ran alone
        ++r.dropped;
        break;
      }
      r.samples_us.push_back(sample.seconds_per_op * 1e6);
      r.gpu_clock = r.gpu_clock || sample.gpu_clock;
      ++n;
    }
    r.with_dev.push_back(load.wait_ms());
    r.with_ms.push_back(slowest(r.with_dev.back()));
    r.ops_with.push_back(static_cast<double>(n) * s.depth());
  }
  return r;
}

void fill_figures(Overlap& out, const Rounds& r, const LatencyStats& alone, const Plan& plan,
                  std::optional<double> work_per_launch) {
  const LatencyStats with = summarize(r.samples_us);
  out.times = OverlapTimes{.compute_alone_ms = median(r.alone_ms),
                           .compute_with_ms = median(r.with_ms),
                           .comm_alone_us = alone.p50,
                           .comm_with_us = with.p50,
                           .comm_ops_with = median(r.ops_with)};
  out.figures = overlap_figures(out.times);
  out.rate_alone = out.workload.rate(*out.launches, out.times.compute_alone_ms, work_per_launch);
  out.rate_with = out.workload.rate(*out.launches, out.times.compute_with_ms, work_per_launch);
  out.compute_alone_ms_per_device = per_device_median(r.alone_dev);
  out.compute_with_ms_per_device = per_device_median(r.with_dev);
  out.comm_alone_p99_us = alone.p99;
  out.comm_with_us = with;
  out.comm_samples_dropped = r.dropped;
  out.with_bandwidth = bandwidth(static_cast<double>(plan.total_bytes), plan.bus_factor, with.p50);
  out.gpu_clock = r.gpu_clock;
  out.validated = true;
}

}  // namespace

OverlapFigures overlap_figures(const OverlapTimes& t) {
  if (!(t.compute_alone_ms > 0) || !(t.comm_alone_us > 0))
    throw std::invalid_argument("overlap: alone times must be positive");
  OverlapFigures f;
  f.compute_slowdown_pct = (t.compute_with_ms / t.compute_alone_ms - 1.0) * 100.0;
  f.comm_slowdown_pct = (t.comm_with_us / t.comm_alone_us - 1.0) * 100.0;
  const double c = t.compute_alone_ms, m = t.comm_ops_with * t.comm_alone_us * 1e-3, together = t.compute_with_ms;
  const double shorter = std::min(c, m);
  f.overlap_efficiency = shorter > 0 ? std::clamp((c + m - together) / shorter, 0.0, 1.0) : 0.0;
  return f;
}

Overlap measure_overlap(const Subject& s, const OverlapConfig& config, const std::function<beside::Load&()>& workload,
                        const LatencyStats& alone) {
  Overlap out;
  out.workload = config.compute;
  beside::Load* loaded = nullptr;
  try {
    beside::Load& load = workload();
    loaded = &load;
    out.launches = size_runs(load, config, alone, s.depth());
    // One untimed run at the sized length first: after the case's samples the GPU's clocks may have settled low
    // (on an H100 a GEMM right after oneshot copies ran 5-12% below its rate a few runs later), and the first
    // round alone would be measured on them.
    load.start(*out.launches);
    load.wait_ms();
    out.rounds = config.rounds;
    out.workload_details = load.details();
    const Rounds r = run_rounds(s, load, config.rounds, *out.launches);
    if (r.samples_us.empty()) {
      out.error = fmt::format("no {} operation completed while the workload ran ({} launches, {:.3f} ms alone)",
                              to_string(s.spec.timing), *out.launches, median(r.alone_ms));
      return out;
    }
    load.start(*out.launches);  // the data must be right beside the workload too
    const auto bad = validate_once(s);
    load.wait_ms();
    if (bad) {
      out.validated = false;
      out.validation_error = fmt::format("validation beside {}: {}", config.compute.label(), *bad);
      return out;
    }
    if (auto wrong = load.data_problem()) {  // a workload that moves data: its side, over every run above
      out.validated = false;
      out.validation_error = fmt::format("the workload's own data beside the case: {}", *wrong);
      return out;
    }
    fill_figures(out, r, alone, s.plan, load.work_per_launch());
  } catch (const std::exception& e) {
    out = Overlap();
    out.workload = config.compute;
    out.error = e.what();
    try {
      if (loaded) loaded->wait_ms();  // leave nothing running behind the next case
    } catch (...) {
    }
  }
  return out;
}

}  // namespace dmabench::measure
