#pragma once
// Writing a JSON document so that readers never see a torn file: the results file (bench/report)
// and the power trace (power/meter) both write through this.
#include <string>

#include <nlohmann/json.hpp>

namespace dmabench {

// Writes `doc` to `path` through a temporary file in the same directory and rename(2), so readers
// see the old or the new file, never a torn one. Creates missing parent directories.
// Throws std::runtime_error naming the path on failure.
void write_json_atomically(const std::string& path, const nlohmann::json& doc);
// The same for text that is already a JSON document.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace dmabench
