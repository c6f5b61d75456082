#include "bench/runner.hpp"

#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "bench/features.hpp"
#include "bench/gbench.hpp"
#include "bench/out_file.hpp"
#include "bench/power_setup.hpp"
#include "bench/report.hpp"
#include "bench/run_case.hpp"
#include "bench/sweep.hpp"
#include "version.hpp"

namespace dmabench {
namespace {

using json = nlohmann::json;

// The compute workload of overlap cases: one at a time, reused while consecutive cases need the
// same workload on the same devices (cases of one sweep run in order).
class Workloads {
 public:
  explicit Workloads(Backend& backend) : backend_(backend) {}
  compute::Load& get(const compute::Spec& spec, const std::vector<int>& devices) {
    const std::string key = fmt::format("{}@{}", spec.label(), fmt::join(devices, ","));
    if (key != key_ || !load_) {
      load_.reset();  // free the previous workload's buffers first
      key_.clear();
      auto made = compute::make_load(backend_, spec, devices);
      if (!made) throw std::runtime_error("compute workload: " + made.why_not());
      load_ = std::move(made).value();
      key_ = key;
    }
    return *load_;
  }

 private:
  Backend& backend_;
  std::string key_;
  std::unique_ptr<compute::Load> load_;
};

std::unique_ptr<Backend> choose_backend(const std::string& wanted) {
  if (wanted != "auto") {
    auto b = make_backend(wanted);
    if (!b) throw InputError(fmt::format("--backend {}: not available: {}", wanted, b.why_not()));
    return std::move(b).value();
  }
  for (const auto& name : built_backends())
    if (auto b = make_backend(name)) return std::move(b).value();
  throw InputError("--backend auto: no backend is available");
}

std::string device_word(const Backend& b) { return b.name() == "host" ? "host rank" : "GPU"; }

// The config's cases on this backend (--devices overrides the config's device sets); the config is
// left as expanded ("all" replaced by the devices it means), for the context.
std::vector<Case> sweep_cases(const CliOptions& options, Config& config, const Backend& backend) {
  if (options.devices) for_each_sweep(config, [&](Config& c) { c.devices = {*options.devices}; });
  std::vector<Case> cases = expand(config, backend.device_count(), backend.default_devices(), device_word(backend));
  for_each_sweep(config, [&](Config& c) {
    for (auto& set : c.devices)
      if (set.all) set = DeviceSet{false, backend.default_devices()};
  });
  return cases;
}

// Engines live for the whole sweep (communicators are set up once); engines of another backend
// are not created (their cases are skipped). Engine name -> engine, or the reason it is missing.
struct Engines {
  std::map<std::string, std::unique_ptr<Engine>> made;
  std::map<std::string, std::string> missing;
};
Engines make_engines(const std::vector<Case>& cases, const Backend& backend) {
  Engines e;
  for (const auto& c : cases) {
    const std::string& name = c.engine.engine;
    if (e.made.count(name) || e.missing.count(name)) continue;
    if (!find_engine_spec(name)->runs_on(backend.name())) {
      e.missing[name] = "";
      continue;
    }
    if (auto engine = make_engine(name, backend.name()))
      e.made[name] = std::move(engine).value();
    else
      e.missing[name] = engine.why_not();
  }
  return e;
}

json run_context(const CliOptions& options, const std::vector<std::string>& command_line, const Config& config,
                 Backend& backend) {
  json context = host_context();
  context["dmabench"] = {{"version", kVersion}, {"git_revision", kGitRevision}};
  context["command_line"] = command_line;
  context["backend"] = backend.name();
  context["engines"] = engine_specs_json();
  context["machine"] = backend.context();
  context["config_file"] = options.config;
  context["config"] = to_json(config);
  return context;
}

// Records every finished case in the results file and counts statuses for the summary and the
// exit code.
class Recorder {
 public:
  explicit Recorder(ResultsFile& results) : results_(results) {}
  void add(const CaseRecord& r) {
    ++counts_[r.status];
    if (r.status == Status::failed && first_failure_.empty()) first_failure_ = r.spec.name() + ": " + r.reason;
    results_.add(to_json(r));
  }
  int count(Status s) const { return counts_.count(s) ? counts_.at(s) : 0; }
  const std::string& first_failure() const { return first_failure_; }

 private:
  ResultsFile& results_;
  std::map<Status, int> counts_;
  std::string first_failure_;
};

// --packets DIR: the case's packet dump as DIR/<case name, '/' and other odd characters as '_'>.json
// (results/SCHEMA.md, "Packet dumps"); nothing for cases without one.
void write_packet_dump(const std::string& dir, const CaseExecution& e) {
  if (dir.empty() || e.packet_dump().is_null()) return;
  std::string file = e.spec().name();
  for (char& ch : file)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.' && ch != '=' && ch != ',') ch = '_';
  json doc = {{"schema", "dmabench-packets/1"}, {"case", e.spec().name()}, {"engine", e.spec().engine.engine},
              {"options", e.spec().engine.options}};
  doc.update(e.packet_dump());
  write_json_atomically(dir + "/" + file + ".json", doc);
}

// The sweep: cases that cannot run whatever happens are recorded as skipped at once, without being
// run; the rest become one Google Benchmark benchmark each, recorded as their runs are reported.
void run_sweep(const CliOptions& options, const std::vector<Case>& cases, Backend& backend, RunPower& power,
               Recorder& recorder) {
  Engines engines = make_engines(cases, backend);
  Workloads workloads(backend);
  std::vector<std::unique_ptr<CaseExecution>> executions;
  std::map<std::string, CaseExecution*> by_name;
  std::map<std::string, int> skipped_now;
  const std::string filter = gbench::flag_value(options.benchmark_args, "--benchmark_filter");
  const bool fixed_iterations = !gbench::has_flag(options.benchmark_args, "--benchmark_min_time");
  for (const auto& c : cases) {
    auto it = engines.made.find(c.engine.engine);
    auto ex = std::make_unique<CaseExecution>(c, it == engines.made.end() ? nullptr : it->second.get(),
                                              engines.missing[c.engine.engine], backend);
    if (auto why = ex->static_skip_reason()) {
      if (!gbench::matches_filter(gbench::benchmark_name(c, fixed_iterations), filter)) continue;
      ex->setup();
      recorder.add(ex->record(0));
      ++skipped_now[*why];
      continue;
    }
    CaseExecution& e = *ex;
    gbench::register_case(e, [&e, &power, &workloads] {
      CaseHooks hooks;
      if (power.meter) {
        hooks.meter = power.meter.get();
        hooks.power_channels = power.channels(e.spec().devices);
      }
      if (const auto& ov = e.spec().overlap)
        hooks.workload = [&e, &workloads, spec = ov->compute]() -> compute::Load& { return workloads.get(spec, e.spec().devices); };
      return hooks;
    }, fixed_iterations);
    by_name[c.name()] = ex.get();
    executions.push_back(std::move(ex));
  }
  for (const auto& [why, n] : skipped_now) fmt::print("dmabench: skipped {} case(s), not run: {}\n", n, why);
  std::fflush(stdout);
  gbench::run_registered(options.benchmark_args, [&](const std::string& name, std::size_t reported) {
    auto it = by_name.find(name);
    if (it == by_name.end()) return;
    recorder.add(it->second->record(reported));
    write_packet_dump(options.packets_dir, *it->second);
    it->second->release();
  });
}

}  // namespace

int run(const CliOptions& options, const std::vector<std::string>& command_line) {
  gbench::check_flags(options.benchmark_args);
  if (options.features) {
    print_features();
    return 0;
  }
  if (options.config.empty()) throw InputError("--config FILE is required (see configs/; --help for usage)");
  const auto started = std::chrono::steady_clock::now();
  Config config = load_config(options.config);
  std::unique_ptr<Backend> backend = choose_backend(options.backend);
  const std::vector<Case> cases = sweep_cases(options, config, *backend);
  if (options.list) {
    fmt::print("# {} cases (backend {}); names work with --benchmark_filter\n", cases.size(), backend->name());
    for (const auto& c : cases)
      fmt::print("{}{}\n", c.name(), c.not_runnable.empty() ? "" : "    (skipped: " + c.not_runnable + ")");
    return 0;
  }
  const OutPath out = check_out_path(options.out, options.config);
  const OutLock lock(out.path);
  if (!out.note.empty()) fmt::print("dmabench: {}\n", out.note);
  json context = run_context(options, command_line, config, *backend);
  RunPower power = setup_power(options, config, context["machine"]);
  context["power"] = power.context;
  ResultsFile results(out.path, context);  // written with the first record (an existing file is kept until then)
  fmt::print("dmabench {} (git {}): backend {}, {} cases from {}, results -> {}\n", kVersion, kGitRevision,
             backend->name(), cases.size(), options.config, out.path);
  Recorder recorder(results);
  run_sweep(options, cases, *backend, power, recorder);
  if (results.document()["results"].empty()) results.write();  // a run with no case still leaves its file
  fmt::print("\ndmabench: {} ok, {} skipped, {} failed in {:.1f} s; results in {}\n", recorder.count(Status::ok),
             recorder.count(Status::skipped), recorder.count(Status::failed),
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), options.out);
  if (!recorder.first_failure().empty()) fmt::print("dmabench: first failure: {}\n", recorder.first_failure());
  return recorder.count(Status::failed) > 0 ? 1 : 0;
}

}  // namespace dmabench
