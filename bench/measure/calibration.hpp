#pragma once
// The calibration of a process (results/SCHEMA.md, `context.calibration`): the backend's tiny probes
// (engines/backend.hpp, CalibrationProbe: an empty kernel launch and a 4-byte copy on a GPU, each waited for),
// timed at the start of a run, with the CPU the timing thread ran on and that CPU's clock where the OS shows it.
// What a launch-bound case pays per command in this process: compare.py sets it beside the cases that moved.
#include <nlohmann/json.hpp>

#include "engines/backend.hpp"

namespace dmabench::measure {

// `samples` timed calls of every probe on `device` after 10 untimed ones (at most about 20 ms a probe, at least 5 calls),
// host steady_clock around each call: {device, cpu, cpu_mhz, cpu_mhz_source, samples, probes: {name: {p50_us, min_us,
// p95_us, samples (the calls timed), what}}}; an error
// while setting up or running a probe is recorded as `error` (the run goes on).
nlohmann::json calibrate(Backend& backend, int device, int samples = 200);

// The CPU the calling thread runs on now (sched_getcpu), -1 where unknown.
int current_cpu();

}  // namespace dmabench::measure
