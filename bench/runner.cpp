#include "bench/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "core/revision.hpp"
#include "bench/features.hpp"
#include "bench/run/gbench.hpp"
#include "bench/output/console.hpp"
#include "core/interrupt.hpp"
#include "bench/levels/levels.hpp"
#include "bench/output/out_file.hpp"
#include "bench/power_setup.hpp"
#include "bench/output/case_table.hpp"
#include "bench/levels/processes.hpp"
#include "bench/output/report.hpp"
#include "bench/check.hpp"
#include "bench/output/matrix.hpp"
#include "bench/output/export.hpp"
#include "bench/output/junit.hpp"
#include "bench/measure/calibration.hpp"
#include "bench/sweep/sweep.hpp"
#include "patterns/pattern.hpp"
#include "core/cpus.hpp"
#include "bench/cases/cases.hpp"
#include "engines/registry.hpp"
#include "team/team.hpp"
#include "version.hpp"

namespace dmabench {
namespace {

using json = nlohmann::json;
using sweep::Recorder;

// The backend the run asked for: --backend where given, else the config's "backend", else auto. auto takes the
// build's GPU backend where it opens, else host, and the choice says why (fell_back); gpu takes the build's GPU
// backend or is bad input: a CI job on a runner whose driver broke must not go green on host ranks.
struct BackendChoice {
  std::unique_ptr<Backend> backend;
  std::string asked;      // auto, gpu, host, cuda or hip
  std::string fell_back;  // auto that ran on host: why no GPU backend opened ("": it did not fall back)
  json context() const {
    return {{"asked", asked}, {"ran", backend->name()}, {"fell_back", !fell_back.empty()},
            {"why", fell_back.empty() ? json() : json(fell_back)}};
  }
};

BackendChoice choose_backend(const CliOptions& options, const Config& config) {
  BackendChoice c;
  const bool flag = !options.backend.empty();
  c.asked = flag ? options.backend : config.backend.empty() ? "auto" : config.backend;
  const std::string from = flag || config.backend.empty() ? "--backend " + c.asked
                                                          : fmt::format("the config's \"backend\": \"{}\"", c.asked);
  if (c.asked != "auto" && c.asked != "gpu") {
    auto b = make_backend(c.asked);
    if (!b) throw InputError(fmt::format("{}: not available: {}", from, b.why_not()));
    c.backend = std::move(b).value();
    return c;
  }
  std::vector<std::string> why;
  for (const auto& name : built_backends()) {
    if (name == "host") continue;
    auto b = make_backend(name);
    if (!b) {
      why.push_back(fmt::format("{}: {}", name, b.why_not()));
      continue;
    }
    c.backend = std::move(b).value();
    return c;
  }
  if (why.empty()) why.emplace_back("this build has no GPU backend (built without a CUDA compiler or hipcc)");
  if (c.asked == "gpu")
    throw InputError(fmt::format("{}: no GPU backend opened ({}); the host backend is not taken in its place: give "
                                 "--backend host to run on host ranks",
                                 from, fmt::join(why, "; ")));
  c.fell_back = fmt::format("{}", fmt::join(why, "; "));
  auto host = make_backend("host");
  if (!host) throw InputError(fmt::format("{}: no backend is available: {}; host: {}", from, c.fell_back, host.why_not()));
  c.backend = std::move(host).value();
  return c;
}

std::string device_word(const Backend& b) { return b.name() == "host" ? "host rank" : "GPU"; }

// The config's cases on this backend (--devices overrides the config's device sets); the config is
// left as expanded ("all" replaced by the devices it means), for the context.
// In a multi-process run every case runs on the run's ranks: rank r on the device of process r.
std::vector<Case> sweep_cases(const CliOptions& options, Config& config, const Backend& backend) {
  int device_count = backend.device_count();
  if (team::world().multi()) {
    std::vector<int> ids;
    for (const auto& r : team::world().ranks()) ids.push_back(r.device);
    device_count = std::max(device_count, *std::max_element(ids.begin(), ids.end()) + 1);
    for_each_part(config, [&](Config& c) { c.devices = {DeviceSet{false, ids}}; });
  } else if (options.devices) {
    for_each_part(config, [&](Config& c) { c.devices = {*options.devices}; });
  }
  std::vector<Case> cases = expand(config, device_count, backend.default_devices(), device_word(backend));
  int most_iterations = 0;
  for (const auto& c : cases) most_iterations = std::max(most_iterations, c.timed_iterations());
  gbench::check_samples(options.benchmark_args, most_iterations);
  for_each_part(config, [&](Config& c) {
    for (auto& set : c.devices)
      if (set.all) set = DeviceSet{false, backend.default_devices()};
  });
  return cases;
}

json run_context(const CliOptions& options, const std::vector<std::string>& command_line, const Config& config,
                 Backend& backend) {
  json context = host_context();
  context["dmabench"] = {{"version", kVersion}, {"git_revision", git_revision()}};
  json args = json::array();  // arguments are bytes: recorded with those that are not UTF-8 escaped
  for (const auto& a : command_line) args.push_back(escape_non_utf8(a));
  context["command_line"] = args;
  context["backend"] = backend.name();
  context["engines"] = engine_specs_json();
  context["patterns"] = pattern_specs_json();
  context["machine"] = backend.context();
  context["config_file"] = escape_non_utf8(options.config);
  context["config"] = to_json(config);
  context["processes"] = processes_context();
  context["environment"] = environment_context();
  return context;
}

// --benchmark_list_tests[=true]: Google Benchmark's listing, which runs nothing; dmabench lists as --list does
// (nothing recorded, nothing written).
bool lists_tests(const gbench::Flags& flags) { return flags.on(gbench::Flag::list_tests); }

// Flags a multi-process run cannot honour: every process must take the same samples, and only rank 0
// writes.
void check_multiprocess_flags(const CliOptions& options) {
  if (!team::world().multi()) return;
  for (gbench::Flag flag : {gbench::Flag::min_time, gbench::Flag::out})
    if (options.benchmark_args.has(flag))
      throw InputError(fmt::format("{}: not supported in a multi-process run (every process must take the same "
                                   "samples, and rank 0 writes the results)",
                                   gbench::flag_name(flag)));
  if (options.power && *options.power != "none" && *options.power != "auto")
    throw InputError(fmt::format("--power {}: not measured in a multi-process run yet (each process would meter the "
                                 "whole node); run one process to measure power",
                                 *options.power));
}

struct Start {
  Config config;  // as expanded
  std::unique_ptr<Backend> backend;
  std::vector<Case> cases;
  json backend_choice;  // context.backend_choice: BackendChoice::context()
};

// The config, the backend, every process's rank and the cases; bad input in any process is bad input
// in all of them.
Start start_sweep(const CliOptions& options, const std::vector<std::string>& command_line) {
  Start s;
  s.config = agreed_input([&] {
    check_multiprocess_flags(options);
    if (team::world().multi() && config_read_once(options.config))
      throw InputError(fmt::format("--config {}: a pipe is read once, and every process of a multi-process run reads "
                                   "the config; give a file", options.config));
    std::vector<ConfigOverride> overrides = options.overrides;  // --samples: the config's "samples": true, as a flag
    if (options.samples) overrides.push_back({"--samples", "samples", true});
    return load_config(options.config, overrides);
  });
  check_same_run(command_line, options.config, s.config);
  BackendChoice chosen = agreed_input([&] { return choose_backend(options, s.config); });
  s.backend_choice = chosen.context();
  s.backend = std::move(chosen.backend);
  if (team::world().multi()) {  // --backend auto may pick differently where a process sees no GPU
    const auto names = team::agree_all(std::string(s.backend->name()));
    for (std::size_t r = 1; r < names.size(); ++r)
      if (names[r] != names[0])
        throw InputError(fmt::format("rank {} runs the {} backend and rank 0 the {} backend: every process of a run "
                                     "must run one backend (--backend)",
                                     r, names[r], names[0]));
  }
  if (team::world().multi()) setup_ranks(options, *s.backend);
  s.cases = agreed_input([&] { return sweep_cases(options, s.config, *s.backend); });
  return s;
}

// The run's power meter (none in a multi-process run), its idle baseline taken with every GPU as the
// cases will hold it: with this process's context (power::Meter::calibrate).
// `power_trace`: --power-trace as check_outputs checked it.
RunPower run_power(const CliOptions& options, const std::string& power_trace, const Config& config, const json& machine,
                   Backend& backend) {
  if (team::world().multi()) {
    RunPower none;
    none.context = {{"enabled", false}, {"error", "not measured in a multi-process run"}};
    return none;
  }
  std::function<void()> wake;
  if (backend.name() != "host") wake = [&backend] { backend.prepare_devices(backend.default_devices()); };
  return setup_power(options, power_trace, config, machine, wake);
}

// The paths the run writes, as checked (a symlink resolved): the run writes these, not the paths as given.
struct Outputs {
  OutPath out;                // --out
  std::string benchmark_out;  // "" for none
  std::string power_trace;    // "" for none
  std::string junit;          // "" for none
  std::string csv;            // "" for none
  std::string md;             // "" for none
};

// Every path the run writes, checked before anything runs or is created (bench/output/out_file.hpp).
Outputs check_outputs(const CliOptions& options, const std::vector<const Case*>& selected) {
  Outputs checked;
  OutPath& out = checked.out;
  // every path is checked against every file the run read (the config, --check's reference, traces: files_read)
  out = check_out_path(options.out, options.config);
  std::vector<std::pair<std::string, std::string>> written = {{"--out", out.path}};
  std::vector<std::string> notes = {out.note};
  auto other = [&](const char* flag, const std::string& path, bool creates_directories) {
    const OutPath p = check_output_file(flag, path, options.config, creates_directories);
    written.emplace_back(flag, p.path);
    notes.push_back(p.note);
  };
  if (options.benchmark_args.has(gbench::Flag::out)) {  // in an existing directory, as Google Benchmark's
    other(gbench::flag_name(gbench::Flag::out), options.benchmark_args.value(gbench::Flag::out), false);
    checked.benchmark_out = written.back().second;
  }
  if (!options.power_trace.empty()) {
    other("--power-trace", options.power_trace, true);
    checked.power_trace = written.back().second;
  }
  for (auto [flag, given, path] : {std::tuple{"--junit", &options.junit, &checked.junit},
                                   std::tuple{"--csv", &options.csv, &checked.csv}, std::tuple{"--md", &options.md, &checked.md}})
    if (!given->empty()) {
      other(flag, *given, true);
      *path = written.back().second;
    }
  check_distinct_outputs(written);
  if (!options.packets_dir.empty()) {
    std::vector<std::string> dumps;
    for (const Case* c : selected) dumps.push_back(sweep::packet_file_name(*c));
    check_packets_dir(options.packets_dir, dumps);
  }
  out.note.clear();
  for (const auto& n : notes)
    if (!n.empty()) out.note += (out.note.empty() ? "" : "\ndmabench: ") + n;
  return checked;
}

// The first device a case uses: calibrated where the cases run.
int first_device(const std::vector<Case>& cases) {
  for (const auto& c : cases)
    if (!c.devices.empty()) return c.devices.front();
  return 0;
}

// --order / --order-seed: the seed of the run's random case order, or nullopt for the config's order. A seed not
// given is drawn; every process of a multi-process run takes rank 0's.
std::optional<std::uint64_t> shuffle_seed(const CliOptions& options) {
  if (options.order != "random" && !options.order_seed) return std::nullopt;
  std::uint64_t seed = options.order_seed ? *options.order_seed
                                          : ((static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}()) &
                                                ((1ull << 53) - 1);  // exact in every JSON reader
  if (team::world().multi()) seed = team::agree_all(seed).front();
  return seed;
}

bool uses_pairs(Config& config) {
  bool pairs = false;
  for_each_part(config, [&](Config& c) {
    for (const auto& set : c.devices) pairs = pairs || set.pairs;
  });
  return pairs;
}

// --junit FILE: a test per recorded case (bench/output/junit.hpp), a --check FAIL as its failure, then the `not_run`
// records (a run a signal stopped); the timestamp to the second.
void write_junit(const std::string& path, const Recorder& recorder, const std::vector<check::Verdict>& verdicts,
                 const std::string& started_at, const std::string& host, const std::vector<json>& not_run = {}) {
  std::vector<json> records = recorder.kept();
  records.insert(records.end(), not_run.begin(), not_run.end());
  junit::write(path, junit::test_cases(records, check::failed_lines(verdicts)), started_at.substr(0, 19), host);
}

// --junit, --csv and --md (those given): the recorded cases (--junit: also the `not_run` ones, and the --check FAILs).
void write_reports(const Outputs& outputs, const Recorder& recorder, const std::vector<check::Verdict>& verdicts,
                   const std::string& started_at, const std::string& host, const std::vector<json>& not_run = {}) {
  if (!outputs.junit.empty()) write_junit(outputs.junit, recorder, verdicts, started_at, host, not_run);
  if (!outputs.csv.empty()) table_export::write_csv(outputs.csv, recorder.kept());
  if (!outputs.md.empty()) table_export::write_markdown(outputs.md, recorder.kept());
}

// The selected cases a signal kept from running, as skipped records saying so (for --junit: the results file keeps
// only what ran). `code`: the run's exit code (128 + the signal).
std::vector<json> not_run(const std::vector<const Case*>& selected, const std::vector<json>& kept, int code,
                          std::size_t count) {
  std::set<std::string> ran;
  for (const json& r : kept) ran.insert(r.value("name", ""));
  const std::string why = fmt::format("not run: the run was interrupted ({}, exit {}) after {} of {} cases",
                                      code == 130 ? "SIGINT" : code == 143 ? "SIGTERM" : "a signal", code, kept.size(), count);
  std::vector<json> out;
  for (const Case* c : selected)
    if (!ran.count(c->name()))
      out.push_back({{"name", c->name()}, {"pattern", c->pattern}, {"engine", c->variant.engine}, {"status", "skipped"},
                     {"reason", why}});
  return out;
}

// The lead process's context of the results file (run_context, the calibration, the order, the power meter: `power`).
json lead_context(const CliOptions& options, const std::vector<std::string>& command_line, const Config& config,
                  Backend& backend, const std::vector<Case>& cases, std::optional<std::uint64_t> shuffle,
                  const std::string& power_trace, RunPower& power, const measure::CpuChoice* cpu_choice) {
  json context = run_context(options, command_line, config, backend);
  context["calibration"] = measure::calibrate(backend, first_device(cases));
  context["order"] = {{"mode", shuffle ? "random" : "config"}, {"seed", shuffle ? json(*shuffle) : json()}};
  context["cpu_choice"] = cpu_choice ? cpu_choice->context(cpus::allowed())
                                     : json{{"mode", "off"}, {"allowed", cpus::allowed()}};
  power = run_power(options, power_trace, config, context["machine"], backend);
  context["power"] = power.context;
  return context;
}

// After the sweep, in the process that writes the results: the matrices of a "pairs" run and the
// --check verdicts. Whether every check passed; `verdicts` gets them.
bool report_findings(const std::optional<check::Expectations>& expectations, bool pairs, const std::vector<json>& records,
                     const json& machine, const Backend& backend, std::vector<check::Verdict>& verdicts) {
  if (pairs) print_pair_matrices(records, device_word(backend));
  if (!expectations) return true;
  std::size_t unchecked = 0;
  for (const auto& r : records) {
    if (auto v = expectations->judge(r, machine)) verdicts.push_back(std::move(*v));
    else unchecked += r.value("status", "") == "ok";
  }
  return check::print_verdicts(verdicts, unchecked, expectations->path());
}

// The reports of a run a signal stopped (--junit, --csv, --md): the cases that ran, and those that did not (a cancelled
// CI job still shows every case). Written by the seal of a multi-process run (a launcher kills the processes a moment
// after the signal) or after the sweep.
void reports_on_interrupt(const CliOptions& options, const std::vector<Case>& cases, std::size_t selected,
                          const Recorder& recorder, const Outputs& outputs, const std::string& started_at,
                          const std::string& host) {
  const int code = interrupt::requested() ? interrupt::exit_code() : 143;
  write_reports(outputs, recorder, {}, started_at, host,
                not_run(sweep::selected_cases(options, cases), recorder.kept(), code, selected));
}

// A sweep a signal stopped before its last case: said and the reports written (unless the seal did both); the exit code.
int interrupted(const CliOptions& options, const std::vector<Case>& cases, const sweep::Outcome& outcome,
                const Recorder& recorder, const Outputs& outputs, const std::string& started_at, const std::string& host) {
  if (!outcome.sealed) {  // else said and written when the file was finished
    console::say("\ndmabench: interrupted after {} of {} cases; results in {}\n", recorder.total(), outcome.selected,
                 outputs.out.path);
    reports_on_interrupt(options, cases, outcome.selected, recorder, outputs, started_at, host);
  }
  return interrupt::requested() ? interrupt::exit_code() : 143;
}

// The closing lines of a sweep that ran to its end: nccl-tests' average busbw (not with -q), the counts, the first
// failure, and why nothing was measured where no case was ok.
void say_closing(const CliOptions& options, const Recorder& recorder, const RunStart& started) {
  if (options.verbosity > 0) console::say("\n{}", table_export::avg_busbw_line(recorder.busbw()));
  console::say("\ndmabench: {} ok, {} skipped, {} failed in {:.1f} s; results in {}\n", recorder.count(Status::ok),
             recorder.count(Status::skipped), recorder.count(Status::failed),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started.steady).count(), options.out);
  if (!recorder.first_failure().empty())
    console::say("dmabench: first failure: {}\n", table::one_line(recorder.first_failure(), std::string::npos));
  const auto [skip_reason, skip_count] = recorder.commonest_skip();
  console::say("{}", nothing_measured_line(options, recorder.count(Status::ok), recorder.count(Status::skipped),
                                           recorder.count(Status::failed), skip_reason, skip_count));
}


// The paths the run writes, checked, and --out's lock, in the lead process (else both stay empty); bad input in any
// process is bad input in all of them.
void claim_outputs(const CliOptions& options, const std::vector<Case>& cases, bool lead, std::optional<Outputs>& outputs,
                   std::optional<OutLock>& lock) {
  agreed_input([&, &all = cases] {  // bad input: a filter that selects no case, an output that cannot be written
    if (lead) {
      outputs = check_outputs(options, sweep::selected_cases(options, all));
      lock.emplace(outputs->out.path);
    }
    return 0;
  });
}

// What the lead process says once the input is agreed: --out's note, and a backend auto that fell back to host.
void say_start_notes(const Outputs& outputs, const json& backend_choice) {
  if (!outputs.out.note.empty()) console::say("dmabench: {}\n", outputs.out.note);
  // said once the input is agreed (bad input stays one line), and once a run: --processes' later processes are quiet
  if (backend_choice.value("fell_back", false) && std::getenv(kFallbackSaid) == nullptr)
    console::warn("dmabench: backend {} ran on the host backend (host ranks are threads on this CPU, not GPUs): {}; "
                  "--backend gpu (or a config's \"backend\": \"gpu\") makes this an error\n",
                  backend_choice.value("asked", ""), backend_choice.value("why", ""));
}

// The lead process's results file with its context (`context` gets it; `power`: the run's meter), and the run's first
// line.
std::unique_ptr<ResultsFile> open_results(const CliOptions& options, const std::vector<std::string>& command_line,
                                          Start& s, const Outputs& outputs, const RunStart& started,
                                          std::optional<std::uint64_t> shuffle, RunPower& power,
                                          const measure::CpuChoice* cpu_choice, json& context) {
  context = lead_context(options, command_line, s.config, *s.backend, s.cases, shuffle, outputs.power_trace, power,
                         cpu_choice);
  context["backend_choice"] = s.backend_choice;
  // written with the first record (an existing file is kept until then)
  auto results = std::make_unique<ResultsFile>(outputs.out.path, context, started);
  if (options.verbosity > 0)
    console::say("dmabench {} (git {}): backend {}, {} cases from {}{}, results -> {}\n", kVersion, git_revision(),
             s.backend->name(), s.cases.size(), config_source(options),
             team::world().multi() ? fmt::format(", {} processes", team::world().size()) : std::string(), outputs.out.path);
  return results;
}

// The lead process's end of a sweep that no lost process stopped: an interrupted sweep's reports, or the closing lines,
// the findings (the pairs matrices, --check) and the reports. The exit code.
int lead_ending(const CliOptions& options, const Start& s, const sweep::Outcome& outcome, const Recorder& recorder,
                const Outputs& outputs, const RunStart& started, json& context,
                const std::optional<check::Expectations>& expectations, bool pairs) {
  // a signal that came after the last case stopped nothing: the run ends as usual
  if (outcome.stopped && static_cast<std::size_t>(recorder.total()) < outcome.selected)
    return interrupted(options, s.cases, outcome, recorder, outputs, started.started_at, context.value("host", ""));
  say_closing(options, recorder, started);
  std::vector<check::Verdict> verdicts;
  const bool checked = report_findings(expectations, pairs, recorder.kept(), context["machine"], *s.backend, verdicts);
  write_reports(outputs, recorder, verdicts, started.started_at, context.value("host", ""));
  return finished_run_code(options, recorder.count(Status::ok), recorder.count(Status::failed), checked);
}

}  // namespace

int run(const CliOptions& options, const std::vector<std::string>& command_line) {
  if (options.features) {
    print_features();
    return 0;
  }
  if (options.config.empty() && options.overrides.empty())
    throw InputError("no config: give --config FILE, a preset (dmabench --presets) or sweep flags: -b 1KiB -e 1MiB -f 2");
  if (options.processes > 1 && !options.list && !lists_tests(options.benchmark_args))
    return levels::run_processes(options, std::vector<std::string>(command_line.begin() + 1, command_line.end()));
  const RunStart started = RunStart::now();  // context.started_at, and wall_s when the file is finished
  team::start();  // one process per rank when a launcher started this one
  const bool lead = team::world().rank() == 0;  // the process that prints and writes the results
  Start s = start_sweep(options, command_line);
  const std::optional<std::uint64_t> shuffle = shuffle_seed(options);
  const auto expectations = agreed_input([&] {
    return options.check.empty() ? std::optional<check::Expectations>() : check::Expectations::load(options.check);
  });
  if (options.list || lists_tests(options.benchmark_args)) {
    if (lead) {  // what --benchmark_filter selects (none: bad input, as for a run)
      std::vector<Case> listed;
      for (const Case* c : sweep::selected_cases(options, s.cases)) listed.push_back(*c);
      sweep::print_list(listed, *s.backend, s.cases.size());
    }
    return 0;
  }
  std::optional<Outputs> outputs;
  std::optional<OutLock> lock;
  claim_outputs(options, s.cases, lead, outputs, lock);
  if (lead) say_start_notes(*outputs, s.backend_choice);
  RunPower power;
  std::unique_ptr<ResultsFile> results;
  json context;
  const std::unique_ptr<measure::CpuChoice> cpu_choice = sweep::make_cpu_choice(options);  // every process, before the cases
  if (lead)
    results = open_results(options, command_line, s, *outputs, started, shuffle, power, cpu_choice.get(), context);
  const bool pairs = uses_pairs(s.config);
  Recorder recorder(results.get(), pairs || expectations.has_value() || !options.junit.empty() || !options.csv.empty() ||
                                       !options.md.empty());
  const auto on_seal = [&](std::size_t selected) {
    if (lead) reports_on_interrupt(options, s.cases, selected, recorder, *outputs, started.started_at, context.value("host", ""));
  };
  const sweep::Outcome outcome = sweep::sweep_all(options, s.cases, *s.backend, power, recorder, lock ? &*lock : nullptr,
                                                  lead ? outputs->benchmark_out : std::string(), shuffle, cpu_choice.get(),
                                                  on_seal);
  recorder.finish();  // the whole file and the journal removed (nothing changed if no case was recorded)
  if (!team::world().stopped().empty()) {  // a process of the run is gone
    console::warn("\ndmabench: the run stopped after {} cases: {}{}\n", recorder.total(), team::world().stopped(),
               results ? "; results in " + results->path() : std::string());
    return 3;
  }
  if (!lead)
    return outcome.stopped ? (interrupt::requested() ? interrupt::exit_code() : 143) : recorder.count(Status::failed) > 0;
  return lead_ending(options, s, outcome, recorder, *outputs, started, context, expectations, pairs);
}

}  // namespace dmabench
