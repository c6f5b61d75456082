#pragma once
// The run's power meter: the source chosen by the config or --power, opened and calibrated (update
// period, idle baseline) before any case runs, and its part of the results context.
#include <functional>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/cli.hpp"
#include "power/meter.hpp"

namespace dmabench {

struct RunPower {
  std::unique_ptr<power::Trace> trace;  // --power-trace
  std::unique_ptr<power::Meter> meter;  // null: power is not measured
  bool per_device = true;               // GPU sources: channel i is device i; host sources: every channel
  nlohmann::json context = {{"enabled", false}};  // context.power (results/SCHEMA.md)

  // The channels a case on `devices` is measured on.
  std::vector<int> channels(const std::vector<int>& devices) const;
};

// Power as asked: nothing when off; an unavailable source named explicitly is bad input (throws
// InputError), with "auto" it is recorded in the context and the run goes on without power.
// `machine` is the backend's context (its devices' bus ids pick the source's channels); `wake` (may be
// empty) readies the devices as the run will hold them, between the meter's two idle baselines
// (power::Meter::calibrate). `trace_path`: where the power trace goes, "" for none — --power-trace as the run
// checked it (bench/out_file: a symlink resolved, so the trace goes where the link points, never over the link).
RunPower setup_power(const CliOptions& options, const std::string& trace_path, const Config& config,
                     const nlohmann::json& machine, const std::function<void()>& wake = {});

}  // namespace dmabench
