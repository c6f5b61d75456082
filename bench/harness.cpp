#include "bench/harness.hpp"

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
    if (auto why = engine_->unsupported(*plan_, spec_.engine.options)) return skip(*why);
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
}

void CaseExecution::warm_up() {
  for (int i = 0; i < spec_.warmup; ++i) sample_seconds();
}

double CaseExecution::sample_seconds() {
  using clock = std::chrono::steady_clock;
  const int depth = spec_.timing == Timing::pipelined ? spec_.pipeline_depth : 1;
  const auto t0 = clock::now();
  for (int k = 0; k < depth; ++k) op_->launch();
  op_->wait();
  const auto t1 = clock::now();
  return std::chrono::duration<double>(t1 - t0).count() / depth;
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
            {"busbw_GBps", nullptr}};
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
