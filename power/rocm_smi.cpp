// AMD GPUs through rocm-smi: rsmi_dev_energy_count_get (counter x resolution in µJ) for joules, and
// for the power trace rsmi_dev_power_get (µW; current socket power on MI300-series GPUs, which have
// no average, else the average; the kind is recorded in details()) where the header has it, else
// rsmi_dev_power_ave_get. Loaded at run time (dlopen); rocm_smi.h is needed to compile only.
// vendor-header exception: outside gpu/, this file includes rocm_smi.h for the types of the functions
// it loads with dlsym (decltype) and nothing else; nothing links rocm-smi (tests/check_vendor_includes.cmake).
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <type_traits>
#include <stdexcept>

#include <fmt/format.h>

#include "power/source.hpp"

#ifdef DMABENCH_HAVE_ROCM_SMI_H
#include <rocm_smi/rocm_smi.h>

namespace dmabench::power {
namespace {

// rsmi_init writes lines of its own to stderr where it finds no AMD GPU ("Failed to open drm root directory
// /sys/class/drm.: ...", "Exception caught: rsmi_init."; reported upstream as ROCm/rocm_smi_lib pull 213 and
// ROCm/rocm-systems issue 8612): stderr goes to an anonymous temporary file while it runs, and what it wrote is
// shown only when it succeeds; when it fails, the one line of --power's "power not measured" says why.
class HeldStderr {
 public:
  HeldStderr() {
    std::fflush(stderr);
    file_ = std::tmpfile();
    if (!file_) return;  // stderr stays as it is
    saved_ = dup(STDERR_FILENO);
    if (saved_ >= 0 && dup2(fileno(file_), STDERR_FILENO) < 0) {
      close(saved_);
      saved_ = -1;
    }
  }
  HeldStderr(const HeldStderr&) = delete;
  HeldStderr& operator=(const HeldStderr&) = delete;
  ~HeldStderr() { restore(true); }

  // Puts stderr back; what was written meanwhile is copied to it when `show`.
  void restore(bool show) {
    if (saved_ >= 0) {
      std::fflush(stderr);
      const bool back = dup2(saved_, STDERR_FILENO) >= 0;
      close(saved_);
      saved_ = -1;
      if (back && show && std::fseek(file_, 0, SEEK_SET) == 0) {
        char buf[4096];
        for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) std::fwrite(buf, 1, n, stderr);
      }
    }
    if (file_) std::fclose(file_);
    file_ = nullptr;
  }

 private:
  std::FILE* file_ = nullptr;
  int saved_ = -1;
};

// Every symbol typed from rocm_smi.h: an API change breaks the build, not the run.
struct Rsmi {
  void* lib = nullptr;
  decltype(&rsmi_init) init = nullptr;
  decltype(&rsmi_num_monitor_devices) count = nullptr;
  decltype(&rsmi_dev_pci_id_get) pci_id = nullptr;
  decltype(&rsmi_dev_energy_count_get) energy = nullptr;
#ifdef DMABENCH_RSMI_HAS_POWER_GET
  // rsmi_dev_power_get (newer rocm-smi, which deprecates rsmi_dev_power_ave_get): current socket
  // power where the GPU reports it (MI300 series, no average there), else the average; it says which.
  decltype(&rsmi_dev_power_get) power = nullptr;
  static constexpr const char* kPowerCall = "rsmi_dev_power_get";
#else
  decltype(&rsmi_dev_power_ave_get) power = nullptr;
  static constexpr const char* kPowerCall = "rsmi_dev_power_ave_get";
#endif
  decltype(&rsmi_status_string) status_string = nullptr;
  std::string why_not;

  std::string text(rsmi_status_t s) const {
    const char* t = "unknown";
    if (status_string) status_string(s, &t);
    return t;
  }
  static const Rsmi& get() {
    static const Rsmi r = load();
    return r;
  }
  static Rsmi load() {
    Rsmi r;
    for (const char* name : {"librocm_smi64.so.1", "librocm_smi64.so"})
      if ((r.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) break;
    if (!r.lib) {
      r.why_not = "cannot load librocm_smi64.so";
      return r;
    }
    auto sym = [&](auto& fn, const char* s) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(r.lib, s));
      if (!fn && r.why_not.empty()) r.why_not = fmt::format("librocm_smi64 has no {}", s);
    };
    sym(r.init, "rsmi_init");
    sym(r.count, "rsmi_num_monitor_devices");
    sym(r.pci_id, "rsmi_dev_pci_id_get");
    sym(r.energy, "rsmi_dev_energy_count_get");
    sym(r.power, kPowerCall);
    sym(r.status_string, "rsmi_status_string");
    if (r.why_not.empty()) {
      HeldStderr held;
      const rsmi_status_t s = r.init(0);
      held.restore(s == RSMI_STATUS_SUCCESS);
      if (s != RSMI_STATUS_SUCCESS) r.why_not = fmt::format("rsmi_init: {}", r.text(s));
    }
    return r;
  }
};

// rocm-smi's BDF id: domain << 32 | bus << 8 | device << 3 | function.
std::string bdf_text(uint64_t id) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", (id >> 32) & 0xffff, (id >> 8) & 0xff, (id >> 3) & 0x1f, id & 0x7);
}

class RsmiSource final : public Source {
 public:
  explicit RsmiSource(std::vector<std::pair<std::string, uint32_t>> d) : devices_(std::move(d)) {}
  std::string name() const override { return "rocm-smi"; }
  int channels() const override { return static_cast<int>(devices_.size()); }
  std::string channel_name(int c) const override { return "GPU " + devices_[c].first; }
  double energy_J(int c) override {
    uint64_t counter = 0, ts = 0;
    float resolution_uj = 0;
    const rsmi_status_t s = Rsmi::get().energy(devices_[c].second, &counter, &resolution_uj, &ts);
    if (s != RSMI_STATUS_SUCCESS) throw std::runtime_error("rsmi_dev_energy_count_get: " + Rsmi::get().text(s));
    resolution_J_ = resolution_uj * 1e-6;
    return static_cast<double>(counter) * resolution_uj * 1e-6;
  }
  std::optional<double> power_W(int c) override {
    uint64_t uw = 0;
    const Rsmi& r = Rsmi::get();
#ifdef DMABENCH_RSMI_HAS_POWER_GET
    RSMI_POWER_TYPE type = RSMI_INVALID_POWER;
    const rsmi_status_t s = r.power(devices_[c].second, &uw, &type);
    if (s != RSMI_STATUS_SUCCESS) throw std::runtime_error(std::string(Rsmi::kPowerCall) + ": " + r.text(s));
    power_type_ = type == RSMI_CURRENT_POWER ? "current" : type == RSMI_AVERAGE_POWER ? "average" : "invalid";
#else
    const rsmi_status_t s = r.power(devices_[c].second, 0, &uw);
    if (s != RSMI_STATUS_SUCCESS) throw std::runtime_error(std::string(Rsmi::kPowerCall) + ": " + r.text(s));
    power_type_ = "average";
#endif
    return uw * 1e-6;
  }
  // Which call gives the power trace and which kind of power it read (known after the first read).
  nlohmann::json details() const override {
    return {{"energy_call", "rsmi_dev_energy_count_get"},
            {"power_call", Rsmi::kPowerCall},
            {"power_type", power_type_.empty() ? nlohmann::json() : nlohmann::json(power_type_)}};
  }
  double resolution_J() const override { return resolution_J_; }

 private:
  std::vector<std::pair<std::string, uint32_t>> devices_;
  double resolution_J_ = 15.3e-6;  // replaced by the driver's figure at the first read
  std::string power_type_;          // "current", "average" or "invalid", from the last power read
};

}  // namespace

Opened open_rocm_smi(const Devices& devices) {
  const Rsmi& r = Rsmi::get();
  if (!r.why_not.empty()) {
    return Opened::no(r.why_not);
  }
  uint32_t n = 0;
  if (const rsmi_status_t s = r.count(&n); s != RSMI_STATUS_SUCCESS) {
    return Opened::no("rsmi_num_monitor_devices: " + r.text(s));
  }
  std::vector<std::pair<std::string, uint32_t>> found;
  for (const auto& bus : devices.bus_ids) {
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t id = 0;
      if (r.pci_id(i, &id) == RSMI_STATUS_SUCCESS && bdf_text(id) == bus) found.emplace_back(bus, i);
    }
  }
  if (found.empty() || found.size() != devices.bus_ids.size()) {
    return Opened::no(fmt::format("rocm-smi sees {} AMD GPU(s), not the run's devices", n));
  }
  auto src = std::make_unique<RsmiSource>(std::move(found));
  try {
    src->energy_J(0);
  } catch (const std::exception& e) {
    return Opened::no(e.what());
  }
  try {
    src->power_W(0);  // the kind of power this GPU reports, for details()
  } catch (const std::exception&) {
    // joules come from the energy counter alone: a GPU without a power reading still measures
    // (the trace's power_W then fails per read, and details() says power_type null)
  }
  return src;
}

}  // namespace dmabench::power

#else

namespace dmabench::power {
Opened open_rocm_smi(const Devices&) {
  return Opened::no("this build has no rocm-smi support (rocm_smi/rocm_smi.h was not found at configure time)");
}
}  // namespace dmabench::power

#endif
