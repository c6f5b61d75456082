// ce: one runtime async copy per transfer on the issuing rank's stream (cudaMemcpyAsync with peer
// access enabled: the copy / DMA engines move the bytes, no GPU cores involved).
#include <memory>

#include "engines/engine_factories.hpp"
#include "engines/gpu_operation.hpp"

namespace dmabench {
namespace {

class CeOperation final : public GpuOperation {
 public:
  explicit CeOperation(const Plan& plan) : GpuOperation(plan, plan.issuers()) {
    for (int r : plan.issuers()) by_issuer_.push_back({r, plan.issued_by(r)});
  }
  void launch() override {
    for (const auto& [rank, transfers] : by_issuer_) {
      gpu::set_device(device(rank));
      for (const Transfer& t : transfers)
        gpu::copy_async(dst(t.dst_rank) + t.dst_offset, src(t.src_rank) + t.src_offset, t.bytes, stream(rank));
    }
  }

 private:
  std::vector<std::pair<int, std::vector<Transfer>>> by_issuer_;
};

class CeEngine final : public Engine {
 public:
  std::optional<std::string> unsupported(const Plan& plan, const Options&) const override {
    return gpu_memory_shortfall(plan);
  }
  std::unique_ptr<Operation> prepare(const Plan& plan, const Options&) override {
    return std::make_unique<CeOperation>(plan);
  }
};

}  // namespace

std::unique_ptr<Engine> make_ce_engine() { return std::make_unique<CeEngine>(); }

}  // namespace dmabench
