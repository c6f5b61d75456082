// dmabench: command-line entry point. Exit codes: docs/user-guide.md "Exit codes" (0 ok, 1 a case failed, 2 bad input, 3 fatal,
// 4 case timeout, 130/143 interrupted).
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "bench/cli.hpp"
#include "bench/features.hpp"
#include "bench/levels/merge_files.hpp"
#include "bench/config/presets.hpp"
#include "bench/run/gbench_flags.hpp"
#include "bench/output/console.hpp"
#include "bench/output/junit_from.hpp"
#include "bench/output/report.hpp"
#include "core/interrupt.hpp"
#include "core/errors.hpp"
#include "core/quote.hpp"
#include "core/revision.hpp"
#include "bench/runner.hpp"
#include "team/team.hpp"
#include "version.hpp"

namespace {

// --help, --presets, --version and --junit-from CASES --junit FILE (JUnit XML of given test cases: dmabench-results'
// verdicts): their exit code, or nullopt where the options ask for a run.
std::optional<int> answer_without_a_run(const dmabench::CliOptions& options) {
  if (options.help) {
    dmabench::console::say("{}", dmabench::usage());
    return 0;
  }
  if (options.presets) {
    dmabench::console::say("{}", dmabench::presets_text());
    return 0;
  }
  if (options.version) {
    dmabench::console::say("dmabench {} (git {})\n", dmabench::kVersion, dmabench::git_revision());
    return 0;
  }
  if (!options.junit_from.empty()) return dmabench::junit::write_from(options.junit_from, options.junit);
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  dmabench::console::keep_standard_streams();  // before anything opens a file
  dmabench::keep_start_environment();  // context.environment: as given, before the setenv below
  // Load every GPU kernel at start: with lazy loading, a kernel that spins on a flag written by a
  // not-yet-loaded kernel on another stream can hang forever. A user's explicit choice wins.
  setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);

  // SIGINT, SIGTERM and SIGPIPE are handled from here to the end: no signal lands where the run holds
  // its lock and nobody listens, and a console that is gone does not end the run (not restored: a signal
  // while the process exits changes nothing either).
  const dmabench::interrupt::Guard signals(/*restore=*/false);
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.empty()) {  // a first run: what dmabench found here and the command of a first sweep, not an error
      dmabench::print_first_run(argc > 0 ? argv[0] : "dmabench");
      return 0;
    }
    // --merge A.json B.json ... --out M.json: a mode of its own, with its own arguments (bench/levels/merge_files.hpp)
    if (dmabench::levels::merge_mode(args)) return dmabench::levels::merge_files(args);
    const dmabench::CliOptions options = dmabench::parse_cli(args);
    if (const auto rc = answer_without_a_run(options)) return *rc;
    // parse_cli checked the --benchmark_* flags before Google Benchmark sees them (gbench::Flags): it prints its usage
    // and exits 0 on some bad values. stdout carries Google Benchmark's JSON: dmabench's own messages go to stderr
    dmabench::console::messages_to_stderr(options.benchmark_args.value(dmabench::gbench::Flag::format) == "json");
    // Google Benchmark sees only its own flags, less those dmabench implements around it (Flags::library_args).
    std::vector<char*> gb_argv = {argv[0]};
    std::vector<std::string> gb_args = options.benchmark_args.library_args();
    for (auto& a : gb_args) gb_argv.push_back(a.data());
    int gb_argc = static_cast<int>(gb_argv.size());
    gb_argv.push_back(nullptr);
    benchmark::Initialize(&gb_argc, gb_argv.data());
    if (benchmark::ReportUnrecognizedArguments(gb_argc, gb_argv.data()))
      throw dmabench::InputError("unrecognized --benchmark_* flag (see Google Benchmark's --help)");
    std::vector<std::string> command_line = {argv[0]};
    command_line.insert(command_line.end(), args.begin(), args.end());
    const int rc = dmabench::run(options, command_line);
    benchmark::Shutdown();
    dmabench::team::finish(/*clean=*/true);
    return rc;
  } catch (const dmabench::interrupt::Stopped& e) {  // a signal while the cases were being made: nothing ran
    dmabench::console::warn("\ndmabench: interrupted {}; nothing was run\n", e.what());
    dmabench::team::finish(/*clean=*/true);
    return dmabench::interrupt::exit_code();
  } catch (const dmabench::InputError& e) {
    // bad input: every process of a multi-process run found it at the same point; rank 0 says it
    // one line a person reads: whatever a file or an argument held, quoted with a cap (core/quote.hpp)
    if (dmabench::team::world().rank() == 0) dmabench::console::warn("dmabench: error: {}\n", dmabench::one_line(e.what()));
    dmabench::team::finish(/*clean=*/true);
    return 2;
  } catch (const std::exception& e) {
    // the other processes may be waiting in a collective: no MPI_Finalize, the launcher ends the job
    dmabench::console::warn("dmabench: fatal{}: {}\n",
               dmabench::team::world().multi() ? " (rank " + std::to_string(dmabench::team::world().rank()) + ")" : "",
               dmabench::one_line(e.what()));
    dmabench::team::finish(/*clean=*/false);
    return 3;
  }
}
