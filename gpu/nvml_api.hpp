#pragma once
// NVML, loaded at run time (dlopen) so that nothing links it: one loader for its users (power/nvml.cpp: energy
// and power; gpu/links.cpp: NVLink ends). nvml.h gives the types of what is loaded (decltype) and is needed at
// compile time only; without it (DMABENCH_HAVE_NVML_H unset) this header declares nothing.
#ifdef DMABENCH_HAVE_NVML_H
#include <initializer_list>
#include <string>
#include <utility>

#include <nvml.h>

namespace dmabench::gpu {

struct NvmlApi {
  // typed from nvml.h, so an API change breaks the build rather than a run; null when the library lacks one
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlErrorString) error = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) by_bus_id = nullptr;
  decltype(&nvmlDeviceGetTotalEnergyConsumption) energy = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) power = nullptr;
  decltype(&nvmlDeviceGetNvLinkState) nvlink_state = nullptr;
  decltype(&nvmlDeviceGetNvLinkRemoteDeviceType) nvlink_remote_type = nullptr;
  decltype(&nvmlDeviceGetNvLinkRemotePciInfo_v2) nvlink_remote_pci = nullptr;
  std::string why_not;  // empty: loaded and initialized (init, error and by_bus_id present)

  // Loaded and initialized once per process.
  static const NvmlApi& get();
  // "" when every named function is present, else "libnvidia-ml.so.1 has no <first missing>" (or why_not).
  std::string missing(std::initializer_list<std::pair<bool, const char*>> needed) const;  // {present, name}
};

}  // namespace dmabench::gpu
#endif
