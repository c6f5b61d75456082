// NVIDIA GPUs through NVML: nvmlDeviceGetTotalEnergyConsumption (mJ) and nvmlDeviceGetPowerUsage
// (mW). The library is loaded at run time by gpu/nvml_api (dlopen), so a build never depends on it;
// nvml.h is needed at compile time only.
// vendor-header exception: outside gpu/, this file uses gpu/nvml_api.hpp, which includes nvml.h for the types of
// the functions it loads with dlsym (decltype) and nothing else; nothing links NVML (tests/check_vendor_includes.cmake).
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "power/source.hpp"

#ifdef DMABENCH_HAVE_NVML_H
#include "gpu/nvml_api.hpp"

namespace dmabench::power {
namespace {

using Nvml = gpu::NvmlApi;

class NvmlSource final : public Source {
 public:
  explicit NvmlSource(std::vector<std::pair<std::string, nvmlDevice_t>> devices) : devices_(std::move(devices)) {}
  std::string name() const override { return "nvml"; }
  int channels() const override { return static_cast<int>(devices_.size()); }
  std::string channel_name(int c) const override { return "GPU " + devices_[c].first; }
  double energy_J(int c) override {
    unsigned long long mj = 0;
    const nvmlReturn_t r = Nvml::get().energy(devices_[c].second, &mj);
    if (r != NVML_SUCCESS) throw std::runtime_error(fmt::format("nvmlDeviceGetTotalEnergyConsumption: {}", Nvml::get().error(r)));
    return static_cast<double>(mj) * 1e-3;
  }
  std::optional<double> power_W(int c) override {
    unsigned int mw = 0;
    const nvmlReturn_t r = Nvml::get().power(devices_[c].second, &mw);
    if (r != NVML_SUCCESS) throw std::runtime_error(fmt::format("nvmlDeviceGetPowerUsage: {}", Nvml::get().error(r)));
    return mw * 1e-3;
  }
  double resolution_J() const override { return 1e-3; }  // the counter counts millijoules

 private:
  std::vector<std::pair<std::string, nvmlDevice_t>> devices_;
};

}  // namespace

Opened open_nvml(const Devices& devices) {
  const Nvml& n = Nvml::get();
  const std::string missing = n.missing({{n.energy != nullptr, "nvmlDeviceGetTotalEnergyConsumption"},
                                         {n.power != nullptr, "nvmlDeviceGetPowerUsage"}});
  if (!missing.empty()) {
    return Opened::no(missing);
  }
  if (devices.bus_ids.empty()) {
    return Opened::no("no GPU to measure");
  }
  std::vector<std::pair<std::string, nvmlDevice_t>> found;
  for (const auto& bus : devices.bus_ids) {
    nvmlDevice_t d{};
    const nvmlReturn_t r = n.by_bus_id(bus.c_str(), &d);
    if (r != NVML_SUCCESS) {
      return Opened::no(fmt::format("nvmlDeviceGetHandleByPciBusId({}): {}", bus, n.error(r)));
    }
    unsigned long long mj = 0;
    const nvmlReturn_t e = n.energy(d, &mj);
    if (e != NVML_SUCCESS) {
      return Opened::no(fmt::format("GPU {} has no readable energy counter: {}", bus, n.error(e)));
    }
    found.emplace_back(bus, d);
  }
  return std::make_unique<NvmlSource>(std::move(found));
}

}  // namespace dmabench::power

#else

namespace dmabench::power {
Opened open_nvml(const Devices&) {
  return Opened::no("this build has no NVML support (nvml.h was not found at configure time)");
}
}  // namespace dmabench::power

#endif
