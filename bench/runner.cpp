#include "bench/runner.hpp"

#include <algorithm>
#include <functional>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <atomic>
#include <mutex>
#include <thread>
#include <tuple>

#include <sys/ioctl.h>
#include <unistd.h>

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
#include "bench/output/progress.hpp"
#include "bench/levels/processes.hpp"
#include "bench/output/report.hpp"
#include "bench/check.hpp"
#include "bench/output/matrix.hpp"
#include "bench/output/export.hpp"
#include "bench/output/junit.hpp"
#include "bench/measure/calibration.hpp"
#include "bench/run/run_case.hpp"
#include "bench/run/transfer_load.hpp"
#include "core/cpus.hpp"
#include "bench/cases/cases.hpp"
#include "bench/run/watchdog.hpp"
#include "engines/buffer_pool.hpp"
#include "engines/registry.hpp"
#include "team/team.hpp"
#include "version.hpp"

namespace dmabench {
namespace {

using json = nlohmann::json;

// The compute workload of overlap cases: one at a time, reused while consecutive cases need the
// same workload on the same devices (cases of one sweep run in order).
class Workloads {
 public:
  explicit Workloads(Backend& backend) : backend_(backend) {}
  beside::Load& get(const beside::Spec& spec, const std::vector<int>& devices) {
    const std::string key = fmt::format("{}@{}", spec.label(), fmt::join(devices, ","));
    if (key != key_ || !load_) {
      load_.reset();  // free the previous workload's buffers first
      key_.clear();
      auto made = beside::make_load(backend_, spec, devices, beside::transfer_maker());
      if (!made) throw std::runtime_error("compute workload: " + made.why_not());
      load_ = std::move(made).value();
      key_ = key;
    }
    return *load_;
  }

 private:
  Backend& backend_;
  std::string key_;
  std::unique_ptr<beside::Load> load_;
};

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
  for (const auto& c : cases) most_iterations = std::max(most_iterations, c.iterations);
  gbench::check_samples(options.benchmark_args, most_iterations);
  for_each_part(config, [&](Config& c) {
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
    const std::string& name = c.variant.engine;
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
  // A multi-process run: an engine missing in any process is missing in all of them (every process
  // must skip the same cases).
  if (team::world().multi()) {
    const auto all = team::agree_all(e.missing);
    for (std::size_t r = 0; r < all.size(); ++r)
      for (const auto& [name, why] : all[r])
        if (e.made.erase(name) > 0 || !e.missing.count(name))
          e.missing[name] = why.empty() ? "" : fmt::format("rank {}: {}", r, why);
  }
  return e;
}

// Why the case will be skipped whatever the machine does (CaseExecution::static_skip_reason), known before it runs.
WhyNot static_skip(const Case& c, Engines& engines, Backend& backend) {
  const auto it = engines.made.find(c.variant.engine);
  const CaseExecution ex(c, it == engines.made.end() ? nullptr : it->second.get(), engines.missing[c.variant.engine],
                         backend);
  return ex.static_skip_reason();
}

// --list (and --benchmark_list_tests): each case's name, "#   will skip: REASON" under those that will; a count.
void print_list(const std::vector<Case>& cases, Backend& backend) {
  Engines engines = make_engines(cases, backend);
  std::string text = fmt::format("# {} cases (backend {}); names work with --benchmark_filter\n", cases.size(), backend.name());
  std::size_t skip = 0;
  for (const auto& c : cases) {
    const WhyNot why = static_skip(c, engines, backend);
    skip += why.has_value();
    // the mark on a '#' line of its own: a case's line is its name alone, as scripts reading --list expect
    text += why ? fmt::format("{}\n#   will skip: {}\n", c.name(), table::one_line(*why, std::string::npos)) : c.name() + "\n";
  }
  text += fmt::format("# {} cases, {} will run, {} will skip\n", cases.size(), cases.size() - skip, skip);
  console::write(stdout, text);
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
  context["machine"] = backend.context();
  context["config_file"] = escape_non_utf8(options.config);
  context["config"] = to_json(config);
  context["processes"] = processes_context();
  context["environment"] = environment_context();
  return context;
}

// Records every finished case in the results file and counts statuses for the summary and the
// exit code. Thread-safe: the watchdog and the seal (below) record and finish from their threads.
class Recorder {
 public:
  // results: null in the processes of a multi-process run other than rank 0 (which writes the file).
  // keep: also keep every record for what is reported after the sweep (matrices, --check, --junit).
  Recorder(ResultsFile* results, bool keep) : results_(results), keep_(keep) {}
  void add(const CaseRecord& r) {
    std::lock_guard lock(mu_);
    if (finished_) return;  // the file was finished on a signal (SealOnSignal): the case came too late
    ++counts_[r.status];
    if (r.status == Status::failed && first_failure_.empty()) first_failure_ = r.spec.name() + ": " + r.reason;
    if (r.status == Status::skipped) ++skip_reasons_[r.reason];
    if (r.status == Status::failed && !team::world().stopped().empty()) team::stop_recorded();
    if (!results_) return;
    json j = to_json(r);
    busbw_.push_back({{"status", j["status"]}, {"busbw_GBps", j["busbw_GBps"]}});
    if (keep_) kept_.push_back(j);
    results_->add(std::move(j));
  }
  // Writes the file whole and removes the journal, once; later records are dropped.
  void finish() {
    std::lock_guard lock(mu_);
    if (!finished_ && results_) results_->finish();
    finished_ = true;
  }
  const std::vector<json>& kept() const { return kept_; }
  // Each record's status and busbw_GBps (every record, kept or not): the closing average busbw line.
  const std::vector<json>& busbw() const { return busbw_; }
  int count(Status s) const {
    std::lock_guard lock(mu_);
    return counts_.count(s) ? counts_.at(s) : 0;
  }
  int total() const { return count(Status::ok) + count(Status::skipped) + count(Status::failed); }
  const std::string& first_failure() const { return first_failure_; }
  // The most common skip reason and how many cases gave it ({"", 0} without a skip): why a run measured nothing.
  std::pair<std::string, int> commonest_skip() const {
    std::lock_guard lock(mu_);
    std::pair<std::string, int> best{"", 0};
    for (const auto& [reason, n] : skip_reasons_)
      if (n > best.second) best = {reason, n};
    return best;
  }
  std::string path() const { return results_ ? results_->path() : std::string("rank 0's file"); }

 private:
  ResultsFile* results_;
  mutable std::mutex mu_;
  bool finished_ = false;
  bool keep_ = false;
  std::vector<json> kept_;
  std::vector<json> busbw_;
  std::map<Status, int> counts_;
  std::string first_failure_;
  std::map<std::string, int> skip_reasons_;
};

// A multi-process run signalled through its launcher (SIGINT or SIGTERM to mpirun or srun: what Ctrl-C,
// timeout, kill and batch systems send): the launcher passes SIGTERM to every process and kills them a
// moment later (Open MPI: about a second), whatever case is in flight. Rank 0 therefore finishes its file
// as soon as the signal comes, from this thread: every finished case, the journal removed, --junit written
// (on_seal), the lock released, the summary line printed; a case that finishes after that is not recorded. The sweep itself
// stops as after any signal, if the launcher lets it.
class SealOnSignal {
 public:
  // on_seal: what else is written at once, after the file (--junit)
  SealOnSignal(Recorder& recorder, const OutLock* lock, std::size_t selected, const std::function<void(std::size_t)>& on_seal) {
    if (team::world().multi() && lock)
      thread_ = std::thread([this, &recorder, lock, selected, on_seal] {
        while (!done_.load())
          if (interrupt::wait_requested(std::chrono::milliseconds(100))) {
            recorder.finish();
            if (on_seal) on_seal(selected);
            lock->release();
            console::say("\ndmabench: interrupted after {} of {} cases (the launcher ends every process); results in {}\n",
                         recorder.total(), selected, recorder.path());
            std::fflush(nullptr);
            sealed_.store(true);
            return;
          }
      });
  }
  ~SealOnSignal() { stop(); }
  SealOnSignal(const SealOnSignal&) = delete;
  SealOnSignal& operator=(const SealOnSignal&) = delete;
  // Ends the thread; whether it finished the file.
  bool stop() {
    done_.store(true);
    if (thread_.joinable()) thread_.join();
    return sealed_.load();
  }

 private:
  std::atomic<bool> done_{false}, sealed_{false};
  std::thread thread_;
};

// The file of a case's packet dump in --packets DIR: <case name, '/' and other odd characters as '_'>.json.
std::string packet_file_name(const Case& c) {
  std::string file = c.name();
  for (char& ch : file)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '.' && ch != '=' && ch != ',') ch = '_';
  return file + ".json";
}

// --packets DIR: the case's packet dump as DIR/packet_file_name() (results/SCHEMA.md, "Packet dumps"); nothing for
// cases without one.
void write_packet_dump(const std::string& dir, const CaseExecution& e) {
  if (dir.empty() || e.packet_dump().is_null()) return;
  json doc = {{"schema", "dmabench-packets/1"}, {"case", e.spec().name()}, {"engine", e.spec().variant.engine},
              {"options", e.spec().variant.options}};
  doc.update(e.packet_dump());
  write_json_atomically(dir + "/" + packet_file_name(e.spec()), doc);
}

// The cases --benchmark_filter selects; none is bad input (nothing would be recorded).
std::vector<const Case*> selected_cases(const CliOptions& options, const std::vector<Case>& cases) {
  const gbench::Filter filter(options.benchmark_args);
  std::vector<const Case*> selected;
  for (const auto& c : cases)
    if (filter.selects(c)) selected.push_back(&c);
  if (selected.empty() && cases.empty())
    throw InputError(fmt::format("{}: expands to no case on this machine", config_source(options)));
  if (selected.empty())
    throw InputError(fmt::format("{}={}: selects no case of the {} of {}; accepted: a regular expression "
                                 "matching a case name that --list prints",
                                 gbench::flag_name(gbench::Flag::filter),
                                 options.benchmark_args.value(gbench::Flag::filter), cases.size(), config_source(options)));
  return selected;
}

// --benchmark_list_tests[=true]: Google Benchmark's listing, which runs nothing; dmabench lists as --list does
// (nothing recorded, nothing written).
bool lists_tests(const gbench::Flags& flags) { return flags.on(gbench::Flag::list_tests); }

// The width of the terminal on `fd` (stderr: the progress line; stdout: the table), or 0 when it is not one.
std::size_t terminal_columns(int fd = STDERR_FILENO) {
  struct winsize w {};
  return ::isatty(fd) && ::ioctl(fd, TIOCGWINSZ, &w) == 0 ? w.ws_col : 0;
}

// The longest Google Benchmark name of the cases (the table's first column).
std::size_t name_width(const std::vector<const Case*>& cases, const gbench::Flags& benchmark_args) {
  const gbench::Loops loops(benchmark_args);
  std::size_t w = 10;
  for (const Case* c : cases) w = std::max(w, loops.benchmark_name(*c).size());
  return w;
}

// How many bytes the sweep's buffer pool keeps idle in a place's memory: half of the host's, half of a GPU's.
BufferPool::IdleLimit idle_limit(const Backend& backend) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const std::size_t host = pages > 0 && page > 0 ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page) / 2 : 0;
  std::map<int, std::size_t> gpu;
  if (backend.name() != "host")
    for (const json& d : backend.context().value("devices", json::array()))
      gpu[d.value("id", -1)] = d.value("memory_bytes", std::size_t{0}) / 2;
  return [host, gpu](const BufferPlace& p) {
    const auto it = gpu.find(p.device);
    return p.host || it == gpu.end() ? host : it->second;
  };
}

// The sweep: the selected cases in order, each run once through run_case() (Google Benchmark its
// sampler) and recorded. Cases that cannot run whatever happens are recorded as skipped without being
// set up. A SIGINT or SIGTERM stops it between cases.
class Sweep {
 public:
  // benchmark_out: the --benchmark_out file as checked (check_outputs), "" for none.
  Sweep(const CliOptions& options, const std::vector<Case>& cases, Backend& backend, RunPower& power, Recorder& recorder,
        Watchdog& watchdog, const std::string& benchmark_out, std::optional<std::uint64_t> shuffle,
        measure::CpuChoice* cpu_choice)
      : options_(options), backend_(backend), power_(power), recorder_(recorder), watchdog_(watchdog), cpu_choice_(cpu_choice),
        engines_(make_engines(cases, backend)), pool_(idle_limit(backend)), workloads_(backend),
        selected_(in_order(selected_cases(options, cases), shuffle)),
        lead_(team::world().rank() == 0),
        session_(options.benchmark_args, name_width(selected_, options.benchmark_args), lead_, benchmark_out,
                 gbench::Console{options.verbosity, terminal_columns(STDOUT_FILENO), gbench::table_widths(selected_)}),
        progress_(plan(), ::isatty(STDERR_FILENO) != 0, {}, terminal_columns()) {
    progress_.set_names([this](std::size_t i) { return selected_[i]->name(); });
  }

  // The cases --benchmark_filter selects: what the sweep runs.
  std::size_t selected() const { return selected_.size(); }

  // Whether a signal stopped the sweep before its last case.
  bool stopped() const { return stopped_; }

  // Runs the selected cases in order, each recorded as it ends; stops between cases on a signal.
  void run();

 private:
  void run_one(const Case& c);
  CaseHooks hooks(CaseExecution& e);

  // The cases in the order they run: the config's, or --order random's.
  static std::vector<const Case*> in_order(std::vector<const Case*> cases, std::optional<std::uint64_t> shuffle) {
    if (shuffle) shuffle_cases(cases, *shuffle);
    return cases;
  }
  // The progress line's text, written under the lock the timer takes too.
  void progress_write(const std::function<std::string(Progress&)>& text) {
    std::lock_guard lock(progress_mu_);
    console::write(stderr, text(progress_));
  }

  // Each selected case as the progress line plans it (below).
  std::vector<Progress::Planned> plan();
  // The case's line in the table, or a line of its own (below).
  void show(const CaseRecord& r);
  // Cases skipped without being set up, counted by reason: after the sweep.
  void say_skipped() const;

  const CliOptions& options_;
  Backend& backend_;
  RunPower& power_;
  Recorder& recorder_;
  Watchdog& watchdog_;
  measure::CpuChoice* cpu_choice_;  // null: --cpu-choice off
  Engines engines_;
  // The buffers kept across cases (a one-process run): after the engines, so that it is freed before them, and
  // before the workloads, whose buffers it lends.
  BufferPool pool_;
  Workloads workloads_;
  std::vector<const Case*> selected_;
  const bool lead_;  // the process that prints
  std::map<std::string, int> skipped_;
  bool stopped_ = false;
  gbench::Session session_;
  Progress progress_;  // on stderr, [k/N] with elapsed time and an estimate of what remains
  std::mutex progress_mu_;  // progress_ and its line: the sweep's thread and the timer's
  std::size_t done_ = 0;
};

// Each selected case as the progress line plans it: its estimated work (a case that will skip costs nearly nothing;
// with a power meter every case also takes its window), its class (those that skip; else the size, a class per
// factor of 4 of its bytes per rank: the line learns each class's time from its finished cases); its name is asked
// when a line names it (set_names).
std::vector<Progress::Planned> Sweep::plan() {
  const gbench::Loops loops(options_.benchmark_args);
  const double window_s = power_.meter ? power_.meter->window_s() : 0;
  std::vector<Progress::Planned> p;
  for (const Case* c : selected_) {
    const bool skips = static_skip(*c, engines_, backend_).has_value();
    const int size_class = c->bytes_per_rank > 0 ? static_cast<int>(std::log2(static_cast<double>(c->bytes_per_rank))) / 2 : 0;
    p.push_back({skips ? 1e-4 : loops.estimated_seconds(*c) + window_s,
                 skips ? std::string("skip") : "size " + std::to_string(size_class), {}});
  }
  return p;
}

// The case's line in the table; a case that never reached its samples (skipped or failed while set up),
// or that failed after them (a measurement beside a workload), says so on a line of its own. A case that
// failed while sampled is the table's error row alone (it was shown twice).
void Sweep::show(const CaseRecord& r) {
  if (lead_) progress_write([](Progress& p) { return p.clear(); });  // a progress line on the terminal gives way
  const bool told = session_.show(r);
  if (!lead_ || told) return;
  console::say("{}: {}: {}\n", r.spec.name(), to_string(r.status), table::one_line(r.reason, std::string::npos));
}

void Sweep::say_skipped() const {
  if (lead_ && options_.verbosity > 0)
    for (const auto& [why, n] : skipped_)
      console::say("dmabench: skipped {} case(s), not run: {}{}\n", n, table::one_line(why, std::string::npos),
                   n > 1 && options_.verbosity < 2 && session_.shows_every_case() ? " (the table lists the first; -v lists each)"
                                                                                  : "");
}

void Sweep::run() {
  std::optional<PoolScope> lend;  // processes of a multi-process run each allocate every case's buffers
  if (!team::world().multi()) lend.emplace(pool_);
  // on a terminal at the default verbosity (-v prints lines while a case runs), the line moves on during a long case
  {
    const ProgressTimer timer(lead_ && options_.verbosity == 1 && ::isatty(STDERR_FILENO),
                              [this] { progress_write([](Progress& p) { return p.tick(); }); });
    for (const Case* c : selected_) {
      if (team::stop_agreed()) {
        stopped_ = true;
        break;
      }
      run_one(*c);
      ++done_;
      if (lead_ && options_.verbosity > 0) progress_write([&](Progress& p) { return p.case_done(done_, c->name()); });
    }
  }  // (the timer stops)
  if (lead_) progress_write([](Progress& p) { return p.clear(); });
  session_.finish();  // --benchmark_out, when a case was reported to it
  say_skipped();
}

void Sweep::run_one(const Case& c) {
  auto it = engines_.made.find(c.variant.engine);
  CaseExecution ex(c, it == engines_.made.end() ? nullptr : it->second.get(), engines_.missing[c.variant.engine],
                   backend_);
  if (auto why = ex.static_skip_reason()) {
    ex.setup();
    // the table's row for a reason's first case, every case's with -v (the closing lines count them all; Google
    // Benchmark's reporters: the summary only)
    if (session_.shows_every_case() && (skipped_[*why] == 0 || options_.verbosity >= 2)) show(ex.record());
    recorder_.add(ex.record());
    ++skipped_[*why];
    return;
  }
  watchdog_.started(c);
  run_case(ex, hooks(ex));
  const CaseRecord& r = ex.record();
  watchdog_.finished();
  show(r);
  recorder_.add(r);
  if (lead_) write_packet_dump(options_.packets_dir, ex);
  ex.release();
}

CaseHooks Sweep::hooks(CaseExecution& e) {
  CaseHooks h;
  h.sampler = [this](CaseExecution& ex) { return session_.sample(ex); };
  h.cpu_choice = cpu_choice_;
  if (power_.meter) {
    h.meter = power_.meter.get();
    h.power_channels = power_.channels(e.spec().devices);
  }
  if (const auto& ov = e.spec().overlap)
    h.workload = [&e, this, spec = ov->compute]() -> beside::Load& { return workloads_.get(spec, e.spec().devices); };
  return h;
}

// --case-timeout: the case is recorded as failed, the file written whole, and the process ends (exit 4):
// the case's thread is blocked in an operation that cannot be cancelled.
[[noreturn]] void stop_on_timeout(const Case& c, double seconds, Recorder& recorder, const OutLock* lock) {
  CaseRecord r;
  r.spec = c;
  r.status = Status::failed;
  r.reason = fmt::format("timeout: still running after {} s (--case-timeout; time the process was stopped is not "
                         "counted); the run stopped here, since an operation that never completes cannot be cancelled",
                         seconds);
  try {
    recorder.add(r);
    recorder.finish();
  } catch (const std::exception& e) {
    console::warn("dmabench: could not record the timeout: {}\n", e.what());
  }
  console::warn(
             "dmabench: {} still running after {} s (--case-timeout): the run stops (exit 4); the device may need "
             "attention; results in {}\n",
             c.name(), seconds, recorder.path());
  std::fflush(nullptr);
  if (lock) lock->release();
  std::_Exit(4);
}

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
    for (const Case* c : selected) dumps.push_back(packet_file_name(*c));
    check_packets_dir(options.packets_dir, dumps);
  }
  out.note.clear();
  for (const auto& n : notes)
    if (!n.empty()) out.note += (out.note.empty() ? "" : "\ndmabench: ") + n;
  return checked;
}

struct Outcome {
  std::size_t selected = 0;  // the cases --benchmark_filter selects
  bool stopped = false;      // a signal stopped the sweep before its last case
  bool sealed = false;       // the file was finished on a signal (SealOnSignal)
};

// The first device a case uses: calibrated where the cases run.
int first_device(const std::vector<Case>& cases) {
  for (const auto& c : cases)
    if (!c.devices.empty()) return c.devices.front();
  return 0;
}

// --cpu-choice quiet: the sampling thread's CPU chooser, its first survey done (the context records it); null: off.
// Processes of one node (mpirun, srun) each survey their own share of the allowed CPUs.
std::unique_ptr<measure::CpuChoice> make_cpu_choice(const CliOptions& options) {
  if (options.cpu_choice == "off") return nullptr;
  const auto& world = team::world();
  int local = 0;
  for (const auto& r : world.ranks()) local += r.node == world.ranks()[world.rank()].node;
  auto choice = measure::CpuChoice::make(measure::CpuChoice::candidates(
      cpus::allowed(), world.multi() ? world.ranks()[world.rank()].local_rank : 0, world.multi() ? local : 1));
  choice->survey_now();
  return choice;
}

// The sweep under the watchdog (and, in a multi-process run, the seal); every finished case in the file
// whatever stops it.
Outcome sweep_all(const CliOptions& options, const std::vector<Case>& cases, Backend& backend, RunPower& power,
                  Recorder& recorder, const OutLock* lock, const std::string& benchmark_out,
                  std::optional<std::uint64_t> shuffle, measure::CpuChoice* cpu_choice,
                  const std::function<void(std::size_t)>& on_seal) {
  Outcome o;
  Watchdog watchdog(options.case_timeout_s, [&](const Case& c, double s) { stop_on_timeout(c, s, recorder, lock); });
  try {
    Sweep sweep(options, cases, backend, power, recorder, watchdog, benchmark_out, shuffle, cpu_choice);
    o.selected = sweep.selected();
    SealOnSignal seal(recorder, lock, o.selected, on_seal);
    sweep.run();
    o.stopped = sweep.stopped();
    o.sealed = seal.stop();
  } catch (...) {
    recorder.finish();
    throw;
  }
  return o;
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
  write_reports(outputs, recorder, {}, started_at, host, not_run(selected_cases(options, cases), recorder.kept(), code, selected));
}

// A sweep a signal stopped before its last case: said and the reports written (unless the seal did both); the exit code.
int interrupted(const CliOptions& options, const std::vector<Case>& cases, const Outcome& outcome, const Recorder& recorder,
                const Outputs& outputs, const std::string& started_at, const std::string& host) {
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
  auto [config, backend, cases, backend_choice] = start_sweep(options, command_line);
  const std::optional<std::uint64_t> shuffle = shuffle_seed(options);
  const auto expectations = agreed_input([&] {
    return options.check.empty() ? std::optional<check::Expectations>() : check::Expectations::load(options.check);
  });
  if (options.list || lists_tests(options.benchmark_args)) {
    if (lead) print_list(cases, *backend);
    return 0;
  }
  std::optional<Outputs> outputs;
  std::optional<OutLock> lock;
  agreed_input([&, &all = cases] {  // bad input: a filter that selects no case, an output that cannot be written
    if (lead) {
      outputs = check_outputs(options, selected_cases(options, all));
      lock.emplace(outputs->out.path);
    }
    return 0;
  });
  if (lead && !outputs->out.note.empty()) console::say("dmabench: {}\n", outputs->out.note);
  if (lead && backend_choice.value("fell_back", false))  // said once the input is agreed: bad input stays one line
    console::warn("dmabench: backend {} ran on the host backend (host ranks are threads on this CPU, not GPUs): {}; "
                  "--backend gpu (or a config's \"backend\": \"gpu\") makes this an error\n",
                  backend_choice.value("asked", ""), backend_choice.value("why", ""));
  RunPower power;
  std::unique_ptr<ResultsFile> results;
  json context;
  const std::unique_ptr<measure::CpuChoice> cpu_choice = make_cpu_choice(options);  // every process, before the cases
  if (lead) {
    context = lead_context(options, command_line, config, *backend, cases, shuffle, outputs->power_trace, power,
                           cpu_choice.get());
    context["backend_choice"] = backend_choice;
    results = std::make_unique<ResultsFile>(outputs->out.path, context, started);  // written with the first record (an existing file is kept until then)
    if (options.verbosity > 0)
      console::say("dmabench {} (git {}): backend {}, {} cases from {}{}, results -> {}\n", kVersion, git_revision(),
               backend->name(), cases.size(), config_source(options),
               team::world().multi() ? fmt::format(", {} processes", team::world().size()) : std::string(), outputs->out.path);
  }
  const bool pairs = uses_pairs(config);
  Recorder recorder(results.get(), pairs || expectations.has_value() || !options.junit.empty() || !options.csv.empty() ||
                                       !options.md.empty());
  const auto on_seal = [&](std::size_t selected) {
    if (lead) reports_on_interrupt(options, cases, selected, recorder, *outputs, started.started_at, context.value("host", ""));
  };
  const Outcome outcome = sweep_all(options, cases, *backend, power, recorder, lock ? &*lock : nullptr,
                                   lead ? outputs->benchmark_out : std::string(), shuffle, cpu_choice.get(), on_seal);
  const std::size_t selected = outcome.selected;
  const bool stopped = outcome.stopped;
  recorder.finish();  // the whole file and the journal removed (nothing changed if no case was recorded)
  if (!team::world().stopped().empty()) {  // a process of the run is gone
    console::warn("\ndmabench: the run stopped after {} cases: {}{}\n", recorder.total(), team::world().stopped(),
               results ? "; results in " + results->path() : std::string());
    return 3;
  }
  if (!lead) return stopped ? (interrupt::requested() ? interrupt::exit_code() : 143) : recorder.count(Status::failed) > 0;
  // a signal that came after the last case stopped nothing: the run ends as usual
  if (stopped && static_cast<std::size_t>(recorder.total()) < selected)
    return interrupted(options, cases, outcome, recorder, *outputs, started.started_at, context.value("host", ""));
  say_closing(options, recorder, started);
  std::vector<check::Verdict> verdicts;
  const bool checked = report_findings(expectations, pairs, recorder.kept(), context["machine"], *backend, verdicts);
  write_reports(*outputs, recorder, verdicts, started.started_at, context.value("host", ""));
  return finished_run_code(options, recorder.count(Status::ok), recorder.count(Status::failed), checked);
}

}  // namespace dmabench
