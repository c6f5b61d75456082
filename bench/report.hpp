#pragma once
// The results document (results/SCHEMA.md): schema, context and one record per case, rewritten
// atomically after every case so an interrupted sweep keeps what it measured.
#include <string>

#include <nlohmann/json.hpp>

#include "core/json_file.hpp"  // write_json_atomically

namespace dmabench {

inline constexpr const char* kSchemaVersion = "dmabench/1";

class ResultsFile {
 public:
  // An empty path keeps the document in memory only.
  ResultsFile(std::string path, nlohmann::json context);
  void add(nlohmann::json result);  // appends and rewrites the file
  void write() const;
  const nlohmann::json& document() const { return doc_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  nlohmann::json doc_;
};

// Date (UTC, ISO 8601), host name and OS: the machine part of the context.
// The CPUs this process may run on, as a list of ranges ("0-31", "2,5-7"), or "unknown".
std::string cpu_affinity();
nlohmann::json host_context();

}  // namespace dmabench
