#include "amd/topology.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

namespace dmabench::amd {

// ---- topology ----------------------------------------------------------------------------------------
std::string KfdNode::bus_id() const {
  return fmt::format("{:04x}:{:02x}:{:02x}.{}", domain, location_id >> 8, (location_id >> 3) & 0x1f, location_id & 7);
}

std::vector<KfdNode> read_kfd_nodes(const std::string& root) {
  std::vector<KfdNode> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    std::ifstream f(entry.path() / "properties");
    if (!f) continue;
    KfdNode n;
    try {
      n.node = std::stoi(entry.path().filename().string());
    } catch (...) {
      continue;
    }
    bool gpu = false;
    std::string key;
    long long value = 0;
    while (f >> key >> value) {
      if (key == "simd_count") gpu = value > 0;
      else if (key == "domain") n.domain = static_cast<std::uint32_t>(value);
      else if (key == "location_id") n.location_id = static_cast<std::uint32_t>(value);
      else if (key == "gfx_target_version") n.gfx_target_version = static_cast<std::uint32_t>(value);
      else if (key == "num_sdma_engines") n.sdma_engines = static_cast<int>(value);
      else if (key == "num_sdma_xgmi_engines") n.sdma_xgmi_engines = static_cast<int>(value);
    }
    if (gpu) out.push_back(n);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.node < b.node; });
  return out;
}

std::optional<KfdNode> kfd_node_for_bus(const std::vector<KfdNode>& nodes, const std::string& bus_id) {
  for (const auto& n : nodes)
    if (n.bus_id() == bus_id) return n;
  return std::nullopt;
}

}  // namespace dmabench::amd
