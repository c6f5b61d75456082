#include "gpu/nvml_api.hpp"

#ifdef DMABENCH_HAVE_NVML_H
#include <dlfcn.h>

#include <type_traits>

#include <fmt/format.h>

namespace dmabench::gpu {
namespace {

NvmlApi load() {
  NvmlApi n;
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    n.why_not = fmt::format("cannot load libnvidia-ml.so.1 ({})", dlerror());
    return n;
  }
  auto sym = [&](auto& fn, const char* s) { fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, s)); };
  sym(n.init, "nvmlInit_v2");
  sym(n.error, "nvmlErrorString");
  sym(n.by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
  sym(n.energy, "nvmlDeviceGetTotalEnergyConsumption");
  sym(n.power, "nvmlDeviceGetPowerUsage");
  sym(n.nvlink_state, "nvmlDeviceGetNvLinkState");
  sym(n.nvlink_remote_type, "nvmlDeviceGetNvLinkRemoteDeviceType");
  sym(n.nvlink_remote_pci, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  n.why_not = n.missing({{n.init != nullptr, "nvmlInit_v2"},
                         {n.error != nullptr, "nvmlErrorString"},
                         {n.by_bus_id != nullptr, "nvmlDeviceGetHandleByPciBusId_v2"}});
  if (n.why_not.empty()) {
    const nvmlReturn_t r = n.init();
    if (r != NVML_SUCCESS) n.why_not = fmt::format("nvmlInit: {}", n.error(r));
  }
  return n;
}

}  // namespace

const NvmlApi& NvmlApi::get() {
  static const NvmlApi n = load();
  return n;
}

std::string NvmlApi::missing(std::initializer_list<std::pair<bool, const char*>> needed) const {
  if (!why_not.empty()) return why_not;
  for (const auto& [present, name] : needed)
    if (!present) return fmt::format("libnvidia-ml.so.1 has no {}", name);
  return "";
}

}  // namespace dmabench::gpu
#endif
