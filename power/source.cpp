#include "power/source.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)

namespace dmabench::power {

std::vector<std::string> source_names() { return {"auto", "nvml", "rocm-smi", "rapl", "none"}; }

Opened open(const std::string& name, const Devices& devices) {
  if (name == "nvml") return open_nvml(devices);
  if (name == "rocm-smi") return open_rocm_smi(devices);
  if (name == "rapl") return open_rapl();
  if (name == "none") return Opened::no("power source none: nothing is measured");
  if (name == "auto") {
    std::vector<std::string> reasons;
    for (const std::string n : {"nvml", "rocm-smi", "rapl"}) {
      auto s = open(n, devices);
      if (s) return s;
      reasons.push_back(n + ": " + s.why_not());
    }
    return Opened::no(fmt::format("no power source available ({})", fmt::join(reasons, "; ")));
  }
  return Opened::no(fmt::format("unknown power source '{}'", name));
}

}  // namespace dmabench::power
