#include "bench/gbench.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <regex>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "bench/interrupt.hpp"
#include "core/errors.hpp"

namespace dmabench::gbench {

// Forwards to Google Benchmark's own display reporter and, when a case's runs are reported (all
// its repetitions done), hands the case to `on_case` with the number of reported runs.
class CaseReporter final : public benchmark::BenchmarkReporter {
 public:
  CaseReporter(std::unique_ptr<benchmark::BenchmarkReporter> inner,
               std::function<void(const std::string&, std::size_t)> on_case)
      : inner_(std::move(inner)), on_case_(std::move(on_case)) {}
  // A sweep may run in batches: the context once, the final lines once (finish()).
  bool ReportContext(const Context& context) override {
    if (context_reported_) return true;
    context_reported_ = true;
    return inner_->ReportContext(context);
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    std::map<std::string, std::size_t> reported;
    for (const auto& r : runs)
      if (r.run_type == Run::RT_Iteration) ++reported[r.run_name.function_name];
    for (const auto& [name, n] : reported) on_case_(name, n);
    inner_->ReportRuns(runs);
  }
  void Finalize() override {}
  void finish() { inner_->Finalize(); }

 private:
  std::unique_ptr<benchmark::BenchmarkReporter> inner_;
  std::function<void(const std::string&, std::size_t)> on_case_;
  bool context_reported_ = false;
};

namespace {

// Prints nothing (the processes of a multi-process run other than rank 0).
class SilentReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

std::unique_ptr<benchmark::BenchmarkReporter> display_reporter(const std::vector<std::string>& args) {
  const std::string format = flag_value(args, "--benchmark_format");
  if (format == "json") return std::make_unique<benchmark::JSONReporter>();
  const std::string color = flag_value(args, "--benchmark_color");
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

// The counters of the last invocation, read from the case's record.
void set_counters(benchmark::State& st, const CaseRecord& r) {
  if (r.overlap && r.overlap->validated == true) {
    st.counters["compute_slowdown_pct"] = r.overlap->figures.compute_slowdown_pct;
    st.counters["p99_beside_us"] = r.overlap->comm_with_us.p99;
  }
  if (!r.timed) return;
  st.counters["p50_us"] = r.timed->latency_us.p50;
  st.counters["p99_us"] = r.timed->latency_us.p99;
  st.counters["busbw_GBps"] = r.timed->bandwidth.busbw_GBps;
}

}  // namespace

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

namespace {

enum class Value { boolean, count, seconds, choice, text, pairs };

struct FlagSpec {
  const char* name;
  Value value;
  std::vector<std::string> choices;  // Value::choice
  const char* refused = nullptr;     // set: the flag (or a true boolean) is refused, with this reason
};

// Google Benchmark's flags (1.7: benchmark.cc) and what dmabench accepts of each.
const std::vector<FlagSpec>& flag_specs() {
  static const std::vector<FlagSpec> specs = {
      {"--benchmark_filter", Value::text, {}},
      {"--benchmark_repetitions", Value::count, {}},
      {"--benchmark_min_time", Value::seconds, {}},
      {"--benchmark_min_warmup_time", Value::seconds, {}},
      {"--benchmark_format", Value::choice, {"console", "json"}},
      {"--benchmark_out", Value::text, {}},
      {"--benchmark_out_format", Value::choice, {"console", "json", "csv"}},
      {"--benchmark_color", Value::choice, {"auto", "true", "false", "yes", "no"}},
      {"--benchmark_counters_tabular", Value::boolean, {}},
      {"--benchmark_context", Value::pairs, {}},
      {"--benchmark_enable_random_interleaving", Value::boolean, {},
       "not supported; dmabench keeps one case's buffers alive at a time"},
      {"--benchmark_list_tests", Value::boolean, {}},
      {"--benchmark_report_aggregates_only", Value::boolean, {},
       "not supported; dmabench records every case from its runs (the results file has the statistics)"},
      {"--benchmark_display_aggregates_only", Value::boolean, {},
       "not supported; dmabench records every case from its runs (the results file has the statistics)"},
      {"--benchmark_perf_counters", Value::text, {}, "not supported; dmabench's times are manual times of the copies"},
      {"--benchmark_time_unit", Value::text, {}, "not supported; dmabench reports microseconds (latency_us)"},
  };
  return specs;
}

bool all_digits(const std::string& v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
}

// A decimal number of seconds (digits, then optionally '.' and digits): no sign, hex, exponent, nan or inf.
bool decimal(const std::string& v) {
  const auto dot = v.find('.');
  return all_digits(v.substr(0, dot)) && (dot == std::string::npos || all_digits(v.substr(dot + 1))) && v.size() <= 12;
}

// Whether `v` is accepted for the flag; `accepted` says what is.
bool value_ok(const FlagSpec& f, const std::string& v, std::string& accepted) {
  switch (f.value) {
    case Value::boolean:
      accepted = "true, false, yes, no, 1, 0";
      return v == "true" || v == "false" || v == "yes" || v == "no" || v == "1" || v == "0";
    case Value::count:
      accepted = "an integer from 1 to 999999";
      return all_digits(v) && v.size() <= 6 && std::stoi(v) >= 1;
    case Value::seconds: {
      // --benchmark_min_time: Google Benchmark then runs up to 10^9 iterations, and dmabench keeps every sample
      const bool min_time = f.name == std::string("--benchmark_min_time");
      accepted = min_time ? "a decimal number of seconds above 0, at most 60" : "a decimal number of seconds from 0 to 86400";
      return decimal(v) && std::stod(v) <= (min_time ? 60 : 86400) && (std::stod(v) > 0 || !min_time);
    }
    case Value::choice:
      accepted = fmt::format("{}", fmt::join(f.choices, ", "));
      return std::find(f.choices.begin(), f.choices.end(), v) != f.choices.end();
    case Value::pairs:
      accepted = "key=value pairs separated by commas";
      for (std::size_t at = 0; at <= v.size();) {
        const std::size_t end = std::min(v.find(',', at), v.size());
        const std::string pair = v.substr(at, end - at);
        const std::size_t eq = pair.find('=');
        if (eq == 0 || eq == std::string::npos || pair.find('=', eq + 1) != std::string::npos) return false;
        at = end + 1;
      }
      return true;
    case Value::text:
      accepted = "a non-empty value";
      return !v.empty();
  }
  return false;
}

}  // namespace

void check_flag(const std::string& arg) {
  const std::string name = arg.substr(0, arg.find('='));
  const auto& specs = flag_specs();
  const auto f = std::find_if(specs.begin(), specs.end(), [&](const FlagSpec& s) { return name == s.name; });
  if (f == specs.end()) {
    std::vector<std::string> names;
    for (const auto& s : specs)
      if (!s.refused) names.emplace_back(s.name);
    throw InputError(fmt::format("unknown Google Benchmark flag '{}'; accepted: {}", name, fmt::join(names, ", ")));
  }
  const bool has_value = arg.size() > name.size();
  if (!has_value && f->value != Value::boolean)
    throw InputError(fmt::format("{}: needs a value, as {}=VALUE (one argument)", name, name));
  const std::string v = has_value ? arg.substr(name.size() + 1) : "true";
  std::string accepted;
  if (!value_ok(*f, v, accepted)) throw InputError(fmt::format("{}: '{}' is not accepted; accepted: {}", name, v, accepted));
  const bool on = f->value != Value::boolean || v == "true" || v == "yes" || v == "1";
  if (f->refused && on) throw InputError(fmt::format("{}: {}", name, f->refused));
}

void check_flags(const std::vector<std::string>& args) {
  std::vector<std::string> seen;
  for (const auto& a : args) {
    check_flag(a);
    const std::string name = a.substr(0, a.find('='));
    if (std::find(seen.begin(), seen.end(), name) != seen.end())
      throw InputError(fmt::format("{}: given twice; give it once", name));
    seen.push_back(name);
  }
  Filter{args};  // a bad regex is refused before anything runs
}

void check_samples(const std::vector<std::string>& args, int most_iterations) {
  constexpr long long kMaxSamples = 10000000;  // 80 MB of samples for one case
  const std::string reps = flag_value(args, "--benchmark_repetitions");
  if (reps.empty() || has_flag(args, "--benchmark_min_time")) return;
  if (const long long n = std::stoll(reps) * most_iterations; n > kMaxSamples)
    throw InputError(fmt::format("--benchmark_repetitions={}: {} repetitions of {} iterations are {} samples of a case, which "
                                 "dmabench keeps; accepted: at most {} samples per case (fewer repetitions or iterations)",
                                 reps, reps, most_iterations, n, kMaxSamples));
}

std::string benchmark_name(const Case& c, bool fixed_iterations) {
  return c.name() + (fixed_iterations ? fmt::format("/iterations:{}", c.iterations) : "") + "/manual_time";
}

Filter::Filter(const std::vector<std::string>& args) : fixed_iterations_(!has_flag(args, "--benchmark_min_time")) {
  const std::string filter = flag_value(args, "--benchmark_filter");
  if (filter.empty() || filter == "all" || filter == ".") return;
  negate_ = filter[0] == '-';
  try {
    re_.emplace(negate_ ? filter.substr(1) : filter, std::regex::extended);
  } catch (const std::regex_error& e) {
    throw InputError(fmt::format("--benchmark_filter: '{}' is not a valid regular expression: {}", filter, e.what()));
  }
}

bool Filter::selects(const Case& c) const {
  return !re_ || std::regex_search(benchmark_name(c, fixed_iterations_), *re_) != negate_;
}

void register_case(CaseExecution& ex, std::function<CaseHooks()> hooks, bool fixed_iterations) {
  auto body = [&ex, hooks = std::move(hooks)](benchmark::State& st) {
    if (interrupt::stop_agreed()) {  // the sweep is stopping: not run, not recorded
      st.SkipWithError("interrupted");
      return;
    }
    CaseHooks h = hooks();
    h.sampler = [&st](CaseExecution& e) {
      std::vector<double> samples_us;
      samples_us.reserve(static_cast<std::size_t>(st.max_iterations));
      for (auto _ : st) {
        const double s = e.sample_seconds();
        st.SetIterationTime(s);
        samples_us.push_back(s * 1e6);
      }
      return samples_us;
    };
    run_invocation(ex, h);
    if (ex.status() != Status::ok) return skip_state(st, ex);
    set_counters(st, ex.record(1));
  };
  auto* b = benchmark::RegisterBenchmark(ex.spec().name().c_str(), std::move(body));
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  if (fixed_iterations) b->Iterations(ex.spec().iterations);
}

Session::Session(const std::vector<std::string>& args, std::function<void(const std::string&, std::size_t)> on_case,
                 bool display)
    : reporter_(std::make_unique<CaseReporter>(display ? display_reporter(args) : std::make_unique<SilentReporter>(),
                                               std::move(on_case))),
      batches_(!has_flag(args, "--benchmark_out") && flag_value(args, "--benchmark_format") != "json") {}

Session::~Session() { reporter_->finish(); }

void Session::run_registered() {
  benchmark::RunSpecifiedBenchmarks(reporter_.get());
  benchmark::ClearRegisteredBenchmarks();
}

}  // namespace dmabench::gbench
