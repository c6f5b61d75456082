#pragma once
// The sweep (docs/design.md, "How a case runs"): the selected cases in order, each run once through run_case()
// (Google Benchmark its sampler) and recorded as it ends (bench/sweep/recorder.hpp), under the watchdog and, in a
// multi-process run, the seal. What the runner (bench/runner.cpp) needs of it; the machinery is in sweep.cpp and
// resources.cpp.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/cases/cases.hpp"
#include "bench/cli.hpp"
#include "bench/measure/cpu_choice.hpp"
#include "bench/output/out_file.hpp"
#include "bench/power_setup.hpp"
#include "bench/sweep/recorder.hpp"
#include "engines/backend.hpp"

namespace dmabench::sweep {

struct Outcome {
  std::size_t selected = 0;  // the cases --benchmark_filter selects
  bool stopped = false;      // a signal stopped the sweep before its last case
  bool sealed = false;       // the file was finished on a signal (SealOnSignal)
};

// The sweep under the watchdog (and, in a multi-process run, the seal); every finished case in the file
// whatever stops it.
Outcome sweep_all(const CliOptions& options, const std::vector<Case>& cases, Backend& backend, RunPower& power,
                  Recorder& recorder, const OutLock* lock, const std::string& benchmark_out,
                  std::optional<std::uint64_t> shuffle, measure::CpuChoice* cpu_choice,
                  const std::function<void(std::size_t)>& on_seal);

// The cases --benchmark_filter selects; none is bad input (nothing would be recorded).
std::vector<const Case*> selected_cases(const CliOptions& options, const std::vector<Case>& cases);

// --list (and --benchmark_list_tests): each case's name, "#   will skip: REASON" under those that will; a count.
void print_list(const std::vector<Case>& cases, Backend& backend, std::size_t expanded);

// The file of a case's packet dump in --packets DIR: <case name, '/' and other odd characters as '_'>.json.
std::string packet_file_name(const Case& c);

// --cpu-choice quiet: the sampling thread's CPU chooser, its first survey done (the context records it); null: off.
// Processes of one node (mpirun, srun) each survey their own share of the allowed CPUs.
std::unique_ptr<measure::CpuChoice> make_cpu_choice(const CliOptions& options);

}  // namespace dmabench::sweep
