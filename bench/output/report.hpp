#pragma once
// The results document (results/SCHEMA.md): schema, context and one record per case. Each record is
// appended at once to the journal `<out>.journal` (JSON Lines: a header with the context, then one
// record per line), so a killed sweep keeps every finished case at a cost per case that does not grow
// with the cases already done; `<out>` itself is rewritten atomically with the first record, then at
// most every kRewriteSeconds, and completely by finish(), which then deletes the journal.
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json_file.hpp"  // write_json_atomically, dump_json

namespace dmabench {

inline constexpr const char* kSchemaVersion = "dmabench/1";

inline constexpr const char* kJournalSchema = "dmabench-journal/1";
inline constexpr double kRewriteSeconds = 2.0;

// A UTC time in ISO 8601 with milliseconds: 2026-12-02T08:26:46.123Z.
std::string utc_iso8601_ms(std::chrono::system_clock::time_point t);

// When a run started: its wall-clock time (context.started_at) and its steady-clock time (context.wall_s).
struct RunStart {
  std::string started_at;
  std::chrono::steady_clock::time_point steady;
  static RunStart now() { return {utc_iso8601_ms(std::chrono::system_clock::now()), std::chrono::steady_clock::now()}; }
};

class ResultsFile {
 public:
  // An empty path keeps the document in memory only. The context gets `started_at` (the file's and the journal's);
  // finish() adds `finished_at` and `wall_s` (seconds since `start` on the steady clock).
  ResultsFile(std::string path, nlohmann::json context, const RunStart& start = RunStart::now());
  ~ResultsFile();  // closes the journal; a results file not finish()ed keeps it (the run did not end)
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;
  // Appends the record to the journal (written through at once) and rewrites `<out>` when it is the
  // first record or kRewriteSeconds have passed. Thread-safe.
  void add(nlohmann::json result);
  // Writes `<out>` with every record, the context's finished_at and wall_s, and deletes the journal; with no
  // record, changes nothing (an existing `<out>` and an earlier run's journal stay).
  void finish();
  std::size_t records() const { return records_.size(); }
  const std::string& path() const { return path_; }
  std::string journal_path() const { return path_ + ".journal"; }

 private:
  void open_journal();
  void append_line(const std::string& line);
  void write();

  std::string path_;
  nlohmann::json context_;
  std::chrono::steady_clock::time_point started_;
  // Records as their compact JSON text: a record is serialized once (for the journal) and kept as
  // text, which costs less per case than a growing tree of JSON objects. The file holds one per line.
  std::vector<std::string> records_;
  std::mutex mu_;
  std::FILE* journal_ = nullptr;
  std::chrono::steady_clock::time_point written_at_{};
};

// Date (UTC, ISO 8601), host name and OS: the machine part of the context.
// The CPUs this process may run on, as a list of ranges ("0-31", "2,5-7"), or "unknown".
std::string cpu_affinity();
nlohmann::json host_context();
// The environment variables that steer the communication libraries and GPU runtimes (results/SCHEMA.md,
// `context.environment`): every variable whose name starts with one of kEnvironmentPrefixes, name -> value
// (bytes that are not UTF-8 escaped), sorted by name: as keep_start_environment() saw them, else as they are now.
inline constexpr const char* kEnvironmentPrefixes[] = {"NCCL_", "RCCL_", "CUDA_", "HIP_", "HSA_", "ROCR_", "AMD_",
                                                       "GPU_", "UCX_", "OMPI_MCA_", "DMABENCH_"};
nlohmann::json environment_context();
// Keeps those variables as the process was given them, before dmabench sets its own (CUDA_MODULE_LOADING, NCCL's
// debug log): main() calls it first.
void keep_start_environment();

}  // namespace dmabench
