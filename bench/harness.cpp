#include "bench/harness.hpp"

#include <algorithm>
#include <chrono>
#include <exception>

#include <fmt/format.h>

#include "bench/errors.hpp"
#include "bench/patterns/pattern.hpp"
#include "bench/stats.hpp"

namespace dmabench {

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
  if (spec_.not_runnable.empty()) plan_ = find_pattern(spec_.pattern)->plan(spec_.devices, spec_.bytes_per_rank);
}

std::optional<std::string> CaseExecution::static_skip_reason() const {
  if (!spec_.not_runnable.empty()) return spec_.not_runnable;
  const EngineSpec* es = find_engine_spec(spec_.engine.engine);
  if (es && es->backend != backend_.name())
    return fmt::format("engine {} runs on the {} backend; this run uses the {} backend", es->name, es->backend,
                       backend_.name());
  if (!engine_) return engine_missing_;
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

void CaseExecution::validate() {
  const std::uint64_t seed = spec_.seed();
  op_->fill_sources(seed);
  op_->poison_destinations(seed);
  op_->arm(1);
  op_->launch();
  op_->wait();
  if (auto bad = op_->check_destinations(*plan_, seed)) {
    fail(fmt::format("validation: rank {} (device {}) destination byte {} is 0x{:02x}, expected 0x{:02x}", bad->rank,
                     spec_.devices[bad->rank], bad->offset, bad->got, bad->expected));
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
  auto median = [](std::vector<double> v) { return percentile((std::sort(v.begin(), v.end()), v), 0.5); };
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
      breakdown_ = {{"error", fmt::format("{} copy-engine records for {} traced operations: the engine's copies are "
                                          "not traced as memory copies (cudaMemcpyBatchAsync is not), or it uses no copy engine",
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
  // Batches of about 2 ms, so that a counter update is seen at most one short batch late.
  try {
    const double p50_s = summarize(invocations_.back()).p50 * 1e-6;
    int k = static_cast<int>(std::clamp(2e-3 / std::max(p50_s, 1e-9), 1.0, 64.0));
    if (k > 1 && engine_->unsupported(*plan_, spec_.engine.options, k)) k = 1;  // e.g. gpu-flag: one op per sample
    auto batch = [&]() {
      op_->arm(k);
      for (int i = 0; i < k; ++i) op_->launch();
      op_->wait();
      return k;
    };
    power_ = meter.measure(channels, batch, static_cast<double>(plan_->total_bytes), spec_.name());
    power_["ops_per_batch"] = k;
  } catch (const std::exception& e) {  // the meter catches its own errors; this is the engine's
    power_ = {{"source", meter.source().name()}, {"error", e.what()}};
  }
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

}  // namespace dmabench
