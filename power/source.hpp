#pragma once
// Power sources read counters only: cumulative energy per channel (a GPU, a CPU package) and, where
// the source has it, instantaneous power. The method (idle baseline, windows, uncertainty) lives in
// power/meter.hpp. One file per source: nvml.cpp, rocm_smi.cpp, rapl.cpp; "none" has no channels.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/why_not.hpp"

namespace dmabench::power {

class Source {
 public:
  virtual ~Source() = default;
  virtual std::string name() const = 0;
  // Channels, in order; for GPU sources one per requested device.
  virtual int channels() const = 0;
  virtual std::string channel_name(int channel) const = 0;
  // Cumulative energy of the channel in joules since an arbitrary origin. It may wrap back to 0
  // after wrap_J() (when that is set); the meter corrects one wrap per reading interval.
  // Throws std::runtime_error when the read fails.
  virtual double energy_J(int channel) = 0;
  virtual std::optional<double> power_W(int channel) { (void)channel; return std::nullopt; }
  virtual double resolution_J() const = 0;
  virtual std::optional<double> wrap_J() const { return std::nullopt; }
  // What the source read and how (e.g. rocm-smi's power call and the kind of power it reported), for
  // the results' context.power.details; empty when there is nothing to add.
  virtual nlohmann::json details() const { return nlohmann::json::object(); }
};

// What each source needs to find its channels: the PCI bus ids ("0000:06:00.0") of the devices a
// run uses (GPU sources pick the matching GPUs; host sources ignore them).
struct Devices {
  std::vector<std::string> bus_ids;
};

// Source names: "nvml", "rocm-smi", "rapl", "none"; "auto" takes the first available of
// nvml, rocm-smi, rapl. Returns the reason when the source cannot serve `devices`.
using Opened = Maybe<std::unique_ptr<Source>>;
Opened open(const std::string& name, const Devices& devices);
// Every name open() takes, "auto" first: the one list the --power flag, the config's power.source and their
// messages accept (power/source.cpp's table).
std::vector<std::string> source_names();
// Whether open() takes `name` (one of source_names()).
bool is_source_name(const std::string& name);

// Implementations (each file compiled only where its headers exist; otherwise they say why).
Opened open_nvml(const Devices& devices);
Opened open_rocm_smi(const Devices& devices);
Opened open_rapl(const std::string& root = "/sys/class/powercap");

}  // namespace dmabench::power
