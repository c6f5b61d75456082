// GPU compute workloads, written once against the vendor-neutral GPU layer: `gemm` (the vendor
// BLAS) and `stream` (the GPU layer's copy kernel over a device-local buffer, every SM busy).
#include <memory>
#include <optional>

#include "bench/beside/load.hpp"
#include "gpu/compute.hpp"
#include "gpu/gpu.hpp"

namespace dmabench::beside {
namespace {

struct DeviceWork {
  explicit DeviceWork(int device) : stream(device), timer(device) {}
  gpu::Stream stream;
  gpu::StreamTimer timer;
  std::unique_ptr<gpu::Gemm> gemm;
  gpu::Memory src, dst;
  std::optional<gpu::CopyKernel> copy;
};

class GpuLoad final : public Load {
 public:
  GpuLoad(const Spec& spec, const std::vector<int>& devices) : spec_(spec) {
    for (int d : devices) {
      auto w = std::make_unique<DeviceWork>(d);
      if (spec.kind == "gemm") {
        w->gemm = std::make_unique<gpu::Gemm>(d, spec.m, spec.n, spec.k, spec.dtype);
      } else {
        w->src = gpu::allocate(d, spec.bytes);
        w->dst = gpu::allocate(d, spec.bytes);
        gpu::fill(w->src.get(), spec.bytes, 0x5eed, 0, w->stream);
        w->copy.emplace(d, std::vector<gpu::CopyJob>{{w->dst.get(), w->src.get(), spec.bytes}}, 0);
      }
      w->stream.synchronize();
      work_.push_back(std::move(w));
    }
  }
  void start(int launches) override {
    for (auto& w : work_) {
      gpu::set_device(w->stream.device());
      w->timer.start(w->stream);
      for (int i = 0; i < launches; ++i) {
        if (w->gemm)
          w->gemm->launch(w->stream);
        else
          w->copy->launch(w->stream);
      }
      w->timer.stop(w->stream);
    }
  }
  bool finished() override {
    for (auto& w : work_)
      if (!w->timer.done()) return false;
    return true;
  }
  std::vector<double> wait_ms() override {
    std::vector<double> ms;
    for (auto& w : work_) ms.push_back(w->timer.elapsed_ms());
    return ms;
  }
  nlohmann::json details() const override {
    return {{"clock", "gpu events on a compute stream per device"},
            {"implementation", spec_.kind == "gemm" ? gpu::gemm_implementation()
                                                    : "GPU-layer copy kernel, device-local, 2 blocks per SM"}};
  }

 private:
  Spec spec_;
  std::vector<std::unique_ptr<DeviceWork>> work_;
};

}  // namespace

WhyNot gpu_unsupported(const Spec& spec) {
  if (spec.kind == "gemm") return gpu::gemm_unsupported();
  return std::nullopt;
}

std::unique_ptr<Load> make_gpu_load(const Spec& spec, const std::vector<int>& devices) {
  return std::make_unique<GpuLoad>(spec, devices);
}

}  // namespace dmabench::beside
