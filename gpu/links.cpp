// NVLink ends through NVML (gpu/nvml_api: loaded at run time, so that nothing links it). Without nvml.h at
// configure time, nvlink_ends says so.
#include "gpu/links.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include <fmt/format.h>

#include "gpu/nvml_api.hpp"

namespace dmabench::gpu {

std::string normalized_bus_id(const std::string& bus_id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) {
    std::string lower = bus_id;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    return lower;
  }
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

PairLinks nvlink_pair(const LinkEnds& a, const LinkEnds& b, const std::string& bus_b) {
  const std::string to = normalized_bus_id(bus_b);
  const auto direct = std::count_if(a.to_gpus.begin(), a.to_gpus.end(), [&](const std::string& g) { return normalized_bus_id(g) == to; });
  if (direct > 0) return {static_cast<int>(direct), "nvlink"};
  if (a.to_switch > 0 && b.to_switch > 0) return {std::min(a.to_switch, b.to_switch), "nvswitch"};
  return {0, "none"};
}

#ifdef DMABENCH_HAVE_NVML_H
namespace {

// One GPU's active links. A link NVML does not support (NVML_ERROR_NOT_SUPPORTED, _INVALID_ARGUMENT past
// the GPU's last link) or that is down counts for nothing; any other error is the answer "cannot tell".
std::optional<LinkEnds> ends_of(const NvmlApi& api, nvmlDevice_t d, std::string& why) {
  LinkEnds e;
  for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
    nvmlEnableState_t active = NVML_FEATURE_DISABLED;
    const nvmlReturn_t r = api.nvlink_state(d, link, &active);
    if (r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_INVALID_ARGUMENT) continue;
    if (r != NVML_SUCCESS) {
      why = fmt::format("nvmlDeviceGetNvLinkState(link {}): {}", link, api.error(r));
      return std::nullopt;
    }
    if (active != NVML_FEATURE_ENABLED) continue;
    nvmlIntNvLinkDeviceType_t type = NVML_NVLINK_DEVICE_TYPE_UNKNOWN;
    nvmlReturn_t t = api.nvlink_remote_type(d, link, &type);
    if (t != NVML_SUCCESS) {
      why = fmt::format("nvmlDeviceGetNvLinkRemoteDeviceType(link {}): {}", link, api.error(t));
      return std::nullopt;
    }
    if (type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
      ++e.to_switch;
    } else if (type == NVML_NVLINK_DEVICE_TYPE_GPU) {
      nvmlPciInfo_t pci{};
      t = api.nvlink_remote_pci(d, link, &pci);
      if (t != NVML_SUCCESS) {
        why = fmt::format("nvmlDeviceGetNvLinkRemotePciInfo_v2(link {}): {}", link, api.error(t));
        return std::nullopt;
      }
      e.to_gpus.push_back(normalized_bus_id(pci.busId));
    }
  }
  return e;
}

}  // namespace

std::optional<std::vector<LinkEnds>> nvlink_ends(const std::vector<std::string>& bus_ids, std::string& why) {
  const NvmlApi& api = NvmlApi::get();
  why = api.missing({{api.nvlink_state != nullptr, "nvmlDeviceGetNvLinkState"},
                     {api.nvlink_remote_type != nullptr, "nvmlDeviceGetNvLinkRemoteDeviceType"},
                     {api.nvlink_remote_pci != nullptr, "nvmlDeviceGetNvLinkRemotePciInfo_v2"}});
  if (!why.empty()) return std::nullopt;
  std::vector<LinkEnds> out;
  for (const auto& bus : bus_ids) {
    nvmlDevice_t d{};
    const nvmlReturn_t r = api.by_bus_id(bus.c_str(), &d);
    if (r != NVML_SUCCESS) {
      why = fmt::format("nvmlDeviceGetHandleByPciBusId({}): {}", bus, api.error(r));
      return std::nullopt;
    }
    auto e = ends_of(api, d, why);
    if (!e) return std::nullopt;
    out.push_back(std::move(*e));
  }
  return out;
}

#else

std::optional<std::vector<LinkEnds>> nvlink_ends(const std::vector<std::string>&, std::string& why) {
  why = "this build has no NVML support (nvml.h was not found at configure time)";
  return std::nullopt;
}

#endif

}  // namespace dmabench::gpu
