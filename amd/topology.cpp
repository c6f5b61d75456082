#include "amd/topology.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>

#include <fmt/format.h>

namespace dmabench::amd {

// ---- topology ----------------------------------------------------------------------------------------
std::string KfdNode::bus_id() const {
  return fmt::format("{:04x}:{:02x}:{:02x}.{}", domain, location_id >> 8, (location_id >> 3) & 0x1f, location_id & 7);
}

namespace {

using Properties = std::map<std::string, long long>;

// The `key value` lines of a KFD properties file (empty when unreadable).
Properties properties(const std::filesystem::path& file) {
  Properties out;
  std::ifstream f(file);
  std::string key;
  long long value = 0;
  while (f >> key >> value) out[key] = value;
  return out;
}

long long get(const Properties& p, const char* key, long long otherwise) {
  const auto it = p.find(key);
  return it == p.end() ? otherwise : it->second;
}

// Every node directory under `root` with a numeric name and a readable properties file, by node id.
std::map<int, Properties> node_properties(const std::string& root) {
  std::map<int, Properties> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.size() > 6 || name.find_first_not_of("0123456789") != std::string::npos) continue;
    Properties p = properties(entry.path() / "properties");
    if (!p.empty()) out.emplace(std::stoi(name), std::move(p));
  }
  return out;
}

}  // namespace

std::vector<KfdNode> read_kfd_nodes(const std::string& root) {
  std::vector<KfdNode> out;
  for (const auto& [id, p] : node_properties(root)) {
    if (get(p, "simd_count", 0) <= 0) continue;
    KfdNode n;
    n.node = id;
    n.domain = static_cast<std::uint32_t>(get(p, "domain", 0));
    n.location_id = static_cast<std::uint32_t>(get(p, "location_id", 0));
    n.gfx_target_version = static_cast<std::uint32_t>(get(p, "gfx_target_version", 0));
    n.device_id = static_cast<std::uint32_t>(get(p, "device_id", 0));
    n.sdma_engines = static_cast<int>(get(p, "num_sdma_engines", -1));
    n.sdma_xgmi_engines = static_cast<int>(get(p, "num_sdma_xgmi_engines", -1));
    out.push_back(n);
  }
  return out;
}

namespace {

// The link properties file `p` as a RecommendedEngines (mask 0 when the kernel does not report one).
RecommendedEngines read_link(const std::filesystem::path& p) {
  const Properties l = properties(p);
  return RecommendedEngines{static_cast<int>(get(l, "node_from", -1)), static_cast<int>(get(l, "node_to", -1)),
                            static_cast<std::uint32_t>(get(l, "recommended_sdma_engine_id_mask", 0))};
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

namespace {

// The sysfs node id of each GPU at `bus_ids` -> its index there, matched by PCI location (libhsakmt's node ids
// differ: read_kfd_nodes); a GPU KFD does not list is left out.
std::map<int, std::size_t> gpu_nodes(const std::vector<std::string>& bus_ids, const std::string& root) {
  std::map<int, std::size_t> index_of_node;
  for (const KfdNode& node : read_kfd_nodes(root))
    for (std::size_t i = 0; i < bus_ids.size(); ++i)
      if (node.bus_id() == bus_ids[i]) index_of_node[node.node] = i;
  return index_of_node;
}

}  // namespace

std::vector<std::vector<int>> recommended_by_bus(const std::vector<std::string>& bus_ids, const std::string& root) {
  const std::size_t n = bus_ids.size();
  std::vector<std::vector<int>> out(n, std::vector<int>(n, -1));
  const std::map<int, std::size_t> index_of_node = gpu_nodes(bus_ids, root);
  for (const auto& link : read_recommended_engines(root)) {
    const auto s = index_of_node.find(link.src_node), d = index_of_node.find(link.dst_node);
    if (s == index_of_node.end() || d == index_of_node.end() || s->second == d->second) continue;
    out[s->second][d->second] = single_engine(link.mask);
  }
  return out;
}

std::vector<IoLink> read_io_links(int node, const std::string& root) {
  std::vector<IoLink> out;
  std::error_code ec;
  const auto dir = std::filesystem::path(root) / std::to_string(node) / "io_links";
  if (!std::filesystem::is_directory(dir, ec)) return out;
  for (const auto& link : std::filesystem::directory_iterator(dir, ec)) {
    const Properties p = properties(link.path() / "properties");
    const IoLink l{static_cast<int>(get(p, "node_from", -1)), static_cast<int>(get(p, "node_to", -1)),
                   static_cast<std::uint32_t>(get(p, "type", 0)), static_cast<std::uint32_t>(get(p, "flags", 0))};
    if (l.node_to >= 0) out.push_back(l);
  }
  return out;
}

std::vector<std::vector<int>> xgmi_links_by_bus(const std::vector<std::string>& bus_ids, const std::string& root) {
  const std::size_t n = bus_ids.size();
  std::vector<std::vector<int>> out(n, std::vector<int>(n, -1));
  const std::map<int, std::size_t> index_of_node = gpu_nodes(bus_ids, root);
  for (const auto& [node, i] : index_of_node) {
    for (const auto& [other, j] : index_of_node)
      if (i != j) out[i][j] = 0;
    for (const IoLink& l : read_io_links(node, root)) {
      const auto to = index_of_node.find(l.node_to);
      if (l.type == 11 && to != index_of_node.end() && to->second != i) ++out[i][to->second];
    }
  }
  return out;
}

HostAtomics host_atomics(const std::vector<IoLink>& links, int cpu_node) {
  if (cpu_node < 0) return {false, "KFD reports no CPU node"};
  for (const IoLink& l : links) {
    if (l.node_to != cpu_node) continue;
    const bool typed = l.type == 1 || l.type == 2 || l.type == 5 || l.type == 11;  // HT, PCIe, QPI, xGMI
    if (l.flags & kLinkOverride) {
      if (l.flags & kLinkNoAtomics64)
        return {false, fmt::format("its link to CPU node {} has the io-link flag NoAtomics64bit (flags 0x{:x}: the PCIe "
                                   "root did not grant AtomicOps)", cpu_node, l.flags)};
      return {true, fmt::format("its link to CPU node {} supports 64-bit atomics (flags 0x{:x})", cpu_node, l.flags)};
    }
    if (typed) return {true, fmt::format("its link to CPU node {} is of type {}, atomic-capable by default", cpu_node, l.type)};
    return {false, fmt::format("its link to CPU node {} is of type {}, which ROCr does not take as atomic-capable", cpu_node, l.type)};
  }
  return {false, fmt::format("it has no io link to CPU node {}", cpu_node)};
}

UsableEngines usable_engines(std::uint32_t device_id, int sdma, int xgmi) {
  UsableEngines u;
  const int count = std::clamp(std::max(0, sdma) + std::max(0, xgmi), 0, 32);
  u.mask = count == 32 ? ~std::uint32_t{0} : (std::uint32_t{1} << count) - 1;
  if (device_id == 0x74a2) {  // MI308X: ROCm/mori PR #693
    u.mask &= 0x55555555u;
    u.note = "MI308X (PCI device id 0x74a2): only the even engine ids are backed by a physical SDMA engine; the odd ones "
             "KFD counts are fused off, and a queue on one hangs (ROCm/mori PR #693)";
  }
  return u;
}

std::optional<KfdNode> kfd_node_for_bus(const std::vector<KfdNode>& nodes, const std::string& bus_id) {
  for (const auto& n : nodes)
    if (n.bus_id() == bus_id) return n;
  return std::nullopt;
}

}  // namespace dmabench::amd
