// The `cuda` backend: NVIDIA GPUs through the CUDA runtime.
#include <memory>

#include <nlohmann/json.hpp>

#include "engines/backend.hpp"
#include "engines/gpu/gpu.hpp"
#ifdef DMABENCH_HAVE_CUPTI
#include "engines/gpu/cupti_tracer.hpp"
#endif
#ifdef DMABENCH_HAVE_NCCL
#include "engines/gpu/nccl_comm.hpp"
#endif

namespace dmabench {
namespace {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int count) : count_(count) {}
  std::string_view name() const override { return "cuda"; }
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
      devices.push_back({{"id", i},
                         {"name", p.name},
                         {"bus_id", p.bus_id},
                         {"memory_bytes", p.memory_bytes},
                         {"copy_engines", p.copy_engines},
                         {"multiprocessors", p.multiprocessors},
                         {"compute_capability", std::to_string(p.cc_major) + "." + std::to_string(p.cc_minor)}});
      nlohmann::json row = nlohmann::json::array();
      for (int j = 0; j < count_; ++j) {
        const gpu::PeerLink l = gpu::peer_link(i, j);
        row.push_back({{"access", l.access}, {"performance_rank", l.performance_rank}, {"native_atomics", l.native_atomics}});
      }
      links.push_back(row);
    }
    const gpu::Versions v = gpu::versions();
    nlohmann::json versions = {{"cuda_runtime", v.runtime}, {"cuda_driver_api", v.driver_api},
                               {"nvidia_driver", v.kernel_driver.empty() ? nlohmann::json() : nlohmann::json(v.kernel_driver)}};
#ifdef DMABENCH_HAVE_CUPTI
#include "engines/gpu/cupti_tracer.hpp"
#endif
#ifdef DMABENCH_HAVE_NCCL
    versions["nccl"] = gpu::nccl_version();
#else
    versions["nccl"] = nullptr;
#endif
    return {{"devices", devices}, {"peer_links", links}, {"versions", versions}};
  }
  void prepare_devices(const std::vector<int>& devices) override {
    gpu::enable_peer_access(devices);
    for (int d : devices) gpu::preload_kernels(d);
  }
  std::unique_ptr<CopyTracer> copy_tracer(std::string* why_not) override {
#ifdef DMABENCH_HAVE_CUPTI
    return gpu::make_cupti_tracer(why_not);
#else
    if (why_not) *why_not = "this build has no CUPTI (not found at configure time)";
    return nullptr;
#endif
  }

 private:
  int count_;
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend(std::string* why_not) {
  const int n = gpu::device_count(why_not);
  if (n == 0) return nullptr;
  return std::make_unique<CudaBackend>(n);
}

}  // namespace dmabench
