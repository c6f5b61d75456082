#pragma once
// The AMD kernel driver's (KFD) topology, read from sysfs with no vendor header: engine counts and
// PCI location per GPU node.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dmabench::amd {

struct KfdNode {
  int node = -1;
  std::uint32_t domain = 0, location_id = 0;  // location_id = (bus << 8) | (device << 3) | function
  std::uint32_t gfx_target_version = 0;       // e.g. 90402 (gfx942)
  int sdma_engines = -1;                      // num_sdma_engines (host-facing), -1 unknown
  int sdma_xgmi_engines = -1;                 // num_sdma_xgmi_engines, -1 unknown
  std::string bus_id() const;                 // "0000:06:00.0"
};
// GPU nodes of /sys/class/kfd/kfd/topology/nodes (or `root`), CPU nodes left out; empty when absent.
std::vector<KfdNode> read_kfd_nodes(const std::string& root = "/sys/class/kfd/kfd/topology/nodes");
std::optional<KfdNode> kfd_node_for_bus(const std::vector<KfdNode>& nodes, const std::string& bus_id);

}  // namespace dmabench::amd
