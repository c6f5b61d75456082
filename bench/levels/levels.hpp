#pragma once
// Levels across fresh processes (results/SCHEMA.md, "Levels across fresh processes"; docs/methodology.md, "What
// each figure covers"). A process is one draw of the machine's state: a launch-bound case's level moves from one
// process to the next by more than its own interval says. `--processes N` runs the sweep in N fresh processes one
// after another, each with its cases in its own random order, keeps their results files in `<out>.processes/`, and
// writes --out as a levels file: per case the median over processes with the between-process interval.
// `dmabench --merge` (merge_files.hpp) merges the files of processes started otherwise the same way: this merge is
// the one writer of levels files (scripts/merge_runs.py and `dmabench-results ab` run the program).
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"

namespace dmabench::levels {

// What the merge knows of a process besides its results document.
struct ProcessFile {
  std::string file;              // its results file
  std::optional<int> exit_code;  // nullopt: not known (a file made elsewhere)
};

// The levels document of the results documents of N processes of one config (checked by results_file.hpp's
// check_results), in process order (`docs` and `files` alike): records matched by their case key (bench/run/record.hpp
// case_key, as compare.py and history.py match them; a case a file holds twice: its n-th record with the others'
// n-th), in case_index order (without one: the order first seen); the context is the first process's, with
// context.levels (`settings`: processes asked, order, order_seed; `merged`, `merged_by` and every process's part of
// its context) and the merged context.calibration. Throws std::invalid_argument when `docs` is empty.
nlohmann::json merge(const std::vector<nlohmann::json>& docs, const std::vector<ProcessFile>& files,
                     const std::string& merged_by, const nlohmann::json& settings);

// A case in one process: its record (nullptr where the process has none) and its place in that process's run order.
struct InProcess {
  const nlohmann::json* record = nullptr;
  std::size_t position = 0;
};
// The levels record of one case from its record in each process, in process order.
nlohmann::json merge_case(const std::vector<InProcess>& in);

// --processes N: the sweep in N fresh processes of this program (its other arguments as given, --out and the
// order set per process), then the levels file at --out and --check on its records. The exit code of the run
// (docs/user-guide.md, "Exit codes"): 2 when the first process found bad input, 3/4/130/143 when a process ended
// so (the levels file then holds what the processes finished), else 1 for a failed case, 5 for a failed check.
int run_processes(const CliOptions& options, const std::vector<std::string>& args);

}  // namespace dmabench::levels
