#pragma once
// The AMD kernel driver's (KFD) topology, read from sysfs with no vendor header: engine counts and
// PCI location per GPU node, and the driver's recommended SDMA engines per link.
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

// One link's recommended SDMA engines: KFD's per-link `recommended_sdma_engine_id_mask` (KFD ioctl
// 1.17 and later; SDMA-FACTS.md §2.3): bit e set = engine e of the source GPU is recommended for
// copies from node `src_node` to node `dst_node`. One bit on MI300X in SPX mode with 8 xGMI GPUs,
// the mask of every xGMI engine otherwise.
struct RecommendedEngines {
  int src_node = -1, dst_node = -1;  // KFD node ids (node_from, node_to)
  std::uint32_t mask = 0;
};
// Every link under <root>/<node>/io_links/*/properties and p2p_links/*/properties whose mask is not 0,
// sorted by (src_node, dst_node); empty when the directory or the property (older kernels) is absent.
std::vector<RecommendedEngines> read_recommended_engines(const std::string& root = "/sys/class/kfd/kfd/topology/nodes");
// The engine of a one-bit mask, or -1 (no bit, or several: no single recommendation).
int single_engine(std::uint32_t mask);

}  // namespace dmabench::amd
