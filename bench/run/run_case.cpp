#include "bench/run/run_case.hpp"

#include "bench/measure/calibration.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>

#include <fmt/format.h>

#include "core/errors.hpp"
#include "bench/measure/core_share.hpp"
#include "bench/measure/validation.hpp"
#include "core/host_memory.hpp"
#include "engines/buffer_pool.hpp"
#include "engines/registry.hpp"
#include "team/team.hpp"

namespace dmabench {

CaseExecution::CaseExecution(Case spec, Engine* engine, std::string engine_missing, Backend& backend)
    : engine_(engine), engine_missing_(std::move(engine_missing)), backend_(backend) {
  measured_.spec = std::move(spec);
}

WhyNot CaseExecution::static_skip_reason() const {
  const Case& c = spec();
  if (!c.not_runnable.empty()) return c.not_runnable;
  const EngineSpec* es = find_engine_spec(c.variant.engine);
  if (es && !es->runs_on(backend_.name()))
    return fmt::format("engine {} runs on the {} backend; this run uses the {} backend", es->name, es->backend,
                       backend_.name());
  if (!engine_) return engine_missing_;
  if (c.run.overlap && team::world().multi())
    return std::string("overlap: not measured in a multi-process run (each process would load only its own GPU)");
  if (c.run.overlap)
    if (auto why = beside::unsupported(backend_, c.run.overlap->compute)) return "overlap: " + *why;
  return std::nullopt;
}

measure::Subject CaseExecution::subject() {
  return measure::Subject{spec(), *spec().plan, *engine_, *options_, *op_, backend_};
}

namespace {

// Seconds since t0.
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Runs one step of a case's setup in this process and agrees on its outcome with the other processes
// of a multi-process run: nullopt when it succeeded everywhere; else 's' + why (skipped) or 'f' + why
// (failed), a failure before a skip, the lowest rank's first, naming its rank unless every process
// said the same.
std::optional<std::string> agreed(const std::function<WhyNot()>& step) {
  std::string mine;
  try {
    if (auto why = step()) mine = "s" + *why;
  } catch (const Unsupported& e) {
    mine = std::string("s") + e.what();
  } catch (const std::exception& e) {
    mine = std::string("f") + e.what();
  }
  if (!team::world().multi()) return mine.empty() ? std::nullopt : std::optional<std::string>(mine);
  std::vector<std::string> all;
  try {
    all = team::agree_all(mine);
  } catch (const team::TeamStopped& e) {  // a process is gone: this case fails here and the sweep ends
    return std::string("f") + e.what();
  } catch (const std::runtime_error& e) {  // a process's outcome did not read (team::unreadable)
    return std::string("f") + e.what();
  }
  for (char kind : {'f', 's'})
    for (std::size_t r = 0; r < all.size(); ++r)
      if (!all[r].empty() && all[r][0] == kind) {
        const bool unanimous = std::all_of(all.begin(), all.end(), [&](const std::string& o) { return o == all[r]; });
        return unanimous ? all[r] : fmt::format("{}rank {}: {}", kind, r, all[r].substr(1));
      }
  return std::nullopt;
}

// Why the engine cannot run this plan with one process per rank, or nullopt (also in one process).
WhyNot process_skip_reason(const Engine& engine, const TypedOptions& options, const Case& c) {
  if (!team::world().multi()) return std::nullopt;
  if (c.routing && c.routing->ranks > 0)
    return fmt::format("multi-process run: alltoallv.ranks {} puts several ranks on a GPU in one process; under mpirun or srun "
                       "each process is one rank (leave ranks out)",
                       c.routing->ranks);
  if (auto why = engine.across_processes(*c.plan, options)) return "multi-process run: " + *why;
  if (engine.across_nodes()) return std::nullopt;
  for (const Transfer& t : c.plan->transfers)
    for (int peer : {t.src_rank, t.dst_rank})
      if (team::different_nodes(t.issuer, peer)) {
        const auto& ranks = team::world().ranks();
        return fmt::format("ranks {} and {} run on different hosts ({}, {}): engine {} moves bytes within a node (nccl "
                           "runs across nodes)",
                           t.issuer, peer, ranks[t.issuer].host, ranks[peer].host, c.variant.engine);
      }
  return std::nullopt;
}

// Resolves every host buffer's NUMA request to a node of this machine (Location::node), through the
// backend's device -> node map, or says why the machine has no such node (a skipped case).
WhyNot place_host_buffers(Plan& plan, const Backend& backend) {
  if (!plan.host_memory()) return std::nullopt;
  if (team::world().multi())
    return std::string("host-memory endpoints run in one process (a multi-process run does not place or share host buffers)");
  for (auto* at : {&plan.src_at, &plan.dst_at})
    for (std::size_t r = 0; r < at->size(); ++r) {
      Location& l = (*at)[r];
      if (!l.host) continue;
      auto node = hostmem::resolve(l.numa, backend.numa_node(plan.devices[r]));
      if (!node) return "host_memory: " + node.why_not();
      l.node = *node;
    }
  return std::nullopt;
}

}  // namespace

void CaseExecution::setup() {
  if (set_up_) return;
  set_up_ = true;
  if (auto why = static_skip_reason()) {
    measured_.status = Status::skipped;
    measured_.reason = *why;
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const LendCounts before = lend_counts();
  measured_.setup.emplace();
  set_up_steps();
  SetupCost& cost = *measured_.setup;
  cost.seconds = since(t0);
  const LendCounts after = lend_counts();
  cost.buffers_allocated = after.allocated - before.allocated;
  cost.buffers_reused = after.reused - before.reused;
  cost.bytes_allocated = after.allocated_bytes - before.allocated_bytes;
}

void CaseExecution::set_up_steps() {
  auto end = [&](const std::string& outcome) {  // 's' or 'f' + why, the same on every process
    if (op_ && outcome[0] == 'f') packet_dump_ = op_->packet_dump();  // what was written before the failure
    release();
    if (outcome[0] == 'f') return fail(outcome.substr(1));
    measured_.status = Status::skipped;
    measured_.reason = outcome.substr(1);
  };
  auto support = agreed([&]() -> WhyNot {
    if (!spec().plan) throw std::logic_error("internal error: a runnable case without a plan (see plan_case)");
    if (auto bad = spec().plan->check()) throw std::logic_error("internal error, inconsistent plan: " + *bad);
    options_ = engine_->parse(spec().variant.options);  // once: every later call gets the typed options
    if (spec().plan->exchange && !engine_->exchanges(*options_))
      return std::string("the in-place alltoall exchanges blocks between ranks: only an engine that swaps them runs it "
                         "(sdma packet=swap)");
    if (auto why = process_skip_reason(*engine_, *options_, spec())) return why;
    if (auto why = place_host_buffers(*measured_.spec.plan, backend_)) return why;
    return engine_->unsupported(*spec().plan, *options_, spec().ops_per_sample());
  });
  if (support) return end(*support);
  // Two steps: prepare() holds collectives of its own (buffer handles, NCCL's id), which every process
  // must reach, so nothing of this process's may fail in front of them inside one step.
  auto devices_ready = agreed([&]() -> WhyNot {
    std::vector<int> devices;  // this process's ranks' devices
    for (int r : team::local_ranks(*spec().plan)) devices.push_back(spec().plan->devices[r]);
    if (!devices.empty()) backend_.prepare_devices(devices);
    return std::nullopt;
  });
  if (devices_ready) return end(*devices_ready);
  prepared_anywhere_ = true;
  const auto t_prepare = std::chrono::steady_clock::now();
  auto prepared = agreed([&]() -> WhyNot {
    op_ = engine_->prepare(*spec().plan, *options_);
    return std::nullopt;
  });
  measured_.setup->prepare_s = since(t_prepare);
  if (prepared) return end(*prepared);
  const auto t_validate = std::chrono::steady_clock::now();
  try {
    auto bad = measure::validate_once(subject());  // collective; its errors are every process's
    measured_.setup->validate_s = since(t_validate);
    packet_dump_ = op_->packet_dump();
    if (bad) return end("fvalidation: " + *bad);
    measured_.validated = true;
    measured_.status = Status::ok;
    measured_.engine_details = op_->details();
    measured_.host_memory = op_->host_buffers();
  } catch (const Unsupported& e) {
    end(std::string("s") + e.what());
  } catch (const std::exception& e) {
    end(std::string("f") + e.what());
  }
}

void CaseExecution::warm_up() {
  for (int i = 0; i < spec().run.warmup; ++i) sample_seconds();
}

double CaseExecution::sample_seconds() {
  // before the sample, outside its timed part
  last_core_ratio_ = cpu_choice_ ? cpu_choice_->before_sample() : measure::read_core_share().ratio();
  const measure::Sample s = measure::take_sample(subject());
  measured_.gpu_clock = measured_.gpu_clock || s.gpu_clock;
  last_submit_us_ = s.submit_seconds_per_op * 1e6;
  return s.seconds_per_op;
}

namespace {

// The adaptive rule's decision agreed by the processes of a multi-process run: stop as soon as one process decides to,
// with the lowest such rank's reason (every process sees the same samples, the slowest process's; only their clocks
// differ). Collective.
std::optional<Stop> agreed_stop(std::optional<Stop> mine) {
  for (int stop : team::agree_all(mine ? static_cast<int>(*mine) : -1))
    if (stop >= 0) return static_cast<Stop>(stop);
  return std::nullopt;
}

}  // namespace

Samples CaseExecution::take_samples() {
  std::vector<double> ratios, submits;
  const auto sample = [this, &ratios, &submits] {
    const double s = sample_seconds();
    ratios.push_back(last_core_ratio_);
    submits.push_back(last_submit_us_);
    return s;
  };
  Samples out = dmabench::take_samples(sample, spec().run.sampling, spec().timed_iterations(), steady_seconds,
                                       team::world().multi() ? AgreeStop(agreed_stop) : AgreeStop());
  out.core_ratios = std::move(ratios);
  out.submit_us = std::move(submits);
  return out;
}

void CaseExecution::poison_destinations() { measure::poison(subject()); }

std::optional<std::string> CaseExecution::check_destinations() { return measure::check_written(subject()); }

void CaseExecution::set_samples(const Samples& samples) {
  if (status() != Status::ok) return;
  measured_.timed = measure::timed(samples, *spec().plan, spec().run.sampling);
  if (spec().run.keep_samples) measured_.samples_us = samples.us;
  if (!samples.core_ratios.empty() && samples.core_ratios.size() == samples.us.size())
    measured_.core_share = measure::summarize_core_share(samples.core_ratios);
  measured_.submit = measure::submit_of(samples, op_ ? op_->descriptors() : std::nullopt);
  measured_.cpu = measure::current_cpu();  // the thread that took the samples (the sampler's)
  if (!measured_.timed) fail("no timed samples were taken");
}

void CaseExecution::set_cpu_choice(const measure::CpuChoiceCase& done) {
  if (status() == Status::ok) measured_.cpu_choice = done;
}

void CaseExecution::fail(std::string reason) {
  measured_.status = Status::failed;
  measured_.reason = std::move(reason);
  measured_.timed.reset();
}

void CaseExecution::release() {
  if (prepared_anywhere_ && team::world().multi()) {
    try {
      if (op_) op_->close_peers();
    } catch (...) {  // a failing drain or unmap: the buffers go below all the same
    }
    try {
      team::agree_all(0);  // every process has let go of the others' buffers
    } catch (const team::TeamStopped&) {  // a process is gone: the sweep ends
    }
  }
  prepared_anywhere_ = false;
  op_.reset();
}

void CaseExecution::measure(const CaseHooks& hooks) {
  if (status() != Status::ok || !measured_.timed) return;
  const Case& c = spec();
  const LatencyStats& alone = measured_.timed->latency_us;  // what power and overlap size from
  if (c.breakdown_applies() && !measured_.gpu_clock && team::world().multi()) {
    measured_.breakdown.emplace();
    measured_.breakdown->error = "not measured in a multi-process run (each process would trace only its own copies)";
  } else if (c.breakdown_applies() && !measured_.gpu_clock) {
    measured_.breakdown = measure::measure_breakdown(subject(), std::max(20, c.timed_iterations()));
  }
  if (c.routing) measured_.heaviest_pair = measure::measure_heaviest_pair(subject(), 20);
  if (hooks.meter) measured_.power = measure::measure_power(subject(), *hooks.meter, hooks.power_channels, alone.p50);
  if (c.run.overlap && hooks.workload) {
    measured_.overlap = measure::measure_overlap(subject(), *c.run.overlap, hooks.workload, alone);
    if (measured_.overlap->validated == false) fail(measured_.overlap->validation_error);
  }
}

const CaseRecord& run_case(CaseExecution& ex, const CaseHooks& hooks) {
  ex.setup();  // prepare, validate
  if (ex.status() != Status::ok) return ex.record();
  ex.choose_cpu_with(hooks.cpu_choice);
  try {
    const measure::CpuChoice::Scope pinned(hooks.cpu_choice);  // every allowed CPU back after the samples
    if (hooks.sampler) {
      ex.set_samples(hooks.sampler(ex));
    } else {
      ex.warm_up();
      ex.set_samples(ex.take_samples());
    }
  } catch (const std::exception& e) {
    ex.fail(e.what());
  }
  if (hooks.cpu_choice) ex.set_cpu_choice(hooks.cpu_choice->case_done());
  if (ex.status() != Status::ok) return ex.record();
  ex.measure(hooks);
  return ex.record();
}

CaseRecord run_case(const Case& c, Engine* engine, Backend& backend, const CaseHooks& hooks, std::string engine_missing) {
  CaseExecution ex(c, engine, std::move(engine_missing), backend);
  CaseRecord r = run_case(ex, hooks);
  ex.release();
  return r;
}

}  // namespace dmabench
