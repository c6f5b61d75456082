#pragma once
// Running one case: prepare its engine's operation, validate the data once, warm up, take the
// timed samples (through a sampler hook), then the measurements the case or the run asks for
// (bench/measure/). Engines only launch and wait. Independent of Google Benchmark (the program's
// sampler is bench/run/gbench.hpp's), so the program and the tests run cases through the same run_case().
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/run/record.hpp"
#include "core/why_not.hpp"
#include "bench/cases/cases.hpp"
#include "bench/beside/load.hpp"
#include "bench/measure/cpu_choice.hpp"
#include "engines/backend.hpp"
#include "engines/engine.hpp"
#include "power/meter.hpp"

namespace dmabench {

struct CaseHooks;

// One case from setup to record: the state run_case() keeps while it runs the case (and what a
// background transfer workload, bench/run/transfer_load.cpp, drives directly).
class CaseExecution {
 public:
  // `engine` may be null: then `engine_missing` says why (the case is skipped).
  CaseExecution(Case spec, Engine* engine, std::string engine_missing, Backend& backend);

  // Why the case is skipped whatever the machine does (too few devices, engine of another backend
  // or not in this build), or nullopt. Such cases need not be run at all.
  WhyNot static_skip_reason() const;
  // Checks support, prepares and validates the data once. Never throws: afterwards status() is ok
  // (ready to time), skipped or failed, with reason().
  void setup();
  // Untimed samples (the case's `warmup`), shaped like timed ones. Throws on runtime errors.
  void warm_up();
  // One timed sample in seconds per operation (measure::take_sample). Throws on runtime errors.
  double sample_seconds();
  // Where the samples are taken (measure/cpu_choice.hpp; null: where the scheduler puts the thread). run_case() sets it
  // from the hooks.
  void choose_cpu_with(measure::CpuChoice* choice) { cpu_choice_ = choice; }
  // The core-share reading taken before the last sample_seconds() (measure/core_share.hpp).
  double last_core_ratio() const { return last_core_ratio_; }
  // The µs inside the launch calls per operation of the last sample_seconds() (measure::Sample's submit).
  double last_submit_us() const { return last_submit_us_; }
  // The case's timed samples by its sampling rule (bench/sampling/sampler.hpp: `iterations` of them, or adaptively; the caller
  // warms up first); in a multi-process run every process stops after the same sample. Throws on runtime errors.
  Samples take_samples();
  // Poisons the destinations, then checks what the samples taken since wrote (measure::check_written):
  // for a case run as a background workload (bench/run/transfer_load.cpp). Throw on runtime errors.
  void poison_destinations();
  std::optional<std::string> check_destinations();
  // The timed samples (µs per operation) of the case and how they were taken: their statistics, computed once, go
  // into the record; no samples fail the case.
  void set_samples(const Samples& samples);
  // What the CPU choice did while the case was sampled (the record's `cpu_choice`; ok cases only).
  void set_cpu_choice(const measure::CpuChoiceCase& done);
  // Marks the case failed (e.g. a runtime error while timing); its statistics are dropped.
  void fail(std::string reason);
  // After the timed samples, the measurements the case or the hooks ask for (breakdown, power,
  // overlap; bench/measure/), sized from the samples' statistics. Never throws: a failing measurement
  // is recorded in its field; a validation mismatch beside the workload fails the case.
  void measure(const CaseHooks& hooks);
  // Frees the engine's buffers. In a multi-process run every process first drops its mappings of
  // the other processes' buffers and they meet, so that no buffer is freed while another process
  // still has it open (collective: every process calls it for every case it set up).
  void release();

  // The record as it stands (built as the case runs, never recomputed).
  const CaseRecord& record() const { return measured_; }
  const Case& spec() const { return measured_.spec; }
  bool set_up() const { return set_up_; }  // setup() ran (the case started)
  // What the engine wrote into its queues during the validated operation (Operation::packet_dump);
  // null for engines that write no packets or when setup did not get that far.
  const nlohmann::json& packet_dump() const { return packet_dump_; }
  Status status() const { return measured_.status; }
  const std::string& reason() const { return measured_.reason; }

 private:
  Engine* engine_;
  std::string engine_missing_;
  Backend& backend_;
  std::unique_ptr<const TypedOptions> options_;  // the variant's options, parsed once (Engine::parse)
  std::unique_ptr<Operation> op_;
  nlohmann::json packet_dump_;
  bool set_up_ = false;
  bool prepared_anywhere_ = false;  // the engine's prepare() ran: some process may hold an operation
  measure::Subject subject();
  void set_up_steps();  // setup() but for its timing
  CaseRecord measured_;
  double last_core_ratio_ = 0;
  double last_submit_us_ = 0;
  measure::CpuChoice* cpu_choice_ = nullptr;
};

// What running a case needs besides the case: how its timed samples are taken, and the measurements
// that follow them.
struct CaseHooks {
  // Warms the case up and takes its timed samples (µs per operation), calling ex.warm_up() and
  // ex.sample_seconds() or ex.take_samples(); unset: the case's `warmup`, then ex.take_samples(). The program's
  // sampler is Google Benchmark's manual-time loop, or dmabench's adaptive one (bench/run/gbench.hpp). Throws on
  // runtime errors.
  std::function<Samples(CaseExecution& ex)> sampler;
  power::Meter* meter = nullptr;       // when set: power after the samples, on power_channels
  std::vector<int> power_channels;
  std::function<beside::Load&()> workload;  // the compute workload of a case with `overlap`
  // The sampling thread's CPU (measure/cpu_choice.hpp): warm-up and samples run pinned to its choice, each sample after
  // a reading it waited on; null: the thread stays where the scheduler puts it (--cpu-choice off, the tests).
  measure::CpuChoice* cpu_choice = nullptr;
};

// The one pass over a case, the same for the program and the tests: set up (prepare, validate once),
// the sampler's samples, their statistics (once), then the breakdown (when the case asks for it),
// power (when hooks.meter is set) and overlap (when the case has a workload). Never throws: a runtime
// error fails the case. The engine's buffers stay until ex.release() (the program writes the case's
// packet dump first).
const CaseRecord& run_case(CaseExecution& ex, const CaseHooks& hooks = {});

// A whole case: its record; the engine's buffers are released.
CaseRecord run_case(const Case& c, Engine* engine, Backend& backend, const CaseHooks& hooks = {},
                    std::string engine_missing = "");

}  // namespace dmabench
