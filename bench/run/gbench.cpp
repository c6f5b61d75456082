#include "bench/run/gbench.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <regex>
#include <sstream>
#include <string_view>
#include <ctime>

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include "bench/output/console.hpp"
#include "core/json_file.hpp"
#include "version.hpp"

namespace dmabench::gbench {

namespace {

// Prints nothing (the processes of a multi-process run other than rank 0).
class SilentReporter final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

constexpr std::string_view kDebugWarning = "***WARNING*** Library was built as DEBUG.";

// The context as `inner` prints it, less Google Benchmark's warning about its own debug build (Debian's
// libbenchmark is built without NDEBUG), which says nothing about dmabench's figures: every sample is
// timed by dmabench (manual time), not by the library's loop. A note says so instead.
void report_context(benchmark::BenchmarkReporter& inner, const benchmark::BenchmarkReporter::Context& context) {
  std::ostream& out = inner.GetOutputStream();
  std::ostream& err = inner.GetErrorStream();  // the console reporter prints the context there
  std::ostringstream captured;
  inner.SetOutputStream(&captured);
  inner.SetErrorStream(&captured);
  inner.ReportContext(context);
  inner.SetOutputStream(&out);
  inner.SetErrorStream(&err);
  std::string text = captured.str();
  if (const auto at = text.find(kDebugWarning); at != std::string::npos) {
    const auto end = text.find('\n', at);
    text.replace(at, end == std::string::npos ? std::string::npos : end - at,
                 fmt::format("dmabench: note: Google Benchmark's \"built as DEBUG\" warning is about the distribution's library, not "
                             "dmabench (a {} build): dmabench times every sample itself, as manual time",
                             kBuildType));
  }
  // what the reporter printed to its error stream goes there again, the rest (JSON) to its output
  (dynamic_cast<benchmark::ConsoleReporter*>(&inner) ? err : out) << text;
}

// Whether the run ended in an error (Google Benchmark 1.8 calls it `skipped`, 1.7 `error_occurred`).
bool failed(const benchmark::BenchmarkReporter::Run& run) {
#ifdef DMABENCH_GBENCH_SKIP_MESSAGE
  return run.skipped != benchmark::internal::NotSkipped;
#else
  return run.error_occurred;
#endif
}

// Ends the run in an error, as State::SkipWithError does.
void set_error(benchmark::BenchmarkReporter::Run& run, const std::string& message) {
#ifdef DMABENCH_GBENCH_SKIP_MESSAGE
  run.skipped = benchmark::internal::SkippedWithError;
  run.skip_message = message;
#else
  run.error_occurred = true;
  run.error_message = message;
#endif
}

// The run the library's manual-time loop would report for a case it sampled once, without an iteration count in its
// name: "<case>/manual_time", µs, one repetition; set every field its reporters read (1.7's constructor leaves the
// indices and `statistics` unset).
benchmark::BenchmarkReporter::Run adaptive_run(const Case& c) {
  benchmark::BenchmarkReporter::Run run;
  run.run_name.function_name = c.name();
  run.run_name.time_type = "manual_time";
  run.family_index = 0;  // one benchmark registered at a time, as the library's loop runs every case
  run.per_family_instance_index = 0;
  run.run_type = benchmark::BenchmarkReporter::Run::RT_Iteration;
  run.repetition_index = 0;
  run.repetitions = 1;
  run.threads = 1;
  run.time_unit = benchmark::kMicrosecond;
  run.statistics = nullptr;
  return run;
}

// CPU time of the calling thread, seconds (what the library's loop reports as cpu time).
double thread_cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The record's figures as the run's counters (what the table shows beside Google Benchmark's columns).
void set_counters(benchmark::BenchmarkReporter::Run& run, const CaseRecord& r) {
  if (r.overlap && r.overlap->validated == true) {
    run.counters["compute_slowdown_pct"] = r.overlap->figures.compute_slowdown_pct;
    run.counters["p99_beside_us"] = r.overlap->comm_with_us.p99;
  }
  if (!r.timed) return;
  run.counters["p50_us"] = r.timed->latency_us.p50;
  run.counters["noise_pct"] = r.timed->p50_interval.noise() * 100;  // the p50's 95% half-width
  if (r.timed->noisy) run.report_label = "noisy";
  run.counters["p99_us"] = r.timed->latency_us.p99;
  run.counters["busbw_GBps"] = r.timed->bandwidth.busbw_GBps;
}

// The case name's parts: pattern, variant, timing, "dev=...", size, then what else it says ("/host=...", "/rotate=2").
std::vector<std::string> name_parts(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t at = 0, end = 0;
  for (int i = 0; i < 5; ++i) {
    end = std::min(name.find('/', at), name.size());
    parts.push_back(name.substr(at, end - at));
    at = std::min(end + 1, name.size());
  }
  parts.push_back(name.substr(end));
  return parts;
}

}  // namespace

table::Widths table_widths(const std::vector<const Case*>& cases) {
  table::Widths w;
  for (const Case* c : cases) {
    const auto parts = name_parts(c->name());
    w.pattern = std::max(w.pattern, parts[0].size());
    w.variant = std::max(w.variant, parts[1].size() + parts[5].size());
    w.timing = std::max(w.timing, parts[2].size());
    w.devices = std::max(w.devices, parts[3].size() - std::min<std::size_t>(4, parts[3].size()));  // less "dev="
  }
  return w;
}

table::CaseRow case_row(const CaseRecord& r, bool detail) {
  const auto parts = name_parts(r.spec.name());
  table::CaseRow row;
  row.bytes = r.spec.bytes_per_rank;
  row.pattern = parts[0];
  row.variant = parts[1] + parts[5];
  row.timing = parts[2];
  row.devices = parts[3].substr(std::min<std::size_t>(4, parts[3].size()));
  row.status = r.status == Status::failed ? "FAILED" : r.status == Status::ok ? "ok" : std::string(to_string(r.status));
  row.reason = r.reason;
  if (!r.timed) return row;
  const measure::Timed& t = *r.timed;
  if (r.status == Status::ok && t.noisy) row.status = "noisy";
  row.p50_us = t.latency_us.p50;
  row.noise = t.p50_interval.noise();
  row.samples = t.latency_us.count;
  row.algbw_GBps = t.bandwidth.algbw_GBps;
  row.busbw_GBps = t.bandwidth.busbw_GBps;
  if (detail && r.status == Status::ok)
    row.reason = fmt::format("stopped: {}{}", to_string(t.outcome.stopped),
                             r.setup ? fmt::format(", setup {}", table::format_time_us(r.setup->seconds * 1e6)) : "");
  return row;
}

// The display reporter (and the --benchmark_out file's) of a sweep. Google Benchmark reports each case's
// runs as its run ends; they are held until the case's record exists, then shown with counters read
// from the record (the figures the results file has).
class CaseReporter final : public benchmark::BenchmarkReporter {
 public:
  // inner: Google Benchmark's display reporter, or none where dmabench's table is the console (`table`).
  CaseReporter(std::unique_ptr<benchmark::BenchmarkReporter> inner, std::unique_ptr<benchmark::BenchmarkReporter> file,
               std::size_t name_width, std::optional<table::CaseTable> table = std::nullopt, int verbosity = 1)
      : inner_(std::move(inner)), file_(std::move(file)), name_width_(name_width), table_(std::move(table)),
        verbosity_(verbosity) {}
  // A sweep runs one case at a time: the context once (its name column as wide as the longest case's).
  bool ReportContext(const Context& context) override {
    if (context_reported_) return true;
    context_reported_ = true;
    Context wide = context;
    wide.name_field_width = std::max(context.name_field_width, name_width_);
    if (inner_) report_context(*inner_, wide);
    return !file_ || file_->ReportContext(wide);
  }
  void ReportRuns(const std::vector<Run>& runs) override { held_.insert(held_.end(), runs.begin(), runs.end()); }
  void Finalize() override {}
  // The iteration runs reported since the last show(): the invocations Google Benchmark kept.
  std::size_t reported_invocations() const {
    return static_cast<std::size_t>(
        std::count_if(held_.begin(), held_.end(), [](const Run& r) { return r.run_type == Run::RT_Iteration; }));
  }
  // Shows the held runs, each with the record's counters; whether they told the case's outcome (Session::show).
  bool show(const CaseRecord& r) {
    if (table_) console::say("{}", table_->row(case_row(r, verbosity_ >= 2)));
    if (held_.empty()) return table_.has_value();
    const bool error_row = std::any_of(held_.begin(), held_.end(), [](const Run& run) { return failed(run); });
    for (auto& run : held_) set_counters(run, r);
    if (inner_) inner_->ReportRuns(held_);
    if (file_) file_->ReportRuns(held_);
    file_has_runs_ = file_ != nullptr;
    held_.clear();
    return table_ || r.status != Status::failed || error_row;
  }
  bool shows_every_case() const { return table_.has_value(); }
  // The final lines; whether the --benchmark_out reporter got runs (its text is worth writing).
  bool finish() {
    if (inner_) inner_->Finalize();
    if (file_) file_->Finalize();
    return file_has_runs_;
  }

 private:

  std::unique_ptr<benchmark::BenchmarkReporter> inner_, file_;
  std::size_t name_width_;
  std::optional<table::CaseTable> table_;
  int verbosity_ = 1;
  bool context_reported_ = false;
  bool file_has_runs_ = false;
  std::vector<Run> held_;
};

namespace {

// The reporter of a sweep's console: Google Benchmark's JSON (--benchmark_format=json), dmabench's table (the default
// console format: no Google Benchmark reporter is shown), or nothing (display false: the processes other than rank 0).
std::unique_ptr<CaseReporter> case_reporter(const Flags& flags, std::unique_ptr<benchmark::BenchmarkReporter> file,
                                            std::size_t name_width, bool display, const Console& console) {
  if (!display) return std::make_unique<CaseReporter>(std::make_unique<SilentReporter>(), std::move(file), name_width);
  if (flags.value(Flag::format) == "json")
    return std::make_unique<CaseReporter>(std::make_unique<benchmark::JSONReporter>(), std::move(file), name_width);
  return std::make_unique<CaseReporter>(nullptr, std::move(file), name_width,
                                        table::CaseTable(console.verbosity, console.widths, console.columns),
                                        console.verbosity);
}

// Google Benchmark's CSV reporter, which it marks deprecated (it still writes --benchmark_out_format=csv,
// which its flag accepts: dmabench keeps accepting it too).
std::unique_ptr<benchmark::BenchmarkReporter> csv_reporter() {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  return std::make_unique<benchmark::CSVReporter>();
#pragma GCC diagnostic pop
}

// --benchmark_out's reporter (--benchmark_out_format, json by default) writing to `out` (Session::finish writes
// the text to the file).
std::unique_ptr<benchmark::BenchmarkReporter> file_reporter(const Flags& flags, std::ostream& out) {
  const std::string format = flags.value(Flag::out_format);
  std::unique_ptr<benchmark::BenchmarkReporter> r;
  if (format == "console") r = std::make_unique<benchmark::ConsoleReporter>(benchmark::ConsoleReporter::OO_None);
  else if (format == "csv") r = csv_reporter();
  else r = std::make_unique<benchmark::JSONReporter>();
  r->SetOutputStream(&out);
  r->SetErrorStream(&out);
  return r;
}

}  // namespace

Loops::Loops(const Flags& flags) : min_time_(flags.has(Flag::min_time)), repetitions_(flags.has(Flag::repetitions)) {
  if (min_time_) min_time_s_ = decimal(flags.value(Flag::min_time));  // checked by Flags::add
  if (repetitions_) repetition_count_ = static_cast<int>(count_value(flags.value(Flag::repetitions)));
}

double Loops::estimated_seconds(const Case& c) const {
  constexpr double kBytesPerSecond = 10e9, kOperationSeconds = 10e-6, kSetupSeconds = 2e-3;
  const double bytes = static_cast<double>(c.bytes_per_rank) * static_cast<double>(std::max<std::size_t>(1, c.devices.size()));
  const double sample_s = c.ops_per_sample() * (kOperationSeconds + bytes / kBytesPerSecond);
  const double setup_s = kSetupSeconds + 3 * bytes / kBytesPerSecond;  // fill, the validated operation, the check
  double timed_s = static_cast<double>(c.timed_iterations()) * repetition_count_ * sample_s;
  if (min_time_) {
    timed_s = std::max(min_time_s_, sample_s) * repetition_count_;
  } else if (adaptive(c)) {
    const Sampling& s = c.run.sampling;
    timed_s = std::min(s.max_time_s, s.max_samples * sample_s);
    timed_s = std::max({timed_s, s.min_time_s, s.min_samples * sample_s});
  }
  // beside a workload (config overlap): rounds of the workload alone and with the case, each at least duration_ms
  // and min_samples samples long
  double overlap_s = 0;
  if (const auto& o = c.run.overlap)
    overlap_s = 2.0 * o->rounds * std::max(o->duration_ms * 1e-3, o->min_samples * sample_s);
  return setup_s + c.run.warmup * sample_s + timed_s + overlap_s;
}

std::string Loops::benchmark_name(const Case& c) const {
  const bool fixed = !min_time_ && !adaptive(c);
  return c.name() + (fixed ? fmt::format("/iterations:{}", c.timed_iterations()) : "") + "/manual_time";
}

Filter::Filter(const Flags& flags) : re_(compiled_filter(flags.value(Flag::filter), negate_)), loops_(flags) {}

bool Filter::selects(const Case& c) const {
  return !re_ || std::regex_search(loops_.benchmark_name(c), *re_) != negate_;
}

Session::Session(const Flags& flags, std::size_t name_width, bool display, std::string out_path, Console console)
    : out_path_(display ? std::move(out_path) : std::string()), loops_(flags) {
  std::unique_ptr<benchmark::BenchmarkReporter> file = out_path_.empty() ? nullptr : file_reporter(flags, out_text_);
  reporter_ = case_reporter(flags, std::move(file), name_width, display, console);
}

Session::~Session() {
  try {
    finish();
  } catch (const std::exception& e) {
    console::warn("dmabench: {}\n", e.what());
  }
}

void Session::finish() {
  if (finished_) return;
  finished_ = true;
  if (reporter_->finish()) write_text_atomically(out_path_, out_text_.str());
}

Samples Session::sample(CaseExecution& ex) { return loops_.adaptive(ex.spec()) ? adaptive_loop(ex) : library_loop(ex); }

Samples Session::library_loop(CaseExecution& ex) {
  struct Invocation {
    std::vector<double> us;
    std::vector<double> core_ratios;  // the core-share reading before each sample
    std::vector<double> submit_us;    // µs inside the launch calls per operation, each sample
    double seconds = 0;  // its loop's wall time
  };
  std::vector<Invocation> invocations;  // one per call of the body: probes, then the reported runs
  std::string error;
  auto body = [&](benchmark::State& st) {
    Invocation done;
    done.us.reserve(static_cast<std::size_t>(st.max_iterations));
    try {
      ex.warm_up();
      const double start = steady_seconds();
      for (auto _ : st) {
        const double s = ex.sample_seconds();
        st.SetIterationTime(s);
        done.us.push_back(s * 1e6);
        done.core_ratios.push_back(ex.last_core_ratio());
        done.submit_us.push_back(ex.last_submit_us());
      }
      done.seconds = steady_seconds() - start;
    } catch (const std::exception& e) {
      error = e.what();
      st.SkipWithError(fmt::format("failed: {}", error).c_str());
      return;
    }
    invocations.push_back(std::move(done));
  };
  auto* b = benchmark::RegisterBenchmark(ex.spec().name().c_str(), body);
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  if (!loops_.min_time()) b->Iterations(ex.spec().timed_iterations());
  benchmark::RunSpecifiedBenchmarks(reporter_.get(), "all");  // dmabench selected the case (Filter)
  benchmark::ClearRegisteredBenchmarks();
  if (!error.empty()) throw std::runtime_error(error);
  // Google Benchmark reports the last invocation of each repetition; earlier ones probed iteration counts.
  const std::size_t reported = std::min(reporter_->reported_invocations(), invocations.size());
  Samples samples;  // a fixed count: SamplingOutcome's defaults
  for (std::size_t i = invocations.size() - reported; i < invocations.size(); ++i) {
    samples.us.insert(samples.us.end(), invocations[i].us.begin(), invocations[i].us.end());
    samples.core_ratios.insert(samples.core_ratios.end(), invocations[i].core_ratios.begin(),
                               invocations[i].core_ratios.end());
    samples.submit_us.insert(samples.submit_us.end(), invocations[i].submit_us.begin(), invocations[i].submit_us.end());
    samples.outcome.seconds += invocations[i].seconds;
  }
  return samples;
}

Samples Session::adaptive_loop(CaseExecution& ex) {
  benchmark::BenchmarkReporter::Context context;
  context.name_field_width = 0;  // the reporter widens it to the longest case's name
  reporter_->ReportContext(context);
  benchmark::BenchmarkReporter::Run run = adaptive_run(ex.spec());
  try {
    ex.warm_up();
    const double cpu_start = thread_cpu_seconds();
    Samples samples = ex.take_samples();
    run.cpu_accumulated_time = thread_cpu_seconds() - cpu_start;
    run.iterations = static_cast<benchmark::IterationCount>(samples.us.size());
    run.real_accumulated_time = std::accumulate(samples.us.begin(), samples.us.end(), 0.0) * 1e-6;  // manual time
    reporter_->ReportRuns({run});
    return samples;
  } catch (const std::exception& e) {
    set_error(run, fmt::format("failed: {}", e.what()));
    reporter_->ReportRuns({run});
    throw;
  }
}

bool Session::show(const CaseRecord& r) { return reporter_->show(r); }

bool Session::shows_every_case() const { return reporter_->shows_every_case(); }

}  // namespace dmabench::gbench
