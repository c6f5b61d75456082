#pragma once
// The program: backend choice, --features, --list, and the sweep run through Google Benchmark
// (one registered benchmark per case, manual time, registered in batches), every finished case
// journaled at once and the results file written whole at the end (bench/output/report.hpp).
#include "bench/cli.hpp"

namespace dmabench {

// Runs what the options ask for and returns the exit code (0, or 1 when a case failed).
// Google Benchmark must already be initialised with options.benchmark_args.library_args().
// Throws InputError for bad input (exit code 2).
int run(const CliOptions& options, const std::vector<std::string>& command_line);

}  // namespace dmabench
