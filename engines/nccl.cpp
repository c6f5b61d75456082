// nccl: the vendor collective library over a single-process communicator. Plans with an
// equivalent collective call it (allgather -> ncclAllGather, alltoall -> ncclAlltoAll); any other
// plan becomes one ncclSend/ncclRecv pair per transfer inside one group (copy, bidir).
#include <map>
#include <memory>
#include <vector>

#include "engines/engine_factories.hpp"
#include "engines/gpu/nccl_comm.hpp"
#include "engines/gpu_operation.hpp"

namespace dmabench {
namespace {

std::vector<int> all_ranks(const Plan& plan) {
  std::vector<int> r(plan.ranks());
  for (int i = 0; i < plan.ranks(); ++i) r[i] = i;
  return r;
}

class NcclOperation final : public GpuOperation {
 public:
  NcclOperation(const Plan& plan, const gpu::NcclComms& comms) : GpuOperation(plan, all_ranks(plan)), comms_(comms) {}
  void launch() override {
    const Plan& p = plan();
    comms_.group_start();
    switch (p.collective) {
      case Collective::all_gather:
        for (int r = 0; r < p.ranks(); ++r) comms_.all_gather(r, src(r), dst(r), p.bytes_per_rank, stream(r));
        break;
      case Collective::all_to_all:
        for (int r = 0; r < p.ranks(); ++r) comms_.all_to_all(r, src(r), dst(r), p.bytes_per_rank, stream(r));
        break;
      case Collective::none:
        for (const Transfer& t : p.transfers) {
          comms_.send(t.src_rank, src(t.src_rank) + t.src_offset, t.bytes, t.dst_rank, stream(t.src_rank));
          comms_.recv(t.dst_rank, dst(t.dst_rank) + t.dst_offset, t.bytes, t.src_rank, stream(t.dst_rank));
        }
        break;
    }
    comms_.group_end();
  }
  void wait() override {
    GpuOperation::wait();
    comms_.check_async();
  }

 private:
  const gpu::NcclComms& comms_;
};

class NcclEngine final : public Engine {
 public:
  std::optional<std::string> unsupported(const Plan& plan, const Options&) const override {
    return gpu_memory_shortfall(plan);
  }
  std::unique_ptr<Operation> prepare(const Plan& plan, const Options&) override {
    auto it = comms_.find(plan.devices);
    if (it == comms_.end()) it = comms_.emplace(plan.devices, std::make_unique<gpu::NcclComms>(plan.devices)).first;
    return std::make_unique<NcclOperation>(plan, *it->second);
  }

 private:
  std::map<std::vector<int>, std::unique_ptr<gpu::NcclComms>> comms_;  // communicator set up once per device list
};

}  // namespace

std::unique_ptr<Engine> make_nccl_engine() { return std::make_unique<NcclEngine>(); }

}  // namespace dmabench
