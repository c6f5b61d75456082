#include "bench/sweep/sweep.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "bench/output/case_table.hpp"
#include "bench/output/console.hpp"
#include "bench/output/progress.hpp"
#include "bench/run/gbench.hpp"
#include "bench/run/run_case.hpp"
#include "bench/run/watchdog.hpp"
#include "bench/sweep/resources.hpp"
#include "core/interrupt.hpp"
#include "team/team.hpp"

namespace dmabench::sweep {
namespace {

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
  if (const auto& ov = e.spec().run.overlap)
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

}  // namespace

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

}  // namespace dmabench::sweep
