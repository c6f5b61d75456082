#include "bench/power_setup.hpp"

#include "bench/output/console.hpp"

#include <cstdio>
#include <exception>

#include <fmt/format.h>

#include "core/errors.hpp"

namespace dmabench {

std::vector<int> RunPower::channels(const std::vector<int>& devices) const {
  if (per_device) return devices;
  std::vector<int> all;
  for (int c = 0; c < meter->source().channels(); ++c) all.push_back(c);
  return all;
}

RunPower setup_power(const CliOptions& options, const std::string& trace_path, const Config& config,
                     const nlohmann::json& machine, const std::function<void()>& wake) {
  RunPower p;
  const bool on = options.power ? *options.power != "none" : config.power && config.power_source != "none";
  if (!on) return p;
  const std::string source = options.power ? *options.power : config.power_source;
  power::Devices devs;
  if (machine.contains("devices"))
    for (const auto& d : machine["devices"]) devs.bus_ids.push_back(d["bus_id"].get<std::string>());
  auto opened = power::open(source, devs);
  if (!opened && source != "auto") throw InputError(fmt::format("--power {}: not available: {}", source, opened.why_not()));
  if (!opened) {
    p.context = {{"enabled", false}, {"error", opened.why_not()}};
    console::say("dmabench: power not measured: {}\n", opened.why_not());
    return p;
  }
  std::unique_ptr<power::Source> src = std::move(opened).value();
  if (!trace_path.empty()) p.trace = std::make_unique<power::Trace>(trace_path);
  p.per_device = !devs.bus_ids.empty() && src->channels() == static_cast<int>(devs.bus_ids.size());
  auto meter = std::make_unique<power::Meter>(std::move(src), options.power_window_s.value_or(config.power_window_s),
                                              p.trace.get());
  console::say("dmabench: power: calibrating {} (update period, idle baseline {} x {:.1f} s{})\n", meter->source().name(), 2,
             meter->window_s(), wake ? ", once before and once after the GPUs are woken" : "");
  std::fflush(stdout);
  try {
    meter->calibrate(1.5, wake);
    p.context = meter->context();
    p.context["enabled"] = true;
    p.meter = std::move(meter);
  } catch (const std::exception& e) {
    p.context = {{"enabled", false}, {"error", std::string("calibration failed: ") + e.what()}};
    console::say("dmabench: power not measured: calibration failed: {}\n", e.what());
  }
  return p;
}

}  // namespace dmabench
