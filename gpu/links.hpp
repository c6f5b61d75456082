#pragma once
// Direct links between GPUs as the machine reports them, for the results context and the check mode's
// `"links": "machine"`: NVLink through NVML (NVIDIA), xGMI through KFD's io links (AMD, amd/topology).
// Vendor-neutral: no vendor header here.
#include <optional>
#include <string>
#include <vector>

namespace dmabench::gpu {

// One GPU's active NVLink links, by what is at their far end.
struct LinkEnds {
  int to_switch = 0;                  // links that end on an NVSwitch
  std::vector<std::string> to_gpus;   // the far GPU's bus id (normalized_bus_id) of each link that ends on a GPU
};

// The links between two GPUs: `links` -1 when the machine cannot tell, 0 when there is none.
struct PairLinks {
  int links = -1;
  std::string kind;  // "nvlink" (direct), "nvswitch" (through switches), "xgmi", "none", or "" when unknown
};

// "00000000:06:00.0" (NVML) or "0000:06:00.0" (the runtimes) -> "0000:06:00.0", lower case.
std::string normalized_bus_id(const std::string& bus_id);

// From GPU a to GPU b (at bus_b): the direct links a has to b; without any, and with both GPUs on NVSwitches,
// the fewer of their switch links (what one GPU can send the other through the switches); else none.
PairLinks nvlink_pair(const LinkEnds& a, const LinkEnds& b, const std::string& bus_b);

// Every GPU's active NVLink ends, in the order of `bus_ids`, read through NVML (loaded at run time); nullopt
// with `why` when NVML is not there or cannot tell.
std::optional<std::vector<LinkEnds>> nvlink_ends(const std::vector<std::string>& bus_ids, std::string& why);

}  // namespace dmabench::gpu
