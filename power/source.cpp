#include "power/source.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)

namespace dmabench::power {

std::vector<std::string> source_names() { return {"auto", "nvml", "rocm-smi", "rapl", "none"}; }

std::unique_ptr<Source> open(const std::string& name, const Devices& devices, std::string* why_not) {
  if (name == "nvml") return open_nvml(devices, why_not);
  if (name == "rocm-smi") return open_rocm_smi(devices, why_not);
  if (name == "rapl") return open_rapl(why_not);
  if (name == "none") {
    if (why_not) *why_not = "power source none: nothing is measured";
    return nullptr;
  }
  if (name == "auto") {
    std::vector<std::string> reasons;
    for (const std::string n : {"nvml", "rocm-smi", "rapl"}) {
      std::string why;
      if (auto s = open(n, devices, &why)) return s;
      reasons.push_back(n + ": " + why);
    }
    if (why_not) *why_not = fmt::format("no power source available ({})", fmt::join(reasons, "; "));
    return nullptr;
  }
  if (why_not) *why_not = fmt::format("unknown power source '{}'", name);
  return nullptr;
}

}  // namespace dmabench::power
