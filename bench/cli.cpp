#include "bench/cli.hpp"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include <algorithm>
#include <functional>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bench/check.hpp"
#include "bench/run/gbench_flags.hpp"
#include "core/errors.hpp"
#include "core/json_input.hpp"
#include "core/suggest.hpp"
#include "core/units.hpp"
#include "bench/config/presets.hpp"
#include "engines/backend.hpp"
#include "power/source.hpp"
#include "team/team.hpp"

namespace dmabench {

namespace {

// The flags that set keys of the config (CliOptions::overrides), for usage().
const char* const kSweepUsage = R"(
Sweep (each flag sets a key of the config over the config's own; with no config and no preset these flags alone
make the sweep, from {"name": "flags", "timing": "oneshot"}; docs/user-guide.md "Flags over configs"):
  -b, --minbytes SIZE  the smallest size per rank (alone: the one size), e.g. 1KiB or 1024 ("sizes")
  -e, --maxbytes SIZE  the largest size per rank, with -b                                ("sizes")
                       sizes are bytes per rank (each rank's buffer), not nccl-tests' all-gather/all-to-all
                       total; K/M/G (KiB/MiB/GiB) are powers of 1024, KB/MB/GB are refused: write MiB or bytes
  -f, --stepfactor F   each size F times the last (default 2)                            ("sizes": factor)
  -i, --stepbytes S    or each size S more than the last                                 ("sizes": step)
  --sizes SPEC         1KiB:1GiB:x2, 1KiB:64KiB:+4KiB, a list 4KiB,64KiB or one size   ("sizes")
  --patterns LIST      e.g. copy,bidir                                                   ("patterns")
  --engines LIST       e.g. ce,sm                                                        ("engines")
  --timing LIST        oneshot, pipelined or both                                        ("timing")
  --pipeline-depth N   operations per pipelined sample                                   ("pipeline_depth")
  -a, --axis KEY=V1,V2 any config axis as a list (a number or true/false stays one); nvbench's KEY=[1,2,4] and
                       KEY=[START:STOP:STEP] (STOP included, e.g. rotate=[1:4:1])
  --set KEY=VALUE      any config key (VALUE as JSON when it parses, else text; alltoallv.topk=8 reaches into
                       an object); --set and --axis repeat, once per key
Sampling:
  -n, --iterations N   a fixed number of timed samples per case (nccl-tests' --iters)     ("iterations")
  -w, --warmup N       untimed samples before them (nccl-tests' --warmup_iters)           ("warmup")
  --min-samples N, --max-samples N, --min-time S, --max-time S: adaptive sampling's bounds (without -n)
  --max-noise X        the relative interval a case aims for: 0.01 or 1%                  ("max_noise")
)";

}  // namespace

std::string usage() {
  return fmt::format(R"(usage: dmabench --config FILE [--out FILE] [options] [--benchmark_* flags]
       dmabench PRESET [--out FILE] [options]   (a shipped config by name, e.g. dmabench crossover)
       dmabench -b 1KiB -e 1GiB -f 2 --patterns copy --engines ce   (a sweep from flags alone)
       dmabench             (no arguments: what this machine offers and the command of a first sweep)
       dmabench --merge A.json B.json ... --out M.json   (N processes' files into one levels file: --merge --help)

Sweeps copies and collectives over DMA/copy engines, GPU-core copy kernels, NCCL and host threads;
validates every case's data, times it, and writes one JSON record per case.

Config:
  --config FILE        sweep definition (JSON; see configs/ and docs/user-guide.md); - or /dev/stdin: read from
                       standard input, /dev/fd/N: a pipe (read to its end; not with --processes or mpirun)
  --preset NAME        a shipped config by name (configs/NAME.json), as the first argument NAME does
  --presets            list the presets with what each measures
{}
Output and run:
  --out FILE           results JSON (default: dmabench-results.json); every finished case goes at once
                       into FILE.journal, FILE is rewritten at most every 2 s and whole at the end
  --backend NAME       auto (default: the build's GPU backend when a GPU is visible, else host, said on stderr and
                       recorded), gpu (the build's GPU backend or exit 2: never host), host, cuda, hip; wins
                       over a config's "backend"
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
  --cpu-choice MODE    quiet (default): the thread that submits and times a case moves to an allowed CPU whose
                       core reads unshared and waits out shared readings (record: cpu_choice); off: it stays
                       where the scheduler puts it
  --junit FILE         also write a JUnit XML report: a case is a test (failed fails, skipped skips, a --check FAIL
                       fails with its message); an ok case's figures (p50, busbw, bytes ...) are its <properties>
  --junit-from CASES   with --junit FILE alone: write FILE from the test cases in CASES (JSON, - for standard
                       input) instead of a run (dmabench-results' compare, history gate and ab do)
  --csv FILE           also write a CSV file, a row per case (the columns of dmabench-results export)
  --md FILE            also write the same table in markdown (columns empty in every row left out)
  --samples            keep every timed sample of every case in its record (as the config's "samples": true)
  --allow-empty        a run in which no case was ok (every case skipped: nothing measured) exits 0, not 6
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

Exit codes: 0 every case ok or skipped (at least one ok), 1 some case failed, 2 bad input (nothing was run), 3 internal
or I/O error, 4 a case exceeded --case-timeout (the run stopped), 5 no case failed but a --check did,
6 no case failed and none was ok: nothing was measured (--allow-empty: 0), 130 / 143 interrupted by
SIGINT / SIGTERM (the case in flight finished and was recorded).
)",
                     kSweepUsage, fmt::join(power::source_names(), ", "));
}

namespace {

// A decimal number of seconds from lo to hi: digits, then optionally '.' and digits (no sign, hex,
// exponent, "nan" or "inf"); `zero_is_none`: a value equal to 0 (0, 0.0, 00) is 0 whatever lo is.
double seconds(const std::string& v, const char* flag, double lo, double hi, bool zero_is_none = false) {
  const Maybe<double> n = decimal_number(v);  // core/units.hpp: the one reader of numbers
  const bool ok = n.operator bool();
  const double s = ok ? *n : 0;
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

// --junit-from CASES: a mode of its own, with --junit FILE (what it writes) and no other flag (`seen`: the flags given
// but --set, --axis and Google Benchmark's).
void check_junit_from(const CliOptions& o, const std::vector<std::string>& seen) {
  if (o.junit_from.empty()) return;
  if (o.junit.empty()) throw InputError("--junit-from: needs --junit FILE, the JUnit file to write");
  std::string other = !o.overrides.empty() ? o.overrides.front().flag
                    : !o.benchmark_args.args().empty() ? o.benchmark_args.args().front() : "";
  for (const auto& flag : seen)
    if (other.empty() && flag != "--junit-from" && flag != "--junit") other = flag == "--preset" ? "a preset" : flag;
  if (!other.empty())
    throw InputError(fmt::format("--junit-from and {}: --junit-from writes --junit FILE from test cases and runs nothing; "
                                 "give it --junit FILE alone", other));
}

// --processes N, --order ORDER, --order-seed S (bench/levels/levels.hpp).
void order_flag(const std::string& flag, const std::string& v, CliOptions& o) {
  if (flag == "--processes") {
    const Maybe<std::uint64_t> n = whole_number(v);
    if (!n || *n < 1 || *n > 1000)
      throw InputError(fmt::format("--processes: '{}' is not a number of processes from 1 to 1000", v));
    o.processes = static_cast<int>(*n);
  } else if (flag == "--order") {
    if (v != "config" && v != "random") throw InputError(fmt::format("--order: unknown order '{}'; accepted: config, random", v));
    o.order = v;
  } else {
    const Maybe<std::uint64_t> seed = whole_number(v);
    if (!seed) throw InputError(fmt::format("--order-seed: '{}' is not an unsigned integer below 2^64 ({})", v, seed.why_not()));
    o.order_seed = *seed;
  }
}

// The flags that take no value: --list, --features, --version, --presets, --samples, --allow-empty, --help (-h),
// -q / --quiet, -v / --verbose; false for another.
bool switch_flag(const std::string& arg, bool has_value, CliOptions& o) {
  bool* flag = arg == "--list" ? &o.list : arg == "--features" ? &o.features : arg == "--version" ? &o.version
             : arg == "--presets" ? &o.presets : arg == "--samples" ? &o.samples : arg == "--allow-empty" ? &o.allow_empty
             : arg == "--help" || arg == "-h" ? &o.help : nullptr;
  const bool quiet = arg == "-q" || arg == "--quiet", verbose = arg == "-v" || arg == "--verbose";
  if ((flag || quiet || verbose) && has_value) throw InputError(fmt::format("{}: takes no value", arg));
  if (flag) *flag = true;
  if ((quiet && o.verbosity == 2) || (verbose && o.verbosity == 0)) throw InputError("-q and -v: choose one");
  if (quiet || verbose) o.verbosity = quiet ? 0 : 2;
  return flag != nullptr || quiet || verbose;
}

using json = nlohmann::json;

// A command-line value as the config holds it: a JSON number, true or false when it parses as one, else the text.
json scalar(const std::string& v) {
  const json j = json::parse(v, nullptr, /*allow_exceptions=*/false);
  return !j.is_discarded() && (j.is_number() || j.is_boolean()) ? j : json(v);
}

// "a,b,c": a list of scalars (every item, the empty ones too: the config names them).
json list(const std::string& v) {
  json out = json::array();
  for (std::size_t start = 0;;) {
    const std::size_t comma = v.find(',', start);
    out.push_back(scalar(v.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

// The flags that set one config key (each a key of the config; kind: 's' a scalar, 'l' a comma list, '%' a fraction
// or a percentage such as 1%).
struct KeyFlag {
  const char* name;
  const char* key;
  char kind;
};
constexpr KeyFlag kKeyFlags[] = {
    {"--patterns", "patterns", 'l'},  {"--engines", "engines", 'l'},
    {"--iterations", "iterations", 's'}, {"--warmup", "warmup", 's'},
    {"--timing", "timing", 'l'},      {"--pipeline-depth", "pipeline_depth", 's'},
    {"--min-samples", "min_samples", 's'}, {"--max-samples", "max_samples", 's'},
    {"--max-noise", "max_noise", '%'}, {"--min-time", "min_time", 's'},
    {"--max-time", "max_time", 's'}};

// The other names of a flag: nccl-tests' (-n/--iters, -w/--warmup_iters, --minbytes -b, --maxbytes -e, --stepfactor -f,
// --stepbytes -i) and nvbench's (-a --axis); {other name, the flag}.
constexpr std::pair<const char*, const char*> kAliases[] = {
    {"-n", "--iterations"}, {"--iters", "--iterations"}, {"-w", "--warmup"}, {"--warmup_iters", "--warmup"},
    {"--minbytes", "-b"},   {"--maxbytes", "-e"},        {"--stepfactor", "-f"}, {"--stepbytes", "-i"},
    {"-a", "--axis"}};

// nccl-tests' flags that dmabench has no equivalent of, each with what dmabench offers instead (refused, exit 2).
struct Foreign {
  const char* short_name;
  const char* long_name;
  const char* instead;
};
constexpr Foreign kNcclOnly[] = {
    {"-g", "--ngpus", "no GPUs-per-thread count here: --devices LIST names the GPUs (--devices 0,1 or all), and under "
                      "mpirun / srun each rank drives the GPU --devices gives it"},
    {"-t", "--nthreads", "one thread submits every case: --devices LIST names the GPUs, mpirun / srun runs a process per GPU"},
    {"-d", "--datatype", "sizes are bytes, not typed elements: -b/-e (bytes per rank)"},
    {"-o", "--op", "no reduction operator: --patterns LIST names the copies and collectives (dmabench --list shows them)"},
    {"-z", "--blocking", "every sample is timed to its completion: --timing oneshot or pipelined"},
    {"-m", "--agg_iters", "--pipeline-depth N: operations per pipelined sample (--timing pipelined)"},
    {"-G", "--cudagraph", "no CUDA graph launch: --timing pipelined queues N operations per sample (--pipeline-depth)"},
    {"-T", "--timeout", "--case-timeout S: a case still running after S seconds fails and the run stops (exit 4)"},
    {"-p", "--parallel_init", "no threads to initialise: --devices LIST names the GPUs"},
    {"-C", "--report_cputime", "the console reports the p50 with its 95% interval (--samples keeps every sample)"},
    {"-R", "--local_register", "buffers are allocated and registered per case by the engine (--features lists engines)"}};

// A refusal naming what dmabench offers instead when `arg` is one of nccl-tests' flags without an equivalent.
void refuse_foreign(const std::string& arg) {
  for (const auto& f : kNcclOnly)
    if (arg == f.short_name || arg == f.long_name)
      throw InputError(fmt::format("{}: nccl-tests' {} has no dmabench equivalent; instead: {}", arg, f.long_name,
                                   f.instead));
}

// The one name of a flag that has two (-n and --iterations: --iterations; --minbytes: -b): "given twice" counts both.
std::string canonical(const std::string& arg) {
  for (const auto& [alias, name] : kAliases)
    if (arg == alias) return name;
  return arg;
}

// --sizes: FROM:TO:xFACTOR, FROM:TO:+STEP, FROM:TO (factor 2), A,B,... or one size.
json sizes_value(const std::string& v) {
  const std::size_t c1 = v.find(':');
  if (c1 == std::string::npos) return v.find(',') == std::string::npos ? scalar(v) : list(v);
  const std::size_t c2 = v.find(':', c1 + 1);
  json range = {{"from", scalar(v.substr(0, c1))}, {"to", scalar(v.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1))}};
  const std::string step = c2 == std::string::npos ? "x2" : v.substr(c2 + 1);
  if (step.size() < 2 || (step[0] != 'x' && step[0] != '+') || v.find(',') != std::string::npos)
    throw InputError(fmt::format("--sizes: '{}' is not a size range or list; accepted: FROM:TO:xFACTOR (1KiB:1GiB:x2), "
                                 "FROM:TO:+STEP (1KiB:64KiB:+4KiB), FROM:TO (factor 2), a list 4KiB,64KiB or one size", v));
  range[step[0] == 'x' ? "factor" : "step"] = scalar(step.substr(1));
  return range;
}

constexpr const char* kAxisForms =
    "accepted: KEY=V1,V2, KEY=[V1,V2] or KEY=[START:STOP:STEP] (nvbench's range: whole numbers, STOP included, STEP "
    "1 when left out, at most 10000 values)";

// nvbench's range [START:STOP:STEP] (the brackets' inside): START, START+STEP, ... up to STOP included.
json axis_range(const std::string& arg, const std::string& inside) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t colon = inside.find(':', start);
    parts.push_back(inside.substr(start, colon == std::string::npos ? std::string::npos : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (parts.size() == 2) parts.emplace_back("1");
  std::vector<std::uint64_t> n;
  for (const auto& p : parts)
    if (const Maybe<std::uint64_t> x = whole_number(p)) n.push_back(*x);
  std::string why = parts.size() != 3 ? "a range is START:STOP or START:STOP:STEP"
                  : n.size() != 3     ? "START, STOP and STEP are whole numbers"
                  : n[2] == 0         ? "STEP is 0"
                  : n[1] < n[0]       ? "STOP is below START"
                  : (n[1] - n[0]) / n[2] >= 10000 ? "more than 10000 values" : "";
  if (!why.empty()) throw InputError(fmt::format("--axis: '{}': {}; {}", arg, why, kAxisForms));
  json out = json::array();
  for (std::uint64_t k = 0; k <= (n[1] - n[0]) / n[2]; ++k) out.push_back(n[0] + k * n[2]);  // no wrap past 2^64
  return out;
}

// --axis's values: V1,V2 (as before), nvbench's [V1,V2] and [START:STOP:STEP]. `arg`: the whole KEY=... for errors.
json axis_values(const std::string& arg, const std::string& text) {
  const bool open = !text.empty() && text.front() == '[', close = !text.empty() && text.back() == ']';
  if (!open && !close) return list(text);
  const std::string inside = open && close && text.size() >= 2 ? text.substr(1, text.size() - 2) : "";
  if (!open || !close || inside.empty() || inside.find_first_of("[]") != std::string::npos)
    throw InputError(fmt::format("--axis: '{}' is not an axis; {}", arg, kAxisForms));
  if (inside.find(':') == std::string::npos) return list(inside);
  if (inside.find(',') != std::string::npos)
    throw InputError(fmt::format("--axis: '{}' mixes a list and a range; {}", arg, kAxisForms));
  return axis_range(arg, inside);
}

// --set KEY=VALUE (VALUE as JSON when it parses, else text) and --axis KEY=V1,V2 (a list of scalars; nvbench's forms).
ConfigOverride key_value(const std::string& flag, const std::string& v) {
  const std::size_t eq = v.find('=');
  const std::string key = v.substr(0, eq == std::string::npos ? 0 : eq);
  const bool ok = !key.empty() && key.size() <= 100 && key.front() != '.' && key.back() != '.' &&
                  key.find("..") == std::string::npos &&
                  std::all_of(key.begin(), key.end(), [](unsigned char ch) { return std::islower(ch) || std::isdigit(ch) || ch == '_' || ch == '.'; });
  if (!ok)
    throw InputError(fmt::format("{}: '{}' is not KEY={}; KEY is a config key (docs/user-guide.md), dotted into objects "
                                 "as in alltoallv.topk", flag, v, flag == "--axis" ? "V1,V2,..." : "VALUE"));
  const std::string text = v.substr(eq + 1);
  json value;
  if (flag == "--axis") {
    value = axis_values(v, text);
  } else {
    try {
      value = parse_input_json(text, flag, 32);
    } catch (const InputError&) {
      value = text;
    }
  }
  return {fmt::format("{} {}", flag, key), key, std::move(value)};
}

// The size flags as given (empty: not given).
struct SizeFlags {
  std::string b, e, f, i;
};

// Adds the override of "sizes" that -b/-e/-f/-i make: -b alone one size, -b and -e a range (-f its factor, -i its
// step; factor 2 without either).
void add_sizes(const SizeFlags& s, CliOptions& o) {
  if (s.b.empty() && s.e.empty() && s.f.empty() && s.i.empty()) return;
  if (s.b.empty())
    throw InputError(fmt::format("{}: needs -b (the smallest size): -b SIZE is one size, -b FROM -e TO -f FACTOR a range",
                                 !s.e.empty() ? "-e" : !s.f.empty() ? "-f" : "-i"));
  if (s.e.empty() && (!s.f.empty() || !s.i.empty()))
    throw InputError(fmt::format("{}: needs -e (the largest size) with -b: -b FROM -e TO -f FACTOR", s.f.empty() ? "-i" : "-f"));
  if (!s.f.empty() && !s.i.empty()) throw InputError("-f and -i: choose one (a factor or a step between sizes)");
  std::string flag = "-b";
  json v = scalar(s.b);
  if (!s.e.empty()) {
    flag = s.i.empty() ? "-b/-e/-f" : "-b/-e/-i";
    v = {{"from", scalar(s.b)}, {"to", scalar(s.e)}};
    if (s.i.empty()) v["factor"] = s.f.empty() ? json(2) : scalar(s.f);
    else v["step"] = scalar(s.i);
  }
  o.overrides.insert(o.overrides.begin(), {flag, "sizes", v});  // first: a clash names it first
}

// The flags that set config keys: kKeyFlags, the size flags, --sizes, --set, --axis; false for another. `take`: the
// flag's value.
bool config_flag(const std::string& arg, const std::string& typed, const std::function<std::string()>& take, CliOptions& o,
                 SizeFlags& sizes) {
  for (const auto& f : kKeyFlags) {
    if (arg != f.name) continue;
    std::string v = take();
    json value = f.kind == 'l' ? list(v) : scalar(v);
    if (f.kind == '%' && v.size() > 1 && v.back() == '%' && scalar(v.substr(0, v.size() - 1)).is_number())
      value = scalar(v.substr(0, v.size() - 1)).get<double>() / 100;
    o.overrides.push_back({typed, f.key, std::move(value)});
    return true;
  }
  std::string* size = arg == "-b" ? &sizes.b : arg == "-e" ? &sizes.e : arg == "-f" ? &sizes.f : arg == "-i" ? &sizes.i : nullptr;
  if (size) {
    *size = take();
    if (size->empty()) throw InputError(fmt::format("{}: empty value", typed));
  } else if (arg == "--sizes") {
    o.overrides.push_back({"--sizes", "sizes", sizes_value(take())});
  } else if (arg == "--set" || arg == "--axis") {
    o.overrides.push_back(key_value(arg, take()));
  }
  return size || arg == "--sizes" || arg == "--set" || arg == "--axis";
}

// No config key set twice: by two flags, or a flag and a --set (or --axis) of it or of a key inside it.
void check_overrides(const CliOptions& o) {
  const auto inside = [](const std::string& a, const std::string& b) {
    return a.rfind(b, 0) == 0 && (a.size() == b.size() || a[b.size()] == '.');
  };
  for (std::size_t i = 0; i < o.overrides.size(); ++i)
    for (std::size_t j = 0; j < i; ++j) {
      const ConfigOverride &a = o.overrides[j], &b = o.overrides[i];
      if (!inside(a.key, b.key) && !inside(b.key, a.key)) continue;
      if (a.flag == b.flag) throw InputError(fmt::format("{}: given twice for one key; give it once", a.flag));
      throw InputError(fmt::format("{} and {}: both set the config's {}; give one", a.flag, b.flag,
                                   a.key.size() <= b.key.size() ? a.key : b.key));
    }
}

// The flags that name a file: --out, --power-trace, --packets, --check, --junit, --junit-from, --csv, --md (the field
// it goes in);
// null for another.
std::string* file_field(const std::string& arg, CliOptions& o) {
  return arg == "--out" ? &o.out : arg == "--power-trace" ? &o.power_trace : arg == "--packets" ? &o.packets_dir
       : arg == "--check" ? &o.check : arg == "--junit" ? &o.junit : arg == "--junit-from" ? &o.junit_from
       : arg == "--csv" ? &o.csv : arg == "--md" ? &o.md : nullptr;
}

// Every flag's name, the other names too: what an unknown flag is compared with for a suggestion.
const std::vector<std::string>& flag_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v = {"--config", "--preset", "--presets", "--out", "--backend", "--devices", "-b", "-e",
                                  "-f", "-i", "--sizes", "--set", "--axis", "--power", "--power-window",
                                  "--power-trace", "--packets", "--check", "--junit", "--junit-from", "--csv", "--md", "--samples",
                                  "--allow-empty",
                                  "--case-timeout", "--processes", "--order", "--order-seed", "--cpu-choice", "-q",
                                  "--quiet", "-v", "--verbose", "--list", "--features", "--version", "--help", "-h"};
    for (const auto& f : kKeyFlags) v.emplace_back(f.name);
    for (const auto& [alias, _] : kAliases) v.emplace_back(alias);
    return v;
  }();
  return names;
}

// `arg` as given, `name` its flag's name (without "=VALUE").
std::string unknown(const std::string& arg, const std::string& name) {
  return fmt::format(
      "unknown argument '{}'{}; accepted: a preset name first, --config, --preset, --presets, --out, --backend, --devices, "
      "the sweep flags -b/-e/-f/-i, --sizes, --patterns, --engines, -n, -w, --timing, --pipeline-depth, the sampling flags "
      "--min-samples, --max-samples, --max-noise, --min-time, --max-time, --set KEY=VALUE, --axis (-a) KEY=V1,V2, "
      "--power, --power-window, --power-trace, --packets, --check, --junit, --junit-from, --csv, --md, --samples, --allow-empty, "
      "--case-timeout, "
      "--processes, --order, --order-seed, --cpu-choice, -q, -v, --list, --features, --version, --help, nccl-tests' "
      "--minbytes, --maxbytes, --stepfactor, --stepbytes, --iters, --warmup_iters and Google Benchmark's --benchmark_* flags",
      arg, did_you_mean(name, flag_names()));
}

}  // namespace

int finished_run_code(const CliOptions& o, int ok, int failed, bool checked) {
  if (failed > 0) return 1;
  if (ok == 0 && !o.allow_empty) return kExitNothingMeasured;
  return checked ? 0 : check::kExitCheckFailed;
}

std::string nothing_measured_line(const CliOptions& o, int ok, int skipped, int failed, const std::string& reason,
                                  int reason_count) {
  if (ok > 0) return "";
  std::string line = fmt::format("dmabench: nothing was measured: no case was ok ({} skipped{})", skipped,
                                 failed ? fmt::format(", {} failed", failed) : std::string());
  if (reason_count > 0)
    line += fmt::format("; most often skipped: {} ({} of {})", reason.empty() ? "no reason given" : reason, reason_count,
                        skipped);
  if (failed == 0)
    line += o.allow_empty ? "; --allow-empty: exit 0"
                          : fmt::format("; exit {} (--allow-empty lets such a run pass)", kExitNothingMeasured);
  return line + "\n";
}

std::string config_source(const CliOptions& o) {
  if (o.config.empty()) return "the sweep flags";
  return fmt::format("--config {}{}", o.config, o.overrides.empty() ? "" : " and flags");
}

namespace {

// The flags that take a value and set an option of the run (not the config): false for another. `take(flag)`: the
// value.
bool option_flag(const std::string& arg, bool has_value, const std::string& value,
                 const std::function<std::string(const char*)>& take, CliOptions& o) {
  auto file = [&](const char* flag) {  // an empty file name would silently mean "none" or the default
    std::string f = take(flag);
    if (f.empty()) throw InputError(fmt::format("{}: empty file name", flag));
    return f;
  };
  if (arg == "--config") {
    o.config = file("--config");
  } else if (arg == "--preset") {
    o.preset = take("--preset");
    if (o.preset.empty()) throw InputError("--preset: empty name (dmabench --presets lists them)");
  } else if (std::string* path = file_field(arg, o)) {
    *path = file(arg.c_str());
  } else if (arg == "--backend") {
    o.backend = take("--backend");
    if (!known_backend_choice(o.backend))
      throw InputError(fmt::format("--backend: unknown backend '{}'{}; accepted: {}", o.backend,
                                   did_you_mean(o.backend, backend_choices()), fmt::join(backend_choices(), ", ")));
  } else if (arg == "--devices") {
    o.devices = parse_device_list(take("--devices"), "--devices", /*repeats=*/team::launch_env().size > 1);
  } else if (arg == "--power") {
    o.power = has_value ? value : std::string("auto");
    if (!power::is_source_name(*o.power))
      throw InputError(fmt::format("--power: unknown source '{}'{}; accepted: {}", *o.power,
                                   did_you_mean(*o.power, power::source_names()), fmt::join(power::source_names(), ", ")));
  } else if (arg == "--power-window") {
    o.power_window_s = seconds(take("--power-window"), "--power-window", 0.2, 600);
  } else if (arg == "--case-timeout") {
    o.case_timeout_s = seconds(take("--case-timeout"), "--case-timeout", 0.01, 86400, /*zero_is_none=*/true);
  } else if (arg == "--cpu-choice") {
    o.cpu_choice = take("--cpu-choice");
    if (o.cpu_choice != "quiet" && o.cpu_choice != "off")
      throw InputError(fmt::format("--cpu-choice: unknown mode '{}'{}; accepted: quiet, off", o.cpu_choice,
                                   did_you_mean(o.cpu_choice, {"quiet", "off"})));
  } else if (arg == "--processes" || arg == "--order" || arg == "--order-seed") {
    order_flag(arg, take(arg.c_str()), o);
  } else {
    return false;
  }
  return true;
}

}  // namespace

CliOptions parse_cli(const std::vector<std::string>& args) {
  CliOptions o;
  SizeFlags sizes;
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
    const std::string typed = arg;
    refuse_foreign(typed);
    arg = canonical(arg);
    auto take = [&](const char* flag) {
      if (has_value) return value;
      if (i + 1 >= args.size()) throw InputError(fmt::format("{}: missing value", flag));
      return args[++i];
    };
    if (!option_flag(arg, has_value, value, take, o) &&
        !config_flag(arg, typed, [&] { return take(typed.c_str()); }, o, sizes) && !switch_flag(arg, has_value, o))
      throw InputError(unknown(args[i], typed));
    if (arg == "--set" || arg == "--axis") continue;  // once per key (check_overrides)
    if (std::find(seen.begin(), seen.end(), arg) != seen.end())  // (after the value's own check)
      throw InputError(fmt::format("{}: given twice; give it once", arg));
    seen.push_back(arg);
  }
  add_sizes(sizes, o);
  check_overrides(o);
  check_together(o);
  check_junit_from(o, seen);
  if (!o.preset.empty()) o.config = preset_path(o.preset);
  return o;
}

}  // namespace dmabench
