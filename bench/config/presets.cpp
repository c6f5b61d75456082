// Presets: the shipped configs by name (bench/config/presets.hpp).
#include "bench/config/presets.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "core/errors.hpp"
#include "core/exe_dir.hpp"
#include "core/suggest.hpp"

#ifndef DMABENCH_CONFIGS_DIR
#define DMABENCH_CONFIGS_DIR ""
#endif

namespace dmabench {
namespace fs = std::filesystem;
namespace {

std::vector<std::string> candidates() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("DMABENCH_CONFIGS"); env && *env) return {env};  // set: the only place
  if (const fs::path bin = exe_dir(); !bin.empty()) {
    dirs.push_back((bin / ".." / "share" / "dmabench" / "configs").lexically_normal().string());
    dirs.push_back((bin / ".." / "configs").lexically_normal().string());
  }
  if (*DMABENCH_CONFIGS_DIR) dirs.emplace_back(DMABENCH_CONFIGS_DIR);
  return dirs;
}

std::string first_sentence(std::string d) {
  const auto stop = d.find(". ");
  if (stop != std::string::npos) d = d.substr(0, stop + 1);
  if (d.size() > 110) d = d.substr(0, 107) + "...";
  return d;
}

std::string description_of(const fs::path& file) {
  std::ifstream in(file);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || !doc.contains("description") || !doc["description"].is_string()) return "";
  return first_sentence(doc["description"].get<std::string>());
}

bool valid_name(const std::string& n) {
  return !n.empty() && n.size() <= 64 &&
         std::all_of(n.begin(), n.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_'; });
}

}  // namespace

std::string presets_dir(std::vector<std::string>* looked_at) {
  for (const std::string& d : candidates()) {
    if (looked_at) looked_at->push_back(d);
    std::error_code ec;
    if (fs::is_directory(d, ec) && fs::exists(fs::path(d) / "quick.json", ec)) return d;
  }
  return "";
}

namespace {

// The presets of one configs directory (none where dir is empty): each caller resolves the directory once.
std::vector<Preset> presets_in(const std::string& dir) {
  std::vector<Preset> out;
  if (dir.empty()) return out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const fs::path p = e.path();
    if (p.extension() != ".json" || !e.is_regular_file(ec) || !valid_name(p.stem().string())) continue;
    out.push_back({p.stem().string(), p.string(), description_of(p)});
  }
  std::sort(out.begin(), out.end(), [](const Preset& a, const Preset& b) { return a.name < b.name; });
  return out;
}

}  // namespace

std::vector<Preset> list_presets() { return presets_in(presets_dir()); }

std::string preset_path(const std::string& name) {
  std::vector<std::string> looked;
  const std::string dir = presets_dir(&looked);
  if (dir.empty())
    throw InputError(fmt::format("preset '{}': no configs directory (looked in {}; set DMABENCH_CONFIGS to one, or give "
                                 "--config FILE)",
                                 name, fmt::join(looked, ", ")));
  std::vector<std::string> names;
  for (const Preset& p : presets_in(dir)) {
    if (p.name == name) return p.path;
    names.push_back(p.name);
  }
  throw InputError(fmt::format("unknown preset '{}'{}; the presets ({}) are {} (dmabench --presets describes them)", name,
                               did_you_mean(name, names), dir, fmt::join(names, ", ")));
}

std::string presets_text() {
  const std::string dir = presets_dir();
  const auto presets = presets_in(dir);
  if (presets.empty()) return "no presets: no configs directory found (set DMABENCH_CONFIGS)\n";
  std::string out = fmt::format("presets ({}): dmabench NAME [flags], or --preset NAME\n", dir);
  for (const Preset& p : presets) out += fmt::format("  {:<28} {}\n", p.name, p.description);
  return out;
}

}  // namespace dmabench
