// The GPU backend: `cuda` (NVIDIA GPUs through the CUDA runtime) or `hip` (AMD GPUs through HIP,
// with HSA for the SDMA engines), whichever runtime this build's GPU layer (gpu/) was compiled for.
// Vendor-neutral: it sees only gpu/'s neutral headers.
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "amd/environment.hpp"
#include "amd/topology.hpp"
#include "core/host_memory.hpp"
#include "engines/backend.hpp"
#include "engines/engine_factories.hpp"
#include "gpu/copy_tracer.hpp"
#include "gpu/features.hpp"
#include "gpu/gpu.hpp"
#include "gpu/links.hpp"
#ifdef DMABENCH_HAVE_NCCL
#include "gpu/nccl_comm.hpp"
#endif

namespace dmabench {
namespace {

bool is_hip() { return gpu::backend_name() == "hip"; }

nlohmann::json or_null(const std::string& s) { return s.empty() ? nlohmann::json() : nlohmann::json(s); }
nlohmann::json or_null_node(int node) { return node >= 0 ? nlohmann::json(node) : nlohmann::json(); }

// The direct links between every ordered pair of the GPUs (context.devices): xGMI from KFD (AMD), NVLink from
// NVML (NVIDIA); every pair -1 with the reason when the machine cannot tell.
struct LinkCounts {
  std::vector<std::vector<gpu::PairLinks>> pairs;
  std::string why_unknown;
};
LinkCounts link_counts(const nlohmann::json& devices) {
  std::vector<std::string> bus;
  for (const auto& d : devices) bus.push_back(d["bus_id"].get<std::string>());
  LinkCounts c{std::vector<std::vector<gpu::PairLinks>>(bus.size(), std::vector<gpu::PairLinks>(bus.size())), {}};
  if (is_hip()) {
    const auto xgmi = amd::xgmi_links_by_bus(bus);
    for (std::size_t i = 0; i < bus.size(); ++i)
      for (std::size_t j = 0; j < bus.size(); ++j)
        if (xgmi[i][j] >= 0) c.pairs[i][j] = {xgmi[i][j], xgmi[i][j] > 0 ? "xgmi" : "none"};
    return c;
  }
  const auto ends = gpu::nvlink_ends(bus, c.why_unknown);
  if (!ends) return c;
  for (std::size_t i = 0; i < bus.size(); ++i)
    for (std::size_t j = 0; j < bus.size(); ++j)
      if (i != j) c.pairs[i][j] = gpu::nvlink_pair((*ends)[i], (*ends)[j], bus[j]);
  return c;
}

class GpuBackend final : public Backend {
 public:
  explicit GpuBackend(int count) : count_(count) {
    if (is_hip())
      for (const auto& w : amd::dma_environment().warnings) std::fprintf(stderr, "dmabench: warning: %s\n", w.c_str());
  }
  std::string_view name() const override { return gpu::backend_name(); }
  int device_count() const override { return count_; }
  std::vector<int> default_devices() const override {
    std::vector<int> d(count_);
    for (int i = 0; i < count_; ++i) d[i] = i;
    return d;
  }
  nlohmann::json context() const override {
    nlohmann::json devices = nlohmann::json::array();
    nlohmann::json links = nlohmann::json::array();
    for (int i = 0; i < count_; ++i) {
      const gpu::DeviceProps p = gpu::properties(i);
      nlohmann::json d = {{"id", i},
                          {"name", p.name},
                          {"bus_id", p.bus_id},
                          {"memory_bytes", p.memory_bytes},
                          {"copy_engines", p.copy_engines},
                          {"multiprocessors", p.multiprocessors},
                          {"compute_capability", std::to_string(p.cc_major) + "." + std::to_string(p.cc_minor)},
                          {"numa_node", or_null_node(hostmem::pci_device_node(p.bus_id))},
                          {"pcie_link", {{"speed", or_null(hostmem::pci_attribute(p.bus_id, "current_link_speed"))},
                                         {"width", or_null(hostmem::pci_attribute(p.bus_id, "current_link_width"))},
                                         {"max_speed", or_null(hostmem::pci_attribute(p.bus_id, "max_link_speed"))},
                                         {"max_width", or_null(hostmem::pci_attribute(p.bus_id, "max_link_width"))}}}};
      if (is_hip()) {
        d["arch"] = p.arch;
        d["sdma_engines"] = p.sdma_engines >= 0 ? nlohmann::json(p.sdma_engines) : nlohmann::json();
        d["sdma_xgmi_engines"] = p.sdma_xgmi_engines >= 0 ? nlohmann::json(p.sdma_xgmi_engines) : nlohmann::json();
      }
      devices.push_back(d);
    }
    const auto counted = link_counts(devices);
    for (int i = 0; i < count_; ++i) {
      nlohmann::json row = nlohmann::json::array();
      for (int j = 0; j < count_; ++j) {
        const gpu::PeerLink l = gpu::peer_link(i, j);
        const gpu::PairLinks& c = counted.pairs[i][j];
        row.push_back({{"access", l.access}, {"performance_rank", l.performance_rank}, {"native_atomics", l.native_atomics},
                       {"links", c.links >= 0 && i != j ? nlohmann::json(c.links) : nlohmann::json()},
                       {"link_kind", c.kind.empty() || i == j ? nlohmann::json() : nlohmann::json(c.kind)}});
      }
      links.push_back(row);
    }
    const gpu::Versions v = gpu::versions();
    nlohmann::json versions;
    if (is_hip()) {
      const gpu::BuildFacts b = gpu::this_build();
      versions = {{"hip_runtime", v.runtime}, {"hip_driver", v.driver_api}, {"amdgpu_driver", or_null(v.kernel_driver)},
                  {"hip_headers", b.hip_version}, {"hsa_amd_interface_headers", or_null(b.hsa_interface)}};
    } else {
      versions = {{"cuda_runtime", v.runtime}, {"cuda_driver_api", v.driver_api}, {"nvidia_driver", or_null(v.kernel_driver)}};
    }
#ifdef DMABENCH_HAVE_NCCL
    versions[is_hip() ? "rccl" : "nccl"] = gpu::nccl_version();
#else
    versions[is_hip() ? "rccl" : "nccl"] = nullptr;
#endif
    nlohmann::json ctx = {{"devices", devices}, {"peer_links", links}, {"versions", versions}, {"numa_nodes", hostmem::nodes()}};
    if (!counted.why_unknown.empty()) ctx["peer_links_unknown"] = counted.why_unknown;
    if (is_hip()) ctx["dma_environment"] = amd::dma_environment().to_json();
    return ctx;
  }
  int numa_node(int device) const override { return hostmem::pci_device_node(gpu::properties(device).bus_id); }
  void prepare_devices(const std::vector<int>& devices) override {
    gpu::enable_peer_access(devices);
    for (int d : devices) gpu::preload_kernels(d);
  }
  Maybe<std::unique_ptr<CopyTracer>> copy_tracer() override { return gpu::make_copy_tracer(); }
  std::vector<CalibrationProbe> calibration_probes(int device) override;

 private:
  int count_;
};

std::vector<CalibrationProbe> GpuBackend::calibration_probes(int device) {
  struct Kit {
    gpu::Stream stream;
    gpu::DeviceBuffer buffer;
    gpu::Memory host;
    hostmem::BufferInfo info;
    explicit Kit(int d) : stream(d), buffer(d, 256) { host = gpu::allocate_host(HostKind::pinned, 4096, -1, info); }
  };
  gpu::preload_kernels(device);
  auto kit = std::make_shared<Kit>(device);
  auto* dev = static_cast<unsigned char*>(kit->buffer.data());
  std::vector<CalibrationProbe> probes = {{"launch_sync", "a one-thread kernel that does nothing, launched on a stream, then the stream synchronized",
           [kit] {
             gpu::launch_empty(kit->stream);
             kit->stream.synchronize();
           }},
          {"copy_4B_d2d", "a 4-byte copy within the GPU's memory through the runtime's copy path, then the stream synchronized",
           [kit, dev] {
             gpu::copy_async(dev + 128, dev, 4, kit->stream);
             kit->stream.synchronize();
           }}};
  if (!is_hip())  // HIP's copy path names its copies device-to-device (no compute units): not for host memory
    probes.push_back({"copy_4B_h2d", "a 4-byte copy from pinned host memory to the GPU, then the stream synchronized",
                      [kit, dev] {
                        gpu::copy_async(dev + 64, kit->host.get(), 4, kit->stream);
                        kit->stream.synchronize();
                      }});
  return probes;
}

}  // namespace

Maybe<std::unique_ptr<Backend>> make_gpu_backend() {
  const Maybe<int> n = gpu::device_count();
  if (!n) return Maybe<std::unique_ptr<Backend>>::no(n.why_not());
  return std::make_unique<GpuBackend>(*n);
}

}  // namespace dmabench
