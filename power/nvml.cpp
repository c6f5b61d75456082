// NVIDIA GPUs through NVML: nvmlDeviceGetTotalEnergyConsumption (mJ) and nvmlDeviceGetPowerUsage
// (mW). The library is loaded at run time (dlopen), so a build never depends on it; nvml.h is
// needed at compile time only.
// vendor-header exception: outside gpu/, this file includes nvml.h for the types of the functions it
// loads with dlsym (decltype) and nothing else; nothing links NVML (tests/check_vendor_includes.cmake).
#include <dlfcn.h>

#include <memory>
#include <type_traits>
#include <stdexcept>

#include <fmt/format.h>

#include "power/source.hpp"

#ifdef DMABENCH_HAVE_NVML_H
#include <nvml.h>

namespace dmabench::power {
namespace {

struct Nvml {
  void* lib = nullptr;
  // typed from nvml.h, so an API change breaks the build rather than a run
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) by_bus_id = nullptr;
  decltype(&nvmlDeviceGetTotalEnergyConsumption) energy = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) power = nullptr;
  decltype(&nvmlErrorString) error = nullptr;
  std::string why_not;

  static const Nvml& get() {
    static const Nvml n = load();
    return n;
  }
  static Nvml load() {
    Nvml n;
    n.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!n.lib) {
      n.why_not = fmt::format("cannot load libnvidia-ml.so.1 ({})", dlerror());
      return n;
    }
    auto sym = [&](auto& fn, const char* s) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(n.lib, s));
      if (!fn && n.why_not.empty()) n.why_not = fmt::format("libnvidia-ml.so.1 has no {}", s);
    };
    sym(n.init, "nvmlInit_v2");
    sym(n.by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    sym(n.energy, "nvmlDeviceGetTotalEnergyConsumption");
    sym(n.power, "nvmlDeviceGetPowerUsage");
    sym(n.error, "nvmlErrorString");
    if (n.why_not.empty()) {
      const nvmlReturn_t r = n.init();
      if (r != NVML_SUCCESS) n.why_not = fmt::format("nvmlInit: {}", n.error(r));
    }
    return n;
  }
};

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
  if (!n.why_not.empty()) {
    return Opened::no(n.why_not);
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
