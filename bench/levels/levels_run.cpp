// --processes N (bench/levels/levels.hpp): the sweep in N fresh processes of this program, one after another, then the
// levels file. Each process is this program started again with the same arguments, its own --out in
// `<out>.processes/` and its own order; it runs in a process group of its own, so that a terminal's Ctrl-C reaches
// this process alone, which passes it on once (a second signal would kill the process in flight).
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <tuple>
#include <random>

#include <fmt/format.h>

#include "bench/check.hpp"
#include "bench/output/export.hpp"
#include "bench/output/junit.hpp"
#include "bench/config/config.hpp"
#include "bench/run/gbench_flags.hpp"
#include "bench/output/console.hpp"
#include "core/interrupt.hpp"
#include "bench/levels/levels.hpp"
#include "bench/levels/results_file.hpp"
#include "bench/output/out_file.hpp"
#include "core/datagen.hpp"
#include "core/errors.hpp"
#include "core/json_file.hpp"
#include "team/team.hpp"

namespace dmabench::levels {
namespace {

using json = nlohmann::json;

constexpr std::uint64_t kSeedMask = (1ull << 53) - 1;  // seeds exact in every JSON reader

// What --processes cannot go with: outputs every process would write, a launcher's processes.
void check_flags(const CliOptions& o) {
  if (team::launch_env().size > 1)
    throw InputError("--processes: runs fresh processes one after another in one job; under mpirun / srun run the job "
                     "several times and merge the results files with dmabench --merge");
  for (gbench::Flag flag : {gbench::Flag::out, gbench::Flag::format})
    if (o.benchmark_args.has(flag))
      throw InputError(fmt::format("{}: not with --processes (every process would write it); leave it out",
                                   gbench::flag_name(flag)));
  if (!o.power_trace.empty()) throw InputError("--power-trace: not with --processes (every process would write it)");
  if (!o.packets_dir.empty()) throw InputError("--packets: not with --processes (every process would write it)");
}

// The arguments of process k: the run's, less the flags set per process, plus its --out and order.
std::vector<std::string> process_args(const std::vector<std::string>& args, const std::string& out, bool random,
                                      std::uint64_t seed) {
  static const std::vector<std::string> per_process = {"--processes", "--out", "--check", "--junit", "--csv", "--md",
                                                       "--order", "--order-seed"};
  std::vector<std::string> a;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string flag = args[i].substr(0, args[i].find('='));
    if (std::find(per_process.begin(), per_process.end(), flag) == per_process.end()) {
      a.push_back(args[i]);
      continue;
    }
    if (args[i].find('=') == std::string::npos) ++i;  // its value is the next argument
  }
  a.insert(a.end(), {"--out", out, "--order", random ? "random" : "config"});
  if (random) a.insert(a.end(), {"--order-seed", std::to_string(seed)});
  return a;
}

// Starts this program with `args` in a process group of its own (it ends when this process dies); its pid.
// SIGINT and SIGTERM are blocked from before the fork until the new program has its own handlers: between fork and
// exec the child still runs this process's handler, which would take a signal into a flag that exec then forgets
// (issue 51: once in 60 tries the first process ran all its cases after a Ctrl-C). The child puts the default
// actions back and keeps them blocked through exec (a blocked signal stays pending across it); the new program's
// interrupt::Guard lets them in once its handlers are installed, so a signal passed on at any moment stops it
// between cases. The parent unblocks them at once: one that came meanwhile is then taken and passed on (wait_for).
pid_t spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  argv.push_back(program_invocation_name);  // the name it was started by (GNU); the program is this one
  std::vector<std::string> copy = args;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  // test only (docs/testing.md): the child pauses this long between fork and exec, so that a test can send the signal
  // into that window every time instead of once in tens of tries
  const char* pause_env = std::getenv("DMABENCH_TEST_SPAWN_PAUSE_MS");
  const long pause_ms = pause_env ? std::strtol(pause_env, nullptr, 10) : 0;
  sigset_t stops, old;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stops, &old);
  const pid_t pid = ::fork();
  if (pid == 0) {
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    ::sigaction(SIGINT, &dfl, nullptr);
    ::sigaction(SIGTERM, &dfl, nullptr);
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(143);
    if (pause_ms > 0 && pause_ms <= 10000) {
      const timespec pause{pause_ms / 1000, (pause_ms % 1000) * 1000000};
      ::nanosleep(&pause, nullptr);
    }
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  const int err = errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (pid < 0) throw std::runtime_error(fmt::format("--processes: fork: {}", std::strerror(err)));
  ::setpgid(pid, pid);
  return pid;
}

// Waits for the process; a signal this process gets is passed on to it once. Its exit code (128 + a signal).
int wait_for(pid_t pid) {
  bool passed = false;
  for (;;) {
    int status = 0;
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (got < 0 && errno != EINTR) throw std::runtime_error(fmt::format("--processes: waitpid: {}", std::strerror(errno)));
    if (interrupt::wait_requested(std::chrono::milliseconds(50)) && !passed) {
      ::kill(pid, interrupt::requested());
      passed = true;
    }
  }
}

// The per-process directory, made, without the files of an earlier run's processes.
std::string process_dir(const std::string& out) {
  const std::filesystem::path dir = out + ".processes";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir))
    throw InputError(fmt::format("--out {}: cannot make the directory {} for the processes' results", out, dir.string()));
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("process-", 0) == 0 && e.is_regular_file()) std::filesystem::remove(e.path(), ec);
  return dir.string();
}

// The files the run removes or writes in `<out>.processes/` (an earlier run's process-* files, each process's file):
// none may be one the run reads (out_file.hpp).
void check_process_files(const CliOptions& options, const std::string& out, int processes) {
  const std::filesystem::path dir = out + ".processes";
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("process-", 0) == 0) check_not_an_input("--out", options.out, e.path().string());
  for (int k = 1; k <= processes; ++k) check_not_an_input("--out", options.out, fmt::format("{}/process-{}.json", dir.string(), k));
}

// What the processes left: each one's results, and why the loop stopped early (0: it did not).
struct Left {
  std::vector<json> docs;
  std::vector<ProcessFile> files;
  int stop_code = 0;  // 3, 4 or 128 + a signal
  int stopped_in = 0;  // the process during which it stopped
};

// The processes one after another; one that ends otherwise than 0, 1 or 5 (3, 4, a signal), or a signal to this
// process, ends the loop. nullopt: the first process found bad input (it said what; nothing is written).
std::optional<Left> run_all(const CliOptions& options, const std::vector<std::string>& args, const std::string& dir,
                            bool random, std::uint64_t base) {
  Left left;
  for (int k = 1; k <= options.processes && !left.stop_code; ++k) {
    const std::uint64_t seed = datagen::mix64(base + static_cast<std::uint64_t>(k)) & kSeedMask;
    const std::string file = fmt::format("{}/process-{}.json", dir, k);
    console::say("dmabench: process {} of {}{}\n", k, options.processes, random ? fmt::format(" (order seed {})", seed) : "");
    std::fflush(nullptr);
    const int code = wait_for(spawn(process_args(args, file, random, seed)));
    if (code == 2 && left.docs.empty()) return std::nullopt;
    // 0, 1, 5, 6 (nothing measured: the levels file decides): the next process runs; 3, 4, a signal: none does
    if (code != 0 && code != 1 && code != 5 && code != kExitNothingMeasured) left.stop_code = code;
    if (interrupt::requested()) left.stop_code = interrupt::exit_code();
    if (left.stop_code) left.stopped_in = k;
    // the first process said it where backend auto fell back to host ranks; the rest record it and stay quiet
    ::setenv(kFallbackSaid, "1", 1);
    try {  // its file, or, where it did not finish it (killed), its journal (results_file.hpp)
      left.docs.push_back(read_results(file).doc);
      left.files.push_back({file, code});
    } catch (const InputError& e) {
      console::warn("dmabench: process {} left no results in {} (exit {}): {}\n", k, file, code, e.what());
    }
  }
  return left;
}

// --junit of --processes: a test per case of the levels file (`records`); a run stopped early (a signal, a process
// killed) adds a skipped test saying where it stopped: the cases no process reached are not known here (each process
// expands the config), so a cancelled CI job shows what finished and that the rest did not run.
void write_junit(const std::string& path, std::vector<json> records, const std::vector<check::Verdict>& verdicts,
                 const Left& left, int processes, const json& context) {
  if (left.stop_code) {
    const int code = left.stop_code;
    const std::string how = code == 130 ? "SIGINT" : code == 143 ? "SIGTERM"
                            : code > 128 ? fmt::format("signal {}", code - 128) : fmt::format("exit {}", code);
    records.push_back({{"name", "dmabench --processes: the rest of the run"}, {"pattern", "run"}, {"engine", "processes"},
                       {"status", "skipped"},
                       {"reason", fmt::format("not run: the run stopped ({}, exit {}) in process {} of {}; the cases that "
                                              "process and the later ones did not reach did not run",
                                              how, code, left.stopped_in, processes)}});
  }
  junit::write(path, junit::test_cases(records, check::failed_lines(verdicts)),
               context.value("started_at", "").substr(0, 19), context.value("host", ""));
}

// --junit, --csv and --md of --processes: checked here, written from the levels file's records (the processes write none).
struct Reports {
  std::string junit, csv, md;  // as checked; "" for none
};

Reports check_reports(const CliOptions& options, const std::string& out) {
  Reports r;
  std::vector<std::pair<std::string, std::string>> written = {{"--out", out}};
  for (auto [flag, given, path] : {std::tuple{"--junit", &options.junit, &r.junit}, std::tuple{"--csv", &options.csv, &r.csv},
                                   std::tuple{"--md", &options.md, &r.md}})
    if (!given->empty()) {
      *path = check_output_file(flag, *given, options.config, true).path;
      written.emplace_back(flag, *path);
    }
  check_distinct_outputs(written);
  return r;
}

// --check over the levels file: whether every check passed; `verdicts` gets them.
bool check_levels(const std::optional<check::Expectations>& expectations, const json& merged,
                  std::vector<check::Verdict>& verdicts) {
  if (!expectations) return true;
  std::size_t unchecked = 0;
  for (const json& r : merged["results"]) {
    if (auto v = expectations->judge(r, merged["context"].value("machine", json::object()))) verdicts.push_back(std::move(*v));
    else unchecked += r.value("status", "") == "ok";
  }
  return check::print_verdicts(verdicts, unchecked, expectations->path());
}

}  // namespace

int run_processes(const CliOptions& options, const std::vector<std::string>& args) {
  check_flags(options);
  if (config_read_once(options.config))  // the parent reads it here, and every process again
    throw InputError(fmt::format("--config {}: a pipe is read once, and --processes starts {} processes that each read "
                                 "the config; give a file", options.config, options.processes));
  (void)load_config(options.config, options.overrides);  // bad input stops here, before any process runs
  // the inputs first (config, traces, --check's reference): no output may be one of them (out_file.hpp)
  const auto expectations = options.check.empty() ? std::optional<check::Expectations>() : check::Expectations::load(options.check);
  const OutPath out = check_out_path(options.out, options.config);
  check_process_files(options, out.path, options.processes);
  const Reports reports = check_reports(options, out.path);
  const std::string& junit_path = reports.junit;
  const OutLock lock(out.path);
  const std::string dir = process_dir(out.path);
  const bool random = options.order != "config";
  const std::uint64_t base = options.order_seed ? *options.order_seed
                                                : ((static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}()) & kSeedMask;
  const std::optional<Left> left = run_all(options, args, dir, random, base);
  if (!left) return 2;  // bad input: the process said what; nothing is written
  if (left->docs.empty()) {
    if (!junit_path.empty() && left->stop_code) write_junit(junit_path, {}, {}, *left, options.processes, json::object());
    return left->stop_code ? left->stop_code : 3;
  }
  const json settings = {{"processes", options.processes}, {"order", random ? "random" : "config"},
                         {"order_seed", random ? json(base) : json()}};
  const json merged = merge(left->docs, left->files, "dmabench --processes", settings);
  write_json_atomically(out.path, merged);
  int ok = 0, skipped = 0, failed = 0;
  std::map<std::string, int> skip_reasons;
  for (const json& r : merged["results"]) {
    const std::string s = r.value("status", "");
    ok += s == "ok";
    skipped += s == "skipped";
    failed += s == "failed";
    if (s == "skipped") ++skip_reasons[r.value("reason", "")];
  }
  const std::vector<json> records = merged["results"].get<std::vector<json>>();
  if (options.verbosity > 0) console::say("\n{}", table_export::avg_busbw_line(records));
  console::say("\ndmabench: {} processes: {} ok, {} skipped, {} failed; levels in {} (each process's results in {})\n",
               left->docs.size(), ok, skipped, failed, out.path, dir);
  const auto commonest = std::max_element(skip_reasons.begin(), skip_reasons.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
  console::say("{}", commonest == skip_reasons.end() ? nothing_measured_line(options, ok, skipped, failed, "", 0)
                                                     : nothing_measured_line(options, ok, skipped, failed, commonest->first,
                                                                             commonest->second));
  std::vector<check::Verdict> verdicts;
  const bool checked = left->stop_code || check_levels(expectations, merged, verdicts);
  if (!junit_path.empty())  // a test per case of the levels file (every finished case, also of a stopped run)
    write_junit(junit_path, records, verdicts, *left, options.processes, merged["context"]);
  if (!reports.csv.empty()) table_export::write_csv(reports.csv, records);
  if (!reports.md.empty()) table_export::write_markdown(reports.md, records);
  if (left->stop_code) return left->stop_code;
  return finished_run_code(options, ok, failed, checked);
}

}  // namespace dmabench::levels
