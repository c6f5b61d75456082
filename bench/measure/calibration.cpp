#include "bench/measure/calibration.hpp"

#include <sched.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "bench/measure/core_share.hpp"
#include "bench/sampling/stats.hpp"

namespace dmabench::measure {
namespace {

using json = nlohmann::json;

// The CPU's current clock in MHz and where it came from: cpufreq's scaling_cur_freq, else /proc/cpuinfo's
// "cpu MHz" of that processor (in a VM often the host's nominal clock); null where neither says.
std::pair<json, json> cpu_mhz(int cpu) {
  if (cpu < 0) return {nullptr, nullptr};
  const std::string freq = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/scaling_cur_freq";
  if (std::ifstream f(freq); f) {
    double khz = 0;
    if (f >> khz && khz > 0) return {khz / 1000.0, freq};
  }
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  int processor = -1;
  while (std::getline(info, line)) {
    if (line.rfind("processor", 0) == 0) {
      const auto colon = line.find(':');
      processor = colon == std::string::npos ? -1 : std::atoi(line.c_str() + colon + 1);
    } else if (processor == cpu && line.rfind("cpu MHz", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return {std::atof(line.c_str() + colon + 1), "/proc/cpuinfo cpu MHz"};
    }
  }
  return {nullptr, nullptr};
}

}  // namespace

int current_cpu() { return ::sched_getcpu(); }

json calibrate(Backend& backend, int device, int samples) {
  json out = {{"device", device}, {"samples", samples}, {"probes", json::object()}};
  try {
    for (const CalibrationProbe& p : backend.calibration_probes(device)) {
      // at most `samples` calls and about 20 ms per probe: on a loaded machine a handoff to a spinning thread can take
      // a scheduler tick (milliseconds), and the calibration must not delay the first case by seconds
      const auto budget_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
      for (int i = 0; i < 10 && std::chrono::steady_clock::now() < budget_end; ++i) p.run();
      std::vector<double> us;
      us.reserve(static_cast<std::size_t>(samples));
      for (int i = 0; i < samples && (i < 5 || std::chrono::steady_clock::now() < budget_end); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        p.run();
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      }
      const LatencyStats s = summarize(us);
      out["probes"][p.name] = {{"p50_us", s.p50}, {"min_us", s.min}, {"p95_us", s.p95}, {"samples", us.size()}, {"what", p.what}};
    }
  } catch (const std::exception& e) {
    out["error"] = e.what();
  }
  // whether the core is shared now (measure/core_share.hpp): 50 readings, about 1 ms
  std::vector<double> ratios;
  for (int i = 0; i < 50; ++i) ratios.push_back(read_core_share().ratio());
  const CoreShare share = summarize_core_share(ratios);
  out["core_share"] = {{"readings", share.probed},
                       {"shared", share.shared},
                       {"ratio_p50", share.ratio_p50},
                       {"threshold", kSharedRatio}};
  const int cpu = current_cpu();
  const auto [mhz, source] = cpu_mhz(cpu);
  out["cpu"] = cpu >= 0 ? json(cpu) : json();
  out["cpu_mhz"] = mhz;
  out["cpu_mhz_source"] = source;
  return out;
}

}  // namespace dmabench::measure
