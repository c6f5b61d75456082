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

class ResultsFile {
 public:
  // An empty path keeps the document in memory only.
  ResultsFile(std::string path, nlohmann::json context);
  ~ResultsFile();  // closes the journal; a results file not finish()ed keeps it (the run did not end)
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;
  // Appends the record to the journal (written through at once) and rewrites `<out>` when it is the
  // first record or kRewriteSeconds have passed. Thread-safe.
  void add(nlohmann::json result);
  // Writes `<out>` with every record and deletes the journal; with no record, changes nothing (an existing
  // `<out>` and an earlier run's journal stay).
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

}  // namespace dmabench
