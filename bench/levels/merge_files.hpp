#pragma once
// `dmabench --merge A.json B.json [C.json ...] --out M.json [--merged-by NAME]`: the results files of N processes of
// one build and config, started any way (mpirun / srun jobs, CI runs, the processes of `--processes N`), merged into
// one levels file (results/SCHEMA.md, "Levels across fresh processes"; levels.hpp, merge). This program is the one
// writer of levels files: scripts/merge_runs.py (`dmabench-results merge`) and `dmabench-results ab` run it.
#include <string>
#include <vector>

namespace dmabench::levels {

// The usage of --merge, for --help.
std::string merge_usage();

// Whether `args` (the command line less the program) asks for --merge.
bool merge_mode(const std::vector<std::string>& args);

// --merge: reads every file (read_results: a results file, or its journal where that holds more; a note on stderr
// says so), refuses a merge of fewer than 2 files, of a file given twice, of a file that is already a levels file, of
// files whose context.config or context.dmabench.git_revision differ; checks --out (never an input, never a run's own
// file; written whole through a temporary and a rename), writes the levels file and says so on stdout. Returns 0;
// throws InputError (exit 2, one line) for every refusal and for an --out that cannot be written.
int merge_files(const std::vector<std::string>& args);

}  // namespace dmabench::levels
