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
  std::uint32_t device_id = 0;                // PCI device id (0x74a1 MI300X, 0x74a2 MI308X)
  int sdma_engines = -1;                      // num_sdma_engines (host-facing), -1 unknown
  int sdma_xgmi_engines = -1;                 // num_sdma_xgmi_engines, -1 unknown
  std::string bus_id() const;                 // "0000:06:00.0"
};
// GPU nodes of /sys/class/kfd/kfd/topology/nodes (or `root`), CPU nodes left out; empty when absent.
// Their ids are sysfs node ids, which are NOT libhsakmt's node ids: libhsakmt numbers only the nodes it
// supports, skipping a GPU whose render node it cannot open (a container that exposes some GPUs), so its
// node k is the k-th supported sysfs node (ROCm/ROCR-Runtime libhsakmt/src/topology.c:
// topology_sysfs_get_system_props fills map_user_to_sysfs_node_id; topology_sysfs_check_node_supported).
// Match nodes across the two by PCI location (bus_id), never by id.
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
// The single recommended engine of every ordered pair of the GPUs at `bus_ids` (KfdNode::bus_id format):
// out[i][j] for copies from bus_ids[i] to bus_ids[j], -1 where the driver recommends none. sysfs node ids
// are mapped to GPUs through their PCI location (see read_kfd_nodes), so a GPU libhsakmt hides shifts
// nothing.
std::vector<std::vector<int>> recommended_by_bus(const std::vector<std::string>& bus_ids,
                                                 const std::string& root = "/sys/class/kfd/kfd/topology/nodes");

// ---- io links and PCIe atomics --------------------------------------------------------------------------
// One io link as KFD's sysfs and libhsakmt's HsaIoLinkProperties give it (libhsakmt copies the sysfs
// `flags` word into HSA_LINKPROPERTY unchanged: libhsakmt/src/topology.c topology_sysfs_get_iolink_props).
struct IoLink {
  int node_from = -1, node_to = -1;
  std::uint32_t type = 0;   // HSA_IOLINKTYPE: 1 HyperTransport, 2 PCIe, 5 QPI, 11 xGMI
  std::uint32_t flags = 0;  // bit 0 Override (KFD's CRAT_IOLINK_FLAGS_ENABLED), bit 3 NoAtomics64bit
};
inline constexpr std::uint32_t kLinkOverride = 1u << 0, kLinkNoAtomics64 = 1u << 3;
// The io links of sysfs node `node` under `root` (empty when absent).
std::vector<IoLink> read_io_links(int node, const std::string& root = "/sys/class/kfd/kfd/topology/nodes");

// The xGMI links between every ordered pair of the GPUs at `bus_ids` (KfdNode::bus_id format) as KFD lists them:
// out[i][j] counts the io links of type 11 (xGMI) from GPU i's node to GPU j's, matched by PCI location like
// recommended_by_bus; -1 on the diagonal and where either GPU is not among KFD's nodes. KFD writes one io link per
// peer of the XGMI hive, whatever the number of physical links (torvalds/linux drivers/gpu/drm/amd/amdkfd/
// kfd_crat.c: kfd_create_vcrat_image_gpu calls kfd_fill_gpu_xgmi_link_to_gpu once per peer), so a count is 1 for a
// connected pair and 0 for none; an MI300X platform connects every pair by one link (AMD's MI300X platform data
// sheet), where it is exact.
std::vector<std::vector<int>> xgmi_links_by_bus(const std::vector<std::string>& bus_ids,
                                                const std::string& root = "/sys/class/kfd/kfd/topology/nodes");

// Whether an SDMA engine of a GPU can do a 64-bit atomic on system memory (the ATOMIC completion packet),
// decided as ROCr decides its SDMA completion (ROCm/ROCR-Runtime: BlitSdma::Initialize sets
// platform_atomic_support_ from the link GPU -> cpu_agents()[0]; amd_topology.cpp RegisterLinkInfo takes
// PCIe / HyperTransport / QPI / xGMI links as atomic-capable unless Override is set, and then reads
// NoAtomics64bit). KFD sets NoAtomics64bit on the GPU's link when the PCIe root did not grant AtomicOps
// (torvalds/linux drivers/gpu/drm/amd/amdkfd/kfd_topology.c kfd_set_iolink_no_atomics: !pci_atomic_requested).
// Without them ROCr completes with FENCE; so does the sdma engine (sync=auto).
struct HostAtomics {
  bool available = false;
  std::string why;  // what decided it, either way
};
// `links`: the GPU's io links; `cpu_node`: the first CPU node (both in one numbering, sysfs or libhsakmt).
HostAtomics host_atomics(const std::vector<IoLink>& links, int cpu_node);

// ---- usable SDMA engines ----------------------------------------------------------------------------------
// The engines of a GPU that exist: ids 0 .. sdma + xgmi - 1 as KFD counts them, less those a known part fuses
// off while the driver still counts them. MI308X (PCI device id 0x74a2, a 4-XCD MI300X) has 4 physical SDMA
// engines, but IP discovery reports MI300X's layout (2 + 6) and KFD's recommended masks name odd ids; only the
// even ids are backed, and a queue on an odd one hangs (ROCm/mori pull request #693, "fix(sdma): avoid fused-off
// odd SDMA engines on MI308X", open when read on 2026-12-02; its evidence is one machine's driver log; gfx942
// alone cannot tell MI308X from MI300X).
struct UsableEngines {
  std::uint32_t mask = 0;  // bit e: engine e exists and is backed
  std::string note;        // why some counted engines are left out ("" when none is)
};
UsableEngines usable_engines(std::uint32_t device_id, int sdma, int xgmi);

}  // namespace dmabench::amd
