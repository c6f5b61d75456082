#include "bench/runner.hpp"

#include <cstdio>
#include <functional>
#include <iostream>
#include <chrono>
#include <map>
#include <memory>
#include <regex>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "bench/errors.hpp"
#include "bench/harness.hpp"
#include "bench/patterns/pattern.hpp"
#include "bench/report.hpp"
#include "bench/stats.hpp"
#include "gpu/features.hpp"
#include "version.hpp"

namespace dmabench {
namespace {

using json = nlohmann::json;

bool has_flag(const std::vector<std::string>& args, const std::string& name) {
  for (const auto& a : args)
    if (a == name || a.rfind(name + "=", 0) == 0) return true;
  return false;
}

std::string flag_value(const std::vector<std::string>& args, const std::string& name) {
  for (const auto& a : args)
    if (a.rfind(name + "=", 0) == 0) return a.substr(name.size() + 1);
  return "";
}

// Forwards to Google Benchmark's own display reporter and, when a case's runs are reported (all
// its repetitions done), hands the case to `on_case` with the number of reported runs.
class CaseReporter final : public benchmark::BenchmarkReporter {
 public:
  CaseReporter(std::unique_ptr<benchmark::BenchmarkReporter> inner,
               std::function<void(const std::string&, std::size_t)> on_case)
      : inner_(std::move(inner)), on_case_(std::move(on_case)) {}
  bool ReportContext(const Context& context) override { return inner_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    std::map<std::string, std::size_t> reported;
    for (const auto& r : runs)
      if (r.run_type == Run::RT_Iteration) ++reported[r.run_name.function_name];
    for (const auto& [name, n] : reported) on_case_(name, n);
    inner_->ReportRuns(runs);
  }
  void Finalize() override { inner_->Finalize(); }

 private:
  std::unique_ptr<benchmark::BenchmarkReporter> inner_;
  std::function<void(const std::string&, std::size_t)> on_case_;
};

std::unique_ptr<benchmark::BenchmarkReporter> display_reporter(const std::vector<std::string>& gb_args) {
  const std::string format = flag_value(gb_args, "--benchmark_format");
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
  if (!format.empty() && format != "console")
    throw InputError(fmt::format("--benchmark_format: '{}' is not supported; accepted: console, json", format));
  const std::string color = flag_value(gb_args, "--benchmark_color");
  const bool use_color = color == "true" || color == "yes" || ((color.empty() || color == "auto") && ::isatty(STDOUT_FILENO));
  return std::make_unique<benchmark::ConsoleReporter>(
      static_cast<benchmark::ConsoleReporter::OutputOptions>(benchmark::ConsoleReporter::OO_Tabular |
                                                             (use_color ? benchmark::ConsoleReporter::OO_Color : 0)));
}

void skip_state(benchmark::State& st, const CaseExecution& ex) {
  const std::string msg = fmt::format("{}: {}", to_string(ex.status()), ex.reason());
#ifdef DMABENCH_GBENCH_SKIP_MESSAGE
  if (ex.status() == Status::skipped) {
    st.SkipWithMessage(msg);
    return;
  }
#endif
  st.SkipWithError(msg.c_str());
}

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
      std::string why;
      load_ = compute::make_load(backend_, spec, devices, &why);
      if (!load_) throw std::runtime_error("compute workload: " + why);
      key_ = key;
    }
    return *load_;
  }

 private:
  Backend& backend_;
  std::string key_;
  std::unique_ptr<compute::Load> load_;
};

struct PowerPlan {
  power::Meter* meter = nullptr;
  bool per_device = true;  // GPU sources: channel i is device i; host sources: all channels
};

// The body of every registered benchmark: one invocation of one case, its samples taken by
// Google Benchmark's manual-time loop.
void run_benchmark(CaseExecution& ex, benchmark::State& st, const PowerPlan& power, Workloads& workloads) {
  CaseHooks hooks;
  hooks.sampler = [&st](CaseExecution& e) {
    std::vector<double> samples_us;
    samples_us.reserve(static_cast<std::size_t>(st.max_iterations));
    for (auto _ : st) {
      const double s = e.sample_seconds();
      st.SetIterationTime(s);
      samples_us.push_back(s * 1e6);
    }
    return samples_us;
  };
  if (power.meter) {
    hooks.meter = power.meter;
    if (power.per_device)
      hooks.power_channels = ex.spec().devices;
    else
      for (int c = 0; c < power.meter->source().channels(); ++c) hooks.power_channels.push_back(c);
  }
  if (const auto& ov = ex.spec().overlap)
    hooks.workload = [&, compute = ov->compute]() -> compute::Load& { return workloads.get(compute, ex.spec().devices); };
  run_invocation(ex, hooks);
  if (ex.status() != Status::ok) return skip_state(st, ex);
  if (ex.overlap().contains("compute_slowdown_pct")) {
    st.counters["compute_slowdown_pct"] = ex.overlap()["compute_slowdown_pct"].get<double>();
    st.counters["p99_beside_us"] = ex.overlap()["comm_with_p99_us"].get<double>();
  }
  if (ex.last_invocation().empty()) return;
  const LatencyStats stats = summarize(ex.last_invocation());
  const Plan& plan = *ex.plan();
  st.counters["p50_us"] = stats.p50;
  st.counters["p99_us"] = stats.p99;
  st.counters["busbw_GBps"] = bandwidth(static_cast<double>(plan.total_bytes), plan.bus_factor, stats.p50).busbw_GBps;
}

std::unique_ptr<Backend> choose_backend(const std::string& wanted) {
  std::string why;
  if (wanted != "auto") {
    auto b = make_backend(wanted, &why);
    if (!b) throw InputError(fmt::format("--backend {}: not available: {}", wanted, why));
    return b;
  }
  for (const auto& name : built_backends())
    if (auto b = make_backend(name, &why)) return b;
  throw InputError("--backend auto: no backend is available");
}

// Google Benchmark's --benchmark_filter semantics (POSIX extended regex searched in the name; a
// leading '-' negates), for the cases dmabench records without running.
bool matches_filter(const std::string& name, const std::string& filter) {
  if (filter.empty() || filter == "all" || filter == ".") return true;
  const bool negate = filter[0] == '-';
  try {
    const bool found = std::regex_search(name, std::regex(negate ? filter.substr(1) : filter, std::regex::extended));
    return found != negate;
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("--benchmark_filter: '{}' is not a valid regular expression: {}", filter, e.what()));
  }
}

std::string device_word(const Backend& b) { return b.name() == "host" ? "host rank" : "GPU"; }

void print_features() {
  fmt::print("dmabench {} (git {})\n", kVersion, kGitRevision);
  fmt::print("backends built: {}\n", fmt::join(built_backends(), ", "));
  std::map<std::string, std::string> backend_state;
  for (const std::string name : {"cuda", "hip", "host"}) {
    std::string why;
    auto b = make_backend(name, &why);
    if (!b) {
      backend_state[name] = "unavailable: " + why;
      fmt::print("\nbackend {}: unavailable: {}\n", name, why);
      continue;
    }
    backend_state[name] = "";
    const json ctx = b->context();
    if (name == "host") {
      fmt::print("\nbackend host: available; ranks are virtual (ids 0..{}), one CPU thread each; CPU {} ({} threads)\n",
                 b->device_count() - 1, ctx["cpu"].get<std::string>(), ctx["cpu_threads"].get<unsigned>());
      continue;
    }
    fmt::print("\nbackend {}: available, {} device(s); versions {}\n", name, b->device_count(), ctx["versions"].dump());
    for (const auto& d : ctx["devices"])
      fmt::print("  GPU {}: {} bus {} memory {:.1f} GiB, {} copy engines, {} multiprocessors, cc {}\n", d["id"].get<int>(),
                 d["name"].get<std::string>(), d["bus_id"].get<std::string>(),
                 d["memory_bytes"].get<double>() / 1073741824.0, d["copy_engines"].get<int>(),
                 d["multiprocessors"].get<int>(), d["compute_capability"].get<std::string>());
    const auto& links = ctx["peer_links"];
    for (std::size_t i = 0; i < links.size(); ++i)
      for (std::size_t j = 0; j < links[i].size(); ++j)
        if (i != j)
          fmt::print("  peer access GPU {} -> GPU {}: {}{}\n", i, j, links[i][j]["access"].get<bool>() ? "yes" : "NO",
                     links[i][j]["access"].get<bool>()
                         ? fmt::format(" (performance rank {})", links[i][j]["performance_rank"].get<int>())
                         : std::string(" (sm engine cases between them are skipped)"));
  }
  fmt::print("\nengines:\n");
  for (const auto& spec : engine_specs()) {
    std::string why;
    auto engine = make_engine(spec.name, &why);
    std::string state;
    if (!engine)
      state = "not built: " + why;
    else if (!backend_state[spec.backend].empty())
      state = "built; backend " + spec.backend + " " + backend_state[spec.backend];
    else
      state = "available";
    fmt::print("  {:<5} [{}] {}\n        {}\n", spec.name, spec.backend, state, spec.description);
    for (const auto& o : spec.options)
      fmt::print("        option {}: {} (accepted: {}; default {})\n", o.name, o.help, o.accepted(), o.default_value.dump());
  }
  // Both vendors' features and the version each needs (gpu/features.cpp): what this build has.
  for (const auto& table : gpu::feature_tables(gpu::this_build())) {
    fmt::print("\n{} features ({} backend), and what this build has:\n", table.vendor, table.backend);
    for (const auto& f : table.features)
      fmt::print("  [{}] {}\n        needs {}{}\n", f.built ? "yes" : "no ", f.name, f.needs, f.note.empty() ? "" : "; " + f.note);
  }
  std::vector<std::string> patterns;
  for (const Pattern* p : all_patterns()) patterns.push_back(fmt::format("{} ({})", p->name(), p->description()));
  fmt::print("\npatterns: {}\n", fmt::join(patterns, "; "));
  fmt::print("timing modes: oneshot (per operation: launch on every issuing rank, wait for all), "
             "pipelined (pipeline_depth operations back to back, one wait, time / depth)\n");
}

}  // namespace

int run(const CliOptions& options, const std::vector<std::string>& command_line) {
  if (has_flag(options.benchmark_args, "--benchmark_enable_random_interleaving") &&
      flag_value(options.benchmark_args, "--benchmark_enable_random_interleaving") != "false")
    throw InputError(
        "--benchmark_enable_random_interleaving: not supported; dmabench keeps one case's buffers alive at a time");
  if (options.features) {
    print_features();
    return 0;
  }
  if (options.config.empty()) throw InputError("--config FILE is required (see configs/; --help for usage)");
  const auto started = std::chrono::steady_clock::now();
  Config config = load_config(options.config);
  std::unique_ptr<Backend> backend = choose_backend(options.backend);
  if (options.devices) for_each_sweep(config, [&](Config& c) { c.devices = {*options.devices}; });
  const std::vector<Case> cases =
      expand(config, backend->device_count(), backend->default_devices(), device_word(*backend));
  for_each_sweep(config, [&](Config& c) {  // the context records the config as expanded
    for (auto& set : c.devices)
      if (set.all) set = DeviceSet{false, backend->default_devices()};
  });

  if (options.list) {
    fmt::print("# {} cases (backend {}); names work with --benchmark_filter\n", cases.size(), backend->name());
    for (const auto& c : cases)
      fmt::print("{}{}\n", c.name(), c.not_runnable.empty() ? "" : "    (skipped: " + c.not_runnable + ")");
    return 0;
  }

  // Engines live for the whole sweep (communicators are set up once); engines of another
  // backend are not created: their cases are skipped.
  std::map<std::string, std::unique_ptr<Engine>> engines;
  std::map<std::string, std::string> engine_missing;
  for (const auto& c : cases) {
    const std::string& name = c.engine.engine;
    if (engines.count(name) || engine_missing.count(name)) continue;
    if (find_engine_spec(name)->backend != backend->name()) {
      engine_missing[name] = "";
      continue;
    }
    std::string why;
    if (auto e = make_engine(name, &why))
      engines[name] = std::move(e);
    else
      engine_missing[name] = why;
  }

  json context = host_context();
  context["dmabench"] = {{"version", kVersion}, {"git_revision", kGitRevision}};
  context["command_line"] = command_line;
  context["backend"] = backend->name();
  context["machine"] = backend->context();
  context["config_file"] = options.config;
  context["config"] = to_json(config);
  // Power: the source is opened and calibrated (update period, idle baseline) before any case runs.
  const bool power_on = options.power ? *options.power != "none" : config.power && config.power_source != "none";
  const std::string power_source = options.power ? *options.power : config.power_source;
  const double power_window = options.power_window_s.value_or(config.power_window_s);
  std::unique_ptr<power::Trace> trace;
  std::unique_ptr<power::Meter> meter;
  PowerPlan power_plan;
  context["power"] = {{"enabled", false}};
  if (power_on) {
    power::Devices devs;
    for (const auto& d : context["machine"]["devices"]) devs.bus_ids.push_back(d["bus_id"].get<std::string>());
    std::string why;
    auto src = power::open(power_source, devs, &why);
    if (!src && power_source != "auto") throw InputError(fmt::format("--power {}: not available: {}", power_source, why));
    if (!src) {
      context["power"] = {{"enabled", false}, {"error", why}};
      fmt::print("dmabench: power not measured: {}\n", why);
    } else {
      if (!options.power_trace.empty()) trace = std::make_unique<power::Trace>(options.power_trace);
      power_plan.per_device = !devs.bus_ids.empty() && src->channels() == static_cast<int>(devs.bus_ids.size());
      meter = std::make_unique<power::Meter>(std::move(src), power_window, trace.get());
      fmt::print("dmabench: power: calibrating {} (update period, idle baseline {} x {:.1f} s)\n", meter->source().name(), 2,
                 power_window);
      std::fflush(stdout);
      try {
        meter->calibrate();
        context["power"] = meter->context();
        context["power"]["enabled"] = true;
        power_plan.meter = meter.get();
      } catch (const std::exception& e) {
        context["power"] = {{"enabled", false}, {"error", std::string("calibration failed: ") + e.what()}};
        fmt::print("dmabench: power not measured: calibration failed: {}\n", e.what());
      }
    }
  }
  ResultsFile results(options.out, context);
  results.write();

  std::vector<std::unique_ptr<CaseExecution>> executions;
  std::map<std::string, CaseExecution*> by_name;
  for (const auto& c : cases) {
    auto it = engines.find(c.engine.engine);
    Engine* engine = it == engines.end() ? nullptr : it->second.get();
    executions.push_back(std::make_unique<CaseExecution>(c, engine, engine_missing[c.engine.engine], *backend));
    by_name[c.name()] = executions.back().get();
  }

  Workloads workloads(*backend);
  std::map<Status, int> counts;
  std::string first_failure;
  auto record = [&](CaseExecution& ex, std::size_t reported) {
    json r = ex.result(reported);
    ex.release();
    const std::string status = r["status"];
    const Status s = status == "ok" ? Status::ok : status == "skipped" ? Status::skipped : Status::failed;
    ++counts[s];
    if (s == Status::failed && first_failure.empty()) first_failure = r["name"].get<std::string>() + ": " + r["reason"].get<std::string>();
    results.add(std::move(r));
  };

  // Cases that cannot run whatever happens are recorded as skipped now, without being run;
  // the rest become one Google Benchmark benchmark each.
  const std::string filter = flag_value(options.benchmark_args, "--benchmark_filter");
  const bool fixed_iterations = !has_flag(options.benchmark_args, "--benchmark_min_time");
  std::map<std::string, int> skipped_now;
  for (auto& ex : executions) {
    CaseExecution* e = ex.get();
    if (auto why = e->static_skip_reason()) {
      // Google Benchmark filters on its full name, which ends in /iterations:N/manual_time
      const std::string gb_name =
          e->spec().name() + (fixed_iterations ? fmt::format("/iterations:{}", e->spec().iterations) : "") + "/manual_time";
      if (!matches_filter(gb_name, filter)) continue;
      e->setup();
      record(*e, 0);
      ++skipped_now[*why];
      continue;
    }
    auto* b = benchmark::RegisterBenchmark(e->spec().name().c_str(),
                                           [e, &power_plan, &workloads](benchmark::State& st) {
                                             run_benchmark(*e, st, power_plan, workloads);
                                           });
    b->UseManualTime()->Unit(benchmark::kMicrosecond);
    if (fixed_iterations) b->Iterations(e->spec().iterations);
  }

  CaseReporter reporter(display_reporter(options.benchmark_args), [&](const std::string& name, std::size_t reported) {
    if (auto it = by_name.find(name); it != by_name.end()) record(*it->second, reported);
  });

  fmt::print("dmabench {} (git {}): backend {}, {} cases from {}, results -> {}\n", kVersion, kGitRevision,
             backend->name(), cases.size(), options.config, options.out);
  for (const auto& [why, n] : skipped_now) fmt::print("dmabench: skipped {} case(s), not run: {}\n", n, why);
  std::fflush(stdout);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::ClearRegisteredBenchmarks();

  fmt::print("\ndmabench: {} ok, {} skipped, {} failed in {:.1f} s; results in {}\n", counts[Status::ok],
             counts[Status::skipped], counts[Status::failed],
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), options.out);
  if (!first_failure.empty()) fmt::print("dmabench: first failure: {}\n", first_failure);
  return counts[Status::failed] > 0 ? 1 : 0;
}

}  // namespace dmabench
