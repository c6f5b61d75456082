#pragma once
// dmabench's own command-line flags. Google Benchmark's --benchmark_* flags pass through.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/config/config.hpp"
#include "bench/run/gbench_flags.hpp"

namespace dmabench {

struct CliOptions {
  std::string config;                        // --config FILE (or the file of --preset NAME)
  std::string preset;                        // --preset NAME, or NAME as the first argument (bench/config/presets.hpp)
  bool presets = false;                      // --presets: list them
  std::string out = "dmabench-results.json"; // --out FILE
  std::string backend;                       // --backend auto|gpu|host|cuda|hip ("": not given: the config's, else auto)
  std::optional<DeviceSet> devices;          // --devices 0,1,... | all
  bool list = false, features = false, version = false, help = false;
  std::optional<std::string> power;          // --power[=SOURCE]: measure power (overrides the config)
  std::optional<double> power_window_s;      // --power-window SECONDS
  std::string power_trace;                   // --power-trace FILE
  double case_timeout_s = 600;               // --case-timeout SECONDS (0: none)
  std::string packets_dir;                   // --packets DIR: per-case packet dumps (engines that write packets)
  std::string check;                         // --check FILE: expectations or a reference results file
  gbench::Flags benchmark_args;              // --benchmark_* flags, each checked as parse_cli adds it
  int processes = 1;                         // --processes N: the sweep in N fresh processes, merged (bench/levels/levels.hpp)
  std::string order;                         // --order config|random ("": config, random under --processes)
  std::optional<std::uint64_t> order_seed;   // --order-seed S: the random order's seed (none: drawn, recorded)
  std::string cpu_choice = "quiet";          // --cpu-choice quiet|off (bench/measure/cpu_choice.hpp)
  int verbosity = 1;                         // -q 0 (the verdict lines alone), 1 (default: a row per case), -v 2
  std::string junit;                         // --junit FILE: a JUnit XML report, a case = a test
  std::string junit_from;                    // --junit-from CASES.json: --junit FILE of these test cases, no run
  std::string csv;                           // --csv FILE: a row per case, export_csv.py's columns (bench/output/export.hpp)
  std::string md;                            // --md FILE: the same as a markdown table
  bool samples = false;                      // --samples: every timed sample in the record (as the config's "samples")
  bool allow_empty = false;                  // --allow-empty: a run in which no case was ok exits 0, not 6
  // The sweep and sampling flags (-b/-e/-f, --sizes, --patterns, -n, --max-noise ...), --set KEY=VALUE and --axis
  // KEY=V1,V2: keys of the config document, set after it is read (bench/config/config.hpp, apply_overrides).
  std::vector<ConfigOverride> overrides;
};

// Exit code of a run in which no case was ok (every case skipped: no GPU, a broken driver or peer path): it measured
// nothing, and a CI job on such a runner must not go green (issue 52). --allow-empty makes it 0.
inline constexpr int kExitNothingMeasured = 6;

// Set by --processes for its second and later processes: the first one already said that backend auto fell back to
// host ranks (each process still records it in context.backend_choice).
inline constexpr const char* kFallbackSaid = "DMABENCH_FALLBACK_SAID";

// A finished run's exit code: 1 a case failed; 6 no case ok (without --allow-empty); 5 a --check failed; else 0.
int finished_run_code(const CliOptions& o, int ok, int failed, bool checked);
// The closing line of a run in which no case was ok: nothing was measured, and why (the most common skip
// reason, `reason` of `reason_count` skipped cases); "" where some case was ok.
std::string nothing_measured_line(const CliOptions& o, int ok, int skipped, int failed, const std::string& reason,
                                  int reason_count);

// Throws InputError naming the flag and what it accepts.
CliOptions parse_cli(const std::vector<std::string>& args);
std::string usage();
// Where the run's config comes from, for messages: "--config FILE" (" and flags" when flags override it), or
// "the sweep flags" (no config).
std::string config_source(const CliOptions& o);

}  // namespace dmabench
