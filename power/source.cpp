#include "power/source.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>  // fmt::join (in ranges.h since fmt 11)

namespace dmabench::power {

namespace {

// The sources, in the order "auto" tries them; `automatic` false: only by name ("none").
struct Entry {
  const char* name;
  Opened (*open)(const Devices& devices);
  bool automatic;
};

const std::vector<Entry>& sources() {
  static const std::vector<Entry> table = {
      {"nvml", open_nvml, true},
      {"rocm-smi", open_rocm_smi, true},
      {"rapl", [](const Devices&) { return open_rapl(); }, true},
      {"none", [](const Devices&) { return Opened::no("power source none: nothing is measured"); }, false},
  };
  return table;
}

}  // namespace

std::vector<std::string> source_names() {
  std::vector<std::string> names = {"auto"};
  for (const Entry& e : sources()) names.emplace_back(e.name);
  return names;
}

bool is_source_name(const std::string& name) {
  const auto names = source_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

Opened open(const std::string& name, const Devices& devices) {
  for (const Entry& e : sources())
    if (name == e.name) return e.open(devices);
  if (name == "auto") {
    std::vector<std::string> reasons;
    for (const Entry& e : sources()) {
      if (!e.automatic) continue;
      auto s = e.open(devices);
      if (s) return s;
      reasons.push_back(std::string(e.name) + ": " + s.why_not());
    }
    return Opened::no(fmt::format("no power source available ({})", fmt::join(reasons, "; ")));
  }
  return Opened::no(fmt::format("unknown power source '{}'; accepted: {}", name, fmt::join(source_names(), ", ")));
}

}  // namespace dmabench::power
