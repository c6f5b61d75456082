#pragma once
// A backend is the platform a run drives: `host` (CPU threads; ranks are virtual) or `cuda`
// (NVIDIA GPUs; ranks are GPU ordinals). It names the devices and describes the machine.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/why_not.hpp"
#include "gpu/copy_tracer.hpp"  // CopyInterval, CopyTracer

namespace dmabench {

// A tiny operation the harness times to calibrate a process (results/SCHEMA.md, `context.calibration`): `run`
// issues it and waits until it completed.
struct CalibrationProbe {
  std::string name;  // e.g. "launch_sync"
  std::string what;  // one line: what one call does
  std::function<void()> run;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Valid device ids are 0 .. device_count() - 1.
  virtual int device_count() const = 0;
  // The devices "all" stands for.
  virtual std::vector<int> default_devices() const = 0;
  // Machine description for the results' context: devices, links, versions.
  virtual nlohmann::json context() const = 0;
  // The NUMA node closest to a device (host memory "local" to it), or -1 when the machine does not say.
  virtual int numa_node(int device) const {
    (void)device;
    return -1;
  }
  // One-time setup for a device set used by the sweep (e.g. peer access); throws on failure.
  virtual void prepare_devices(const std::vector<int>& devices) = 0;
  // The probes that calibrate this process on `device` (what a launch-bound case pays per command here), set
  // up and warmed; none where the backend has none. Throws on a runtime error.
  virtual std::vector<CalibrationProbe> calibration_probes(int device) = 0;
  // Engine timestamps of memory copies (latency breakdown), or the reason there are none.
  virtual Maybe<std::unique_ptr<CopyTracer>> copy_tracer() {
    return Maybe<std::unique_ptr<CopyTracer>>::no(std::string("the ") + std::string(name()) + " backend has no copy tracer");
  }
};

// The backends this build has, in order of preference for `--backend auto`.
std::vector<std::string> built_backends();
// What --backend and a config's "backend" accept: auto (the build's GPU backend where it opens, else host),
// gpu (the build's GPU backend, never host), host, cuda, hip.
const std::vector<std::string>& backend_choices();
bool known_backend_choice(std::string_view choice);
// Creates a backend, or says why it cannot (not built, no device, no driver).
Maybe<std::unique_ptr<Backend>> make_backend(std::string_view name);

}  // namespace dmabench
