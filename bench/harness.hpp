#pragma once
// The harness owns everything about measuring one case: plan, prepare, validate, warm up and take
// timed samples. Engines only launch and wait. Independent of Google Benchmark (bench/runner.cpp
// drives it from benchmark callbacks), so tests can run cases directly.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/config.hpp"
#include "compute/load.hpp"
#include "engines/backend.hpp"
#include "engines/engine.hpp"
#include "power/meter.hpp"

namespace dmabench {

enum class Status { pending, ok, skipped, failed };
std::string_view to_string(Status s);

class CaseExecution {
 public:
  // `engine` may be null: then `engine_missing` says why (the case is skipped).
  CaseExecution(Case spec, Engine* engine, std::string engine_missing, Backend& backend);

  // Why the case is skipped whatever the machine does (too few devices, engine of another backend
  // or not in this build), or nullopt. Such cases need not be run at all.
  std::optional<std::string> static_skip_reason() const;
  // Plans, checks support, prepares and validates the data once. Never throws: afterwards
  // status() is ok (ready to time), skipped or failed, with reason().
  void setup();
  // Untimed samples (config `warmup`), shaped like timed ones. Throws on runtime errors.
  void warm_up();
  // One timed sample, in seconds per operation: oneshot = one operation launched on every issuing
  // rank and waited for; pipelined = pipeline_depth operations back to back, then one wait, / depth.
  // Host clock (steady_clock). Throws on runtime errors.
  double sample_seconds();
  // Records the samples (microseconds) of one benchmark invocation.
  void add_invocation(std::vector<double> samples_us);
  // The four-phase latency breakdown of one operation (spec().breakdown): control, schedule, copy,
  // sync, from an untraced and a traced pass of `passes` operations each. Never throws: a
  // failure is recorded in the breakdown.
  void measure_breakdown(int passes);
  // Power and energy of the case's operation run back to back through one meter window on
  // `channels`, after the timed samples (never during them). Once per case; never throws: a
  // failure is recorded in the result's `power`.
  void measure_power(power::Meter& meter, const std::vector<int>& channels);
  // The case's operation beside its compute workload (spec().overlap), after the timed samples:
  // `rounds` runs of the workload alone alternating with runs during which the operation is sampled
  // back to back, then one more validation of the data while the workload runs. Never throws: a
  // runtime error is recorded in the result's `overlap`; a validation mismatch fails the case.
  // `workload` gives the case's compute workload (created or reused by the caller).
  void measure_overlap(const std::function<compute::Load&()>& workload);
  const nlohmann::json& overlap() const { return overlap_; }
  // The timed samples (µs) of the last invocation; empty before the first.
  const std::vector<double>& last_invocation() const;
  // Marks the case failed (e.g. a runtime error while timing); its samples are discarded.
  void fail(std::string reason);
  // Frees the engine's buffers.
  void release();

  // The results record. Statistics come from the last `reported_invocations` invocations (the ones
  // the benchmark library reported; earlier ones were its iteration-count probes).
  nlohmann::json result(std::size_t reported_invocations) const;

  const Case& spec() const { return spec_; }
  Status status() const { return status_; }
  const std::string& reason() const { return reason_; }
  bool validated() const { return validated_; }
  const std::optional<Plan>& plan() const { return plan_; }

 private:
  void validate();
  // Fills, poisons, runs one operation and checks it; what was wrong, or nullopt.
  std::optional<std::string> check_once();

  Case spec_;
  Engine* engine_;
  std::string engine_missing_;
  Backend& backend_;
  std::optional<Plan> plan_;
  std::unique_ptr<Operation> op_;
  Status status_ = Status::pending;
  std::string reason_;
  bool validated_ = false;
  bool set_up_ = false;
  std::vector<std::vector<double>> invocations_;
  nlohmann::json details_ = nlohmann::json::object();
  bool gpu_clock_ = false;
  nlohmann::json breakdown_;  // null until measured
  nlohmann::json power_;      // null until measured
  nlohmann::json overlap_;    // null until measured
};

// What one invocation of a case needs besides the case: how its timed samples are taken, and the
// measurements that follow them.
struct CaseHooks {
  // Takes one invocation's timed samples (µs), calling ex.sample_seconds(); unset: the case's
  // `iterations` samples. The program's sampler is Google Benchmark's manual-time loop.
  std::function<std::vector<double>(CaseExecution& ex)> sampler;
  power::Meter* meter = nullptr;       // when set: power after the samples, on power_channels
  std::vector<int> power_channels;
  std::function<compute::Load&()> workload;  // the compute workload of a case with `overlap`
};

// One invocation of a case: set up (the first time), warm up, take the timed samples, then the
// breakdown (when the case asks for it), power (when hooks.meter is set) and overlap (when the case
// has a workload). Never throws: a runtime error fails the case (ex.status(), ex.reason()).
void run_invocation(CaseExecution& ex, const CaseHooks& hooks = {});

// A whole case with one invocation: its results record; the engine's buffers are released.
nlohmann::json run_case(const Case& c, Engine* engine, Backend& backend, const CaseHooks& hooks = {},
                        std::string engine_missing = "");

}  // namespace dmabench
