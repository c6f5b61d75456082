#include "bench/cli.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include <algorithm>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/run/gbench.hpp"
#include "core/errors.hpp"
#include "bench/config/presets.hpp"
#include "power/source.hpp"
#include "team/team.hpp"

namespace dmabench {

std::string usage() {
  return fmt::format(R"(usage: dmabench --config FILE [--out FILE] [options] [--benchmark_* flags]
       dmabench PRESET [--out FILE] [options]   (a shipped config by name, e.g. dmabench crossover)
       dmabench             (no arguments: what this machine offers and the command of a first sweep)

Sweeps copies and collectives over DMA/copy engines, GPU-core copy kernels, NCCL and host threads;
validates every case's data, times it, and writes one JSON record per case.

  --config FILE        sweep definition (JSON; see configs/ and docs/user-guide.md)
  --preset NAME        a shipped config by name (configs/NAME.json), as the first argument NAME does
  --presets            list the presets with what each measures
  --out FILE           results JSON (default: dmabench-results.json); every finished case goes at once
                       into FILE.journal, FILE is rewritten at most every 2 s and whole at the end
  --backend NAME       auto (default: the build's GPU backend when a GPU is visible, else host), host, cuda, hip
  --devices LIST       devices to use, e.g. 0,1, all or pairs (overrides the config's "devices"); under mpirun /
                       srun: the GPU of each local rank of a node (0,0 puts two processes on GPU 0)
  --power[=SOURCE]     measure power and energy per case ({})
  --power-window S     seconds of each power window (default 2)
  --power-trace FILE   also write the power readings of every window, with case boundaries
  --case-timeout S     a case still running after S seconds (decimal; time the process is stopped not
                       counted) fails with "timeout" and the run stops, its results file complete
                       (exit 4); 0: no limit (default 600)
  --packets DIR        write the ring contents of one operation per queue for every sdma case (DIR/<case>.json)
  --check FILE         judge every case against FILE (an expectations file, e.g. configs/expect/h200.json, or
                       a reference results file): PASS/FAIL per case, exit 5 when a check fails
  --processes N        run the sweep in N fresh processes one after another, each with the cases in its own
                       random order, and write one results file whose figures are the median over processes
                       with the between-process interval (per-process files in FILE.processes/); 1: one process
  --order ORDER        the order the cases run in: config (as the config expands; the default of one process)
                       or random (a seeded shuffle; the default of each process under --processes)
  --order-seed S       the random order's seed (an unsigned integer; drawn and recorded when not given)
  --junit FILE         also write a JUnit XML report: a case is a test (failed fails, skipped skips, a --check
                       FAIL fails with its message), for CI systems that show tests
  --samples            keep every timed sample of every case in its record (as the config's "samples": true)
  -q, --quiet          print only the run's verdict lines (failures, checks, the summary)
  -v, --verbose        also print each case's sampling and setup as it runs
  --list               print the expanded cases and exit without running anything
  --features           print what this build and machine support, and why not where not
  --version            print the version and exit
  --help               this text

Google Benchmark's flags work too, e.g. --benchmark_filter=REGEX (on the case names that --list
prints), --benchmark_repetitions=N, --benchmark_min_time=... (then the number of timed samples is
chosen by Google Benchmark instead of the config's "iterations"; either flag keeps its loop for a
config without "iterations", which is otherwise sampled adaptively), --benchmark_out=FILE,
--benchmark_format=json (stdout is then its JSON alone; dmabench's lines go to stderr). Every flag once.

Exit codes: 0 every case ok or skipped, 1 some case failed, 2 bad input (nothing was run), 3 internal
or I/O error, 4 a case exceeded --case-timeout (the run stopped), 5 no case failed but a --check did,
130 / 143 interrupted by SIGINT / SIGTERM (the case in flight finished and was recorded).
)",
                     fmt::join(power::source_names(), ", "));
}

namespace {

// A decimal number of seconds from lo to hi: digits, then optionally '.' and digits (no sign, hex,
// exponent, "nan" or "inf"); `zero_is_none`: a value equal to 0 (0, 0.0, 00) is 0 whatever lo is.
double seconds(const std::string& v, const char* flag, double lo, double hi, bool zero_is_none = false) {
  const auto digits = [](const std::string& d) {
    return !d.empty() && d.size() <= 12 && std::all_of(d.begin(), d.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
  };
  const auto dot = v.find('.');
  const bool ok = digits(v.substr(0, dot)) && (dot == std::string::npos || digits(v.substr(dot + 1)));
  const double s = ok ? std::stod(v) : 0;
  if (ok && zero_is_none && s == 0) return 0;
  if (!ok || !(s >= lo && s <= hi))
    throw InputError(fmt::format("{}: '{}' is not a decimal number of seconds from {} to {}{}", flag, v, lo, hi,
                                 zero_is_none ? ", or 0 (no limit)" : ""));
  return s;
}

// Flags checked together: one of --list, --features and --version. (Google Benchmark's: each as it is added,
// gbench::Flags; --out, --benchmark_out, --power-trace: checked with the paths, in run().)
void check_together(const CliOptions& o) {
  if (o.list + o.features + o.version > 1)
    throw InputError(fmt::format("{}: choose one", o.list ? (o.features ? "--list and --features" : "--list and --version")
                                                          : "--features and --version"));
  if (!o.preset.empty() && !o.config.empty())
    throw InputError(fmt::format("--config and the preset '{}': choose one (a preset is a shipped config)", o.preset));
  if (o.order_seed && o.order == "config")
    throw InputError("--order-seed: a seed orders the cases at random; it does not go with --order config");
}

// --processes N, --order ORDER, --order-seed S (bench/levels.hpp).
void order_flag(const std::string& flag, const std::string& v, CliOptions& o) {
  const auto digits = [&](std::size_t most) {
    return !v.empty() && v.size() <= most && std::all_of(v.begin(), v.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
  };
  if (flag == "--processes") {
    if (!digits(4) || std::stoi(v) < 1 || std::stoi(v) > 1000)
      throw InputError(fmt::format("--processes: '{}' is not a number of processes from 1 to 1000", v));
    o.processes = std::stoi(v);
  } else if (flag == "--order") {
    if (v != "config" && v != "random") throw InputError(fmt::format("--order: unknown order '{}'; accepted: config, random", v));
    o.order = v;
  } else {
    errno = 0;
    const unsigned long long seed = digits(20) ? std::strtoull(v.c_str(), nullptr, 10) : 0;
    if (!digits(20) || errno == ERANGE) throw InputError(fmt::format("--order-seed: '{}' is not an unsigned integer below 2^64", v));
    o.order_seed = seed;
  }
}

// The flags that take no value: --list, --features, --version, --presets, --samples, --help (-h), -q / --quiet,
// -v / --verbose; false for another.
bool switch_flag(const std::string& arg, bool has_value, CliOptions& o) {
  bool* flag = arg == "--list" ? &o.list : arg == "--features" ? &o.features : arg == "--version" ? &o.version
             : arg == "--presets" ? &o.presets : arg == "--samples" ? &o.samples
             : arg == "--help" || arg == "-h" ? &o.help : nullptr;
  const bool quiet = arg == "-q" || arg == "--quiet", verbose = arg == "-v" || arg == "--verbose";
  if ((flag || quiet || verbose) && has_value) throw InputError(fmt::format("{}: takes no value", arg));
  if (flag) *flag = true;
  if ((quiet && o.verbosity == 2) || (verbose && o.verbosity == 0)) throw InputError("-q and -v: choose one");
  if (quiet || verbose) o.verbosity = quiet ? 0 : 2;
  return flag != nullptr || quiet || verbose;
}

}  // namespace

CliOptions parse_cli(const std::vector<std::string>& args) {
  CliOptions o;
  std::vector<std::string> seen;  // every flag once: a second --config (or --out ...) would silently win
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (i == 0 && !arg.empty() && arg[0] != '-') {  // dmabench NAME ...: a preset
      o.preset = arg;
      seen.emplace_back("--preset");
      continue;
    }
    if (arg.rfind("--benchmark_", 0) == 0) {
      o.benchmark_args.add(arg);
      continue;
    }
    std::string value;
    bool has_value = false;
    if (auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    auto take = [&](const char* flag) {
      if (has_value) return value;
      if (i + 1 >= args.size()) throw InputError(fmt::format("{}: missing value", flag));
      return args[++i];
    };
    // a file name that is empty would silently mean "none" (--packets, --power-trace) or the default
    auto file = [&](const char* flag) {
      std::string f = take(flag);
      if (f.empty()) throw InputError(fmt::format("{}: empty file name", flag));
      return f;
    };
    if (arg == "--config") {
      o.config = file("--config");
    } else if (arg == "--preset") {
      o.preset = take("--preset");
      if (o.preset.empty()) throw InputError("--preset: empty name (dmabench --presets lists them)");

    } else if (arg == "--out") {
      o.out = file("--out");
    } else if (arg == "--backend") {
      o.backend = take("--backend");
      if (o.backend != "auto" && o.backend != "host" && o.backend != "cuda" && o.backend != "hip")
        throw InputError(fmt::format("--backend: unknown backend '{}'; accepted: auto, host, cuda, hip", o.backend));
    } else if (arg == "--devices") {
      o.devices = parse_device_list(take("--devices"), "--devices", /*repeats=*/team::launch_env().size > 1);
    } else if (arg == "--power") {
      o.power = has_value ? value : std::string("auto");
      if (!power::is_source_name(*o.power))
        throw InputError(fmt::format("--power: unknown source '{}'; accepted: {}", *o.power,
                                     fmt::join(power::source_names(), ", ")));
    } else if (arg == "--power-window") {
      o.power_window_s = seconds(take("--power-window"), "--power-window", 0.2, 600);
    } else if (arg == "--case-timeout") {
      o.case_timeout_s = seconds(take("--case-timeout"), "--case-timeout", 0.01, 86400, /*zero_is_none=*/true);
    } else if (arg == "--power-trace") {
      o.power_trace = file("--power-trace");
    } else if (arg == "--packets") {
      o.packets_dir = file("--packets");
    } else if (arg == "--check") {
      o.check = file("--check");
    } else if (arg == "--junit") {
      o.junit = file("--junit");
    } else if (arg == "--processes" || arg == "--order" || arg == "--order-seed") {
      order_flag(arg, take(arg.c_str()), o);
    } else if (!switch_flag(arg, has_value, o)) {
      throw InputError(fmt::format(
          "unknown argument '{}'; accepted: a preset name first, --config, --preset, --presets, --out, --backend, --devices, "
          "--power, --power-window, --power-trace, --packets, --check, --junit, --samples, --case-timeout, --processes, "
          "--order, --order-seed, -q, -v, --list, --features, --version, --help and Google Benchmark's --benchmark_* flags",
          args[i]));
    }
    if (std::find(seen.begin(), seen.end(), arg) != seen.end())  // (after the value's own check)
      throw InputError(fmt::format("{}: given twice; give it once", arg));
    seen.push_back(arg);
  }
  check_together(o);
  if (!o.preset.empty()) o.config = preset_path(o.preset);
  return o;
}

}  // namespace dmabench
