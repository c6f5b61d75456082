#include "bench/harness.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>

#include <fmt/format.h>

#include "bench/errors.hpp"
#include "bench/overlap.hpp"
#include "bench/patterns/pattern.hpp"
#include "bench/stats.hpp"

namespace dmabench {

namespace {
constexpr double kPowerBatchSeconds = 10e-3;  // target length of one batch in a power window
}  // namespace

std::string_view to_string(Status s) {
  switch (s) {
    case Status::pending: return "pending";
    case Status::ok: return "ok";
    case Status::skipped: return "skipped";
    case Status::failed: return "failed";
  }
  return "?";
}

CaseExecution::CaseExecution(Case spec, Engine* engine, std::string engine_missing, Backend& backend)
    : spec_(std::move(spec)), engine_(engine), engine_missing_(std::move(engine_missing)), backend_(backend) {
  if (spec_.not_runnable.empty()) {
    plan_ = spec_.pattern_impl().plan(spec_.devices, spec_.bytes_per_rank);
    plan_->sets = spec_.rotate;
  }
}

std::optional<std::string> CaseExecution::static_skip_reason() const {
  if (!spec_.not_runnable.empty()) return spec_.not_runnable;
  const EngineSpec* es = find_engine_spec(spec_.engine.engine);
  if (es && es->backend != backend_.name())
    return fmt::format("engine {} runs on the {} backend; this run uses the {} backend", es->name, es->backend,
                       backend_.name());
  if (!engine_) return engine_missing_;
  if (spec_.overlap)
    if (auto why = compute::unsupported(backend_, spec_.overlap->compute)) return "overlap: " + *why;
  return std::nullopt;
}

void CaseExecution::setup() {
  if (set_up_) return;
  set_up_ = true;
  auto skip = [&](std::string why) {
    status_ = Status::skipped;
    reason_ = std::move(why);
  };
  if (auto why = static_skip_reason()) return skip(*why);
  try {
    if (auto bad = plan_->check()) {
      status_ = Status::failed;
      reason_ = "internal error, inconsistent plan: " + *bad;
      return;
    }
    const int ops_per_sample = spec_.timing == Timing::pipelined ? spec_.pipeline_depth : 1;
    if (auto why = engine_->unsupported(*plan_, spec_.engine.options, ops_per_sample)) return skip(*why);
    backend_.prepare_devices(spec_.devices);
    op_ = engine_->prepare(*plan_, spec_.engine.options);
    validate();
  } catch (const Unsupported& e) {
    op_.reset();
    skip(e.what());
  } catch (const std::exception& e) {
    op_.reset();
    fail(e.what());
  }
}

std::optional<std::string> CaseExecution::check_once() {
  const std::uint64_t seed = spec_.seed();
  op_->fill_sources(seed);
  op_->poison_destinations(seed);
  for (int s = 0; s < plan_->sets; ++s) {  // one operation per buffer set: every set is written once
    op_->arm(1);
    op_->launch();
    op_->wait();
  }
  if (auto bad = op_->check_destinations(*plan_, seed))
    return fmt::format("rank {} (device {}) destination byte {} is 0x{:02x}, expected 0x{:02x}", bad->rank,
                       spec_.devices[bad->rank], bad->offset, bad->got, bad->expected);
  return std::nullopt;
}

void CaseExecution::validate() {
  if (auto bad = check_once()) {
    fail("validation: " + *bad);
    op_.reset();
    return;
  }
  validated_ = true;
  status_ = Status::ok;
  details_ = op_->details();
}

void CaseExecution::warm_up() {
  for (int i = 0; i < spec_.warmup; ++i) sample_seconds();
}

double CaseExecution::sample_seconds() {
  using clock = std::chrono::steady_clock;
  const int depth = spec_.timing == Timing::pipelined ? spec_.pipeline_depth : 1;
  op_->arm(depth);  // pre-posting is never timed
  const auto t0 = clock::now();
  for (int k = 0; k < depth; ++k) op_->launch();
  op_->wait();
  const auto t1 = clock::now();
  if (auto gpu = op_->device_seconds()) {  // GPU-clock timing (gpu-flag trigger)
    gpu_clock_ = true;
    return *gpu / depth;
  }
  return std::chrono::duration<double>(t1 - t0).count() / depth;
}

void CaseExecution::measure_breakdown(int passes) {
  if (!breakdown_.is_null() || status_ != Status::ok || gpu_clock_) return;
  using clock = std::chrono::steady_clock;
  auto ns = [](clock::time_point t) {
    return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
  };
  struct Stamps {
    double t0, t1, t3;  // launch called, launch returned, completion observed
  };
  auto run = [&](std::vector<Stamps>& out) {
    for (int i = 0; i < passes; ++i) {
      op_->arm(1);
      const auto t0 = clock::now();
      op_->launch();
      const auto t1 = clock::now();
      op_->wait();
      const auto t3 = clock::now();
      out.push_back({ns(t0), ns(t1), ns(t3)});
    }
  };
  try {
    std::string why;
    auto tracer = backend_.copy_tracer(&why);
    if (!tracer) {
      breakdown_ = {{"error", "no copy tracer: " + why}};
      return;
    }
    std::vector<Stamps> plain, traced;
    run(plain);  // host phases come from this untraced pass: tracing slows the submit calls
    tracer->start();
    run(traced);
    std::vector<CopyInterval> copies = tracer->stop();
    // Records are matched to operations by order: operation i executed copies i*k .. i*k+k-1.
    std::sort(copies.begin(), copies.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
    if (copies.empty() || copies.size() % traced.size() != 0) {
      breakdown_ = {{"error", fmt::format("{} copy records for {} traced operations: this backend's tracer does not see "
                                          "the engine's copies (CUPTI misses cudaMemcpyBatchAsync; the HSA tracer sees only "
                                          "the hsa engine), or the engine uses no copy engine",
                                          copies.size(), traced.size())}};
      return;
    }
    const std::size_t per_op = copies.size() / traced.size();
    std::vector<double> control, total, copy, sync, schedule;
    for (const auto& s : plain) {
      control.push_back((s.t1 - s.t0) / 1e3);
      total.push_back((s.t3 - s.t0) / 1e3);
    }
    std::size_t consistent = 0;
    for (std::size_t i = 0; i < traced.size(); ++i) {
      double first = copies[i * per_op].start_ns, last = copies[i * per_op].end_ns;
      for (std::size_t j = 1; j < per_op; ++j) last = std::max(last, copies[i * per_op + j].end_ns);
      copy.push_back((last - first) / 1e3);  // engine clock only: exact
      sync.push_back((traced[i].t3 - last) / 1e3);  // these two rely on CUPTI's GPU-to-host conversion
      schedule.push_back((first - traced[i].t1) / 1e3);
      if (first >= traced[i].t0 && last <= traced[i].t3) ++consistent;
    }
    const double c = median(control), t = median(total), cp = median(copy);
    breakdown_ = {{"control", c},
                  {"schedule", median(schedule)},
                  {"copy", cp},
                  {"sync", median(sync)},
                  {"total", t},
                  {"not_copy_not_control", t - c - cp},
                  {"operations", passes},
                  {"copies_per_operation", per_op},
                  {"aligned_fraction", static_cast<double>(consistent) / static_cast<double>(traced.size())},
                  {"method", "medians over operations. control (host time inside launch) and total from an untraced pass; "
                             "copy = engine end - engine start of the operation's CUPTI copy records (GPU clock); "
                             "schedule = engine start - launch returned and sync = completion observed - engine end "
                             "from a CUPTI-traced pass with GPU times converted by CUPTI onto the host steady clock; "
                             "aligned_fraction = operations whose converted copy lies inside [launch, completion] "
                             "(below 1: the conversion is off and schedule/sync are not reliable; "
                             "not_copy_not_control = total - control - copy needs no conversion)"}};
  } catch (const std::exception& e) {
    breakdown_ = {{"error", e.what()}};
  }
}

void CaseExecution::measure_power(power::Meter& meter, const std::vector<int>& channels) {
  if (!power_.is_null() || status_ != Status::ok || invocations_.empty() || invocations_.back().empty()) return;
  // Batches of about 10 ms launched back to back (the meter reads the counters on its own thread):
  // the devices drain only for the moment between one batch's completion and the next launch.
  try {
    const double p50_s = summarize(invocations_.back()).p50 * 1e-6;
    int k = static_cast<int>(std::clamp(kPowerBatchSeconds / std::max(p50_s, 1e-9), 1.0, 4096.0));
    // the largest batch the engine takes (gpu-flag: one operation; pre-posting: a bounded queue)
    while (k > 1 && engine_->unsupported(*plan_, spec_.engine.options, k)) k /= 2;
    const power::Batch batch{.arm = [&] { op_->arm(k); },
                             .run = [&] {
                               for (int i = 0; i < k; ++i) op_->launch();
                               op_->wait();
                               return k;
                             }};
    power_ = meter.measure(channels, batch, static_cast<double>(plan_->total_bytes), spec_.name());
    power_["ops_per_batch"] = k;
  } catch (const std::exception& e) {  // the meter catches its own errors; this is the engine's
    power_ = {{"source", meter.source().name()}, {"error", e.what()}};
  }
}

void CaseExecution::measure_overlap(const std::function<compute::Load&()>& workload) {
  if (!overlap_.is_null() || !spec_.overlap || status_ != Status::ok || invocations_.empty() ||
      invocations_.back().empty())
    return;
  const OverlapConfig& oc = *spec_.overlap;
  const int depth = spec_.timing == Timing::pipelined ? spec_.pipeline_depth : 1;
  auto slowest = [](const std::vector<double>& per_device) { return *std::max_element(per_device.begin(), per_device.end()); };
  compute::Load* loaded = nullptr;
  try {
    compute::Load& load = workload();
    loaded = &load;
    const LatencyStats alone = summarize(invocations_.back());
    // Calibrate: one untimed launch (library warm-up), one timed; then size the runs.
    load.start(1);
    load.wait_ms();
    load.start(1);
    const double one_ms = slowest(load.wait_ms());
    const double target_ms = std::max(oc.duration_ms, oc.min_samples * alone.p50 * depth * 1e-3);
    const int launches = static_cast<int>(std::clamp(std::ceil(target_ms / std::max(one_ms, 1e-6)), 1.0, 1e7));

    std::vector<double> alone_ms, with_ms, ops_with, samples_us;
    std::vector<std::vector<double>> alone_dev, with_dev;
    int dropped = 0;
    for (int r = 0; r < oc.rounds; ++r) {
      load.start(launches);
      alone_dev.push_back(load.wait_ms());
      alone_ms.push_back(slowest(alone_dev.back()));
      load.start(launches);
      int n = 0;
      while (!load.finished()) {
        const double s = sample_seconds();
        if (load.finished()) {  // the workload ended during this sample: part of it ran alone
          ++dropped;
          break;
        }
        samples_us.push_back(s * 1e6);
        ++n;
      }
      with_dev.push_back(load.wait_ms());
      with_ms.push_back(slowest(with_dev.back()));
      ops_with.push_back(static_cast<double>(n) * depth);
    }
    nlohmann::json out = {{"compute", spec_.overlap->compute.to_json()}, {"rounds", oc.rounds}, {"launches", launches}};
    out["compute"]["details"] = load.details();
    if (samples_us.empty()) {
      out["error"] = fmt::format("no {} operation completed while the workload ran ({} launches, {:.3f} ms alone)",
                                 to_string(spec_.timing), launches, median(alone_ms));
      overlap_ = out;
      return;
    }
    // The data must be right beside the workload too.
    load.start(launches);
    const auto bad = check_once();
    load.wait_ms();
    if (bad) {
      out["validated"] = false;
      overlap_ = out;
      fail(fmt::format("validation beside {}: {}", spec_.overlap->compute.label(), *bad));
      return;
    }
    const LatencyStats with = summarize(samples_us);
    OverlapTimes t{.compute_alone_ms = median(alone_ms),
                   .compute_with_ms = median(with_ms),
                   .comm_alone_us = alone.p50,
                   .comm_with_us = with.p50,
                   .comm_ops_with = median(ops_with)};
    const OverlapFigures f = overlap_figures(t);
    auto per_device = [&](const std::vector<std::vector<double>>& runs) {
      std::vector<double> out_ms;
      for (std::size_t d = 0; d < runs.front().size(); ++d) {
        std::vector<double> v;
        for (const auto& run : runs) v.push_back(run[d]);
        out_ms.push_back(median(v));
      }
      return out_ms;
    };
    const auto& cs = spec_.overlap->compute;
    out["compute"]["rate_unit"] = cs.rate_unit();
    out["compute"]["rate_alone"] = cs.rate(launches, t.compute_alone_ms);
    out["compute"]["rate_with"] = cs.rate(launches, t.compute_with_ms);
    out["compute_alone_ms"] = t.compute_alone_ms;
    out["compute_with_ms"] = t.compute_with_ms;
    out["compute_slowdown_pct"] = f.compute_slowdown_pct;
    out["compute_alone_ms_per_device"] = per_device(alone_dev);
    out["compute_with_ms_per_device"] = per_device(with_dev);
    out["comm_alone_us"] = t.comm_alone_us;
    out["comm_with_us"] = t.comm_with_us;
    out["comm_slowdown_pct"] = f.comm_slowdown_pct;
    out["comm_alone_p99_us"] = alone.p99;
    out["comm_with_p99_us"] = with.p99;
    out["comm_with_latency_us"] = {{"min", with.min}, {"p50", with.p50}, {"mean", with.mean}, {"p95", with.p95},
                                   {"p99", with.p99}, {"max", with.max}, {"stddev", with.stddev}};
    out["comm_with_samples"] = with.count;
    out["comm_samples_dropped"] = dropped;
    out["comm_ops_with"] = t.comm_ops_with;
    const Bandwidth bw = bandwidth(static_cast<double>(plan_->total_bytes), plan_->bus_factor, t.comm_with_us);
    out["algbw_with_GBps"] = bw.algbw_GBps;
    out["busbw_with_GBps"] = bw.busbw_GBps;
    out["overlap_efficiency"] = f.overlap_efficiency;
    out["validated"] = true;
    out["clock"] = {{"compute", "device (per-device start/stop marks)"}, {"comm", gpu_clock_ ? "gpu" : "host"}};
    overlap_ = out;
  } catch (const std::exception& e) {
    overlap_ = {{"compute", spec_.overlap->compute.to_json()}, {"error", e.what()}};
    try {
      if (loaded) loaded->wait_ms();  // leave nothing running behind the next case
    } catch (...) {
    }
  }
}

const std::vector<double>& CaseExecution::last_invocation() const {
  static const std::vector<double> none;
  return invocations_.empty() ? none : invocations_.back();
}

void CaseExecution::add_invocation(std::vector<double> samples_us) { invocations_.push_back(std::move(samples_us)); }

void CaseExecution::fail(std::string reason) {
  status_ = Status::failed;
  reason_ = std::move(reason);
  invocations_.clear();
}

void CaseExecution::release() { op_.reset(); }

nlohmann::json CaseExecution::result(std::size_t reported_invocations) const {
  using json = nlohmann::json;
  json r = {{"name", spec_.name()},
            {"pattern", spec_.pattern},
            {"engine", spec_.engine.engine},
            {"options", spec_.engine.options},
            {"devices", spec_.devices},
            {"ranks", spec_.devices.size()},
            {"bytes", plan_ ? json(plan_->total_bytes) : json()},
            {"bytes_per_rank", spec_.bytes_per_rank},
            {"timing", to_string(spec_.timing)},
            {"in_place", spec_.in_place},
            {"rotate", spec_.rotate},
            {"pipeline_depth", spec_.pipeline_depth},
            {"warmup", spec_.warmup},
            {"status", to_string(status_)},
            {"reason", reason_},
            {"validated", validated_},
            {"iterations", 0},
            {"latency_us", nullptr},
            {"algbw_GBps", nullptr},
            {"busbw_GBps", nullptr},
            {"clock", gpu_clock_ ? "gpu" : "host"}};
  if (!details_.empty()) r["engine_details"] = details_;
  if (!breakdown_.is_null()) r["breakdown_us"] = breakdown_;
  if (!power_.is_null()) r["power"] = power_;
  if (!overlap_.is_null()) r["overlap"] = overlap_;
  if (status_ != Status::ok) return r;
  std::vector<double> samples;
  const std::size_t first = invocations_.size() > reported_invocations ? invocations_.size() - reported_invocations : 0;
  for (std::size_t i = first; i < invocations_.size(); ++i)
    samples.insert(samples.end(), invocations_[i].begin(), invocations_[i].end());
  if (samples.empty()) {
    r["status"] = to_string(Status::failed);
    r["reason"] = "no timed samples were taken";
    return r;
  }
  const LatencyStats s = summarize(samples);
  const Bandwidth b = bandwidth(static_cast<double>(plan_->total_bytes), plan_->bus_factor, s.p50);
  r["iterations"] = s.count;
  r["latency_us"] = {{"min", s.min}, {"p50", s.p50},   {"mean", s.mean},    {"p95", s.p95},
                     {"p99", s.p99}, {"max", s.max},   {"stddev", s.stddev}};
  r["algbw_GBps"] = b.algbw_GBps;
  r["busbw_GBps"] = b.busbw_GBps;
  return r;
}

void run_invocation(CaseExecution& ex, const CaseHooks& hooks) {
  ex.setup();  // once per case: plan, prepare, validate
  if (ex.status() != Status::ok) return;
  std::vector<double> samples_us;
  try {
    ex.warm_up();
    if (hooks.sampler) {
      samples_us = hooks.sampler(ex);
    } else {
      for (int i = 0; i < ex.spec().iterations; ++i) samples_us.push_back(ex.sample_seconds() * 1e6);
    }
  } catch (const std::exception& e) {
    ex.fail(e.what());
    return;
  }
  if (samples_us.empty()) return;
  ex.add_invocation(std::move(samples_us));
  if (ex.spec().breakdown) ex.measure_breakdown(std::max(20, ex.spec().iterations));
  if (hooks.meter) ex.measure_power(*hooks.meter, hooks.power_channels);
  if (ex.spec().overlap && hooks.workload) ex.measure_overlap(hooks.workload);
}

nlohmann::json run_case(const Case& c, Engine* engine, Backend& backend, const CaseHooks& hooks,
                        std::string engine_missing) {
  CaseExecution ex(c, engine, std::move(engine_missing), backend);
  run_invocation(ex, hooks);
  nlohmann::json r = ex.result(1);
  ex.release();
  return r;
}

}  // namespace dmabench
