#include "bench/measure/breakdown.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <vector>

#include <fmt/format.h>

#include "bench/sampling/stats.hpp"

namespace dmabench::measure {
namespace {

using clock = std::chrono::steady_clock;

struct Stamps {
  double t0, t1, t3;  // launch called, launch returned, completion observed (host ns)
};

double ns(clock::time_point t) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

std::vector<Stamps> run_passes(Operation& op, int passes) {
  std::vector<Stamps> out;
  for (int i = 0; i < passes; ++i) {
    op.arm(1);
    const auto t0 = clock::now();
    op.launch();
    const auto t1 = clock::now();
    op.wait();
    const auto t3 = clock::now();
    out.push_back({ns(t0), ns(t1), ns(t3)});
  }
  return out;
}

// The phases from the two passes; `copies` sorted by start, a whole number per traced operation.
Breakdown phases(const std::vector<Stamps>& plain, const std::vector<Stamps>& traced, const std::vector<CopyInterval>& copies) {
  Breakdown b;
  b.operations = static_cast<int>(plain.size());
  b.copies_per_operation = copies.size() / traced.size();
  const std::size_t per_op = b.copies_per_operation;
  std::vector<double> control, total, copy, sync, schedule;
  for (const auto& s : plain) {
    control.push_back((s.t1 - s.t0) / 1e3);
    total.push_back((s.t3 - s.t0) / 1e3);
  }
  std::size_t consistent = 0;
  for (std::size_t i = 0; i < traced.size(); ++i) {  // operation i executed copies i*k .. i*k+k-1
    const double first = copies[i * per_op].start_ns;
    double last = copies[i * per_op].end_ns;
    for (std::size_t j = 1; j < per_op; ++j) last = std::max(last, copies[i * per_op + j].end_ns);
    copy.push_back((last - first) / 1e3);          // engine clock only: exact
    sync.push_back((traced[i].t3 - last) / 1e3);   // these two rely on the tracer's GPU-to-host conversion
    schedule.push_back((first - traced[i].t1) / 1e3);
    if (first >= traced[i].t0 && last <= traced[i].t3) ++consistent;
  }
  b.control_us = median(control);
  b.total_us = median(total);
  b.copy_us = median(copy);
  b.schedule_us = median(schedule);
  b.sync_us = median(sync);
  b.not_copy_not_control_us = b.total_us - b.control_us - b.copy_us;
  b.aligned_fraction = static_cast<double>(consistent) / static_cast<double>(traced.size());
  return b;
}

}  // namespace

Breakdown measure_breakdown(const Subject& s, int passes) {
  try {
    auto made = s.op.copy_tracer();  // an engine that stamps its own copies (sdma) comes first
    if (!made) made = s.backend.copy_tracer();
    if (!made) return Breakdown{.error = "no copy tracer: " + made.why_not(), .tracer = {}};
    const std::unique_ptr<CopyTracer> tracer = std::move(made).value();
    const std::vector<Stamps> plain = run_passes(s.op, passes);  // host phases: tracing slows the submit calls
    tracer->start();
    const std::vector<Stamps> traced = run_passes(s.op, passes);
    std::vector<CopyInterval> copies = tracer->stop();
    std::sort(copies.begin(), copies.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    if (copies.empty() || copies.size() % traced.size() != 0)
      return Breakdown{.error = fmt::format(
                           "{} copy records for {} traced operations: this backend's tracer does not see the engine's "
                           "copies (CUPTI misses cudaMemcpyBatchAsync; the HSA tracer sees only the hsa engine), or the "
                           "engine uses no copy engine",
                           copies.size(), traced.size()),
                       .tracer = tracer->source()};
    Breakdown b = phases(plain, traced, copies);
    b.tracer = tracer->source();
    return b;
  } catch (const std::exception& e) {
    return Breakdown{.error = e.what(), .tracer = {}};
  }
}

}  // namespace dmabench::measure
