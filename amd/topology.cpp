#include "amd/topology.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <utility>

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

namespace {

// The link properties file `p` as a RecommendedEngines (mask 0 when the kernel does not report one).
RecommendedEngines read_link(const std::filesystem::path& p) {
  RecommendedEngines r;
  std::ifstream f(p);
  std::string key;
  long long value = 0;
  while (f >> key >> value) {
    if (key == "node_from") r.src_node = static_cast<int>(value);
    else if (key == "node_to") r.dst_node = static_cast<int>(value);
    else if (key == "recommended_sdma_engine_id_mask") r.mask = static_cast<std::uint32_t>(value);
  }
  return r;
}

}  // namespace

std::vector<RecommendedEngines> read_recommended_engines(const std::string& root) {
  std::vector<RecommendedEngines> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return out;
  for (const auto& node : std::filesystem::directory_iterator(root, ec)) {
    for (const char* kind : {"io_links", "p2p_links"}) {
      std::error_code lec;
      const auto dir = node.path() / kind;
      if (!std::filesystem::is_directory(dir, lec)) continue;
      for (const auto& link : std::filesystem::directory_iterator(dir, lec)) {
        const RecommendedEngines r = read_link(link.path() / "properties");
        if (r.mask != 0 && r.src_node >= 0 && r.dst_node >= 0) out.push_back(r);
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return std::pair(a.src_node, a.dst_node) < std::pair(b.src_node, b.dst_node); });
  return out;
}

int single_engine(std::uint32_t mask) {
  if (mask == 0 || (mask & (mask - 1)) != 0) return -1;
  int e = 0;
  while (!(mask & 1u)) {
    mask >>= 1;
    ++e;
  }
  return e;
}

std::optional<KfdNode> kfd_node_for_bus(const std::vector<KfdNode>& nodes, const std::string& bus_id) {
  for (const auto& n : nodes)
    if (n.bus_id() == bus_id) return n;
  return std::nullopt;
}

}  // namespace dmabench::amd
