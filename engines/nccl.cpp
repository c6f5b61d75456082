// nccl: the vendor collective library, over a single-process communicator or, in a multi-process run,
// one communicator whose ranks live in the launcher's processes (its unique id shared through team/). Plans with an
// equivalent collective call it (allgather -> ncclAllGather, alltoall -> ncclAlltoAll, RCCL's ncclAllToAll); any other
// plan becomes one ncclSend/ncclRecv pair per transfer inside one group (copy, bidir).
// Options graph and cta_policy: engines/options/nccl.cpp. With cta_policy zero (NCCL's copy-engine
// collectives) the copy-engine path is confirmed from NCCL's own log.
#include <map>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "engines/engine_factories.hpp"
#include "gpu/nccl_comm.hpp"
#include "engines/gpu_operation.hpp"
#include "engines/options/nccl.hpp"
#include "team/team.hpp"

namespace dmabench {
namespace {

// NCCL logs this (INIT subsystem) when a communicator sets up its copy-engine collectives, which
// it does lazily, at the first collective that takes the copy-engine path.
constexpr const char* kCeInitLog = "Init CE";

std::vector<int> all_ranks(const Plan& plan) {
  std::vector<int> r(plan.ranks());
  for (int i = 0; i < plan.ranks(); ++i) r[i] = i;
  return r;
}

// A communicator over the plan's ranks: in a multi-process run every process takes part in sharing
// world rank 0's unique id (collective), and holds its own rank, if the plan has it.
std::unique_ptr<gpu::NcclComms> make_comms(const Plan& plan, bool cta_zero) {
  std::string id, error;
  if (team::world().multi()) {
    try {
      if (team::world().rank() == 0) id = gpu::nccl_unique_id();
    } catch (const std::exception& e) {
      error = e.what();
    }
    id = team::share(team::Blob{id}, error).at(0).bytes;  // every process takes part, rank 0's error or not
  }
  return std::make_unique<gpu::NcclComms>(plan.devices, team::local_ranks(plan), cta_zero, id);
}

class NcclOperation final : public GpuOperation {
 public:
  NcclOperation(const Plan& plan, NcclOptions opt, const gpu::NcclComms* shared);

  ~NcclOperation() override;

  void launch() override {
    const int set = plan().set_of(launches_++);
    if (!opt_.graph) return issue(set);
    for (std::size_t i = 0; i < local_.size(); ++i) {
      gpu::set_device(device(local_[i]));
      graphs_[set][i].launch(stream(local_[i]));
    }
  }

  void wait() override {
    GpuOperation::wait();
    comms_->check_async();
  }

  nlohmann::json details() const override { return details_; }

 private:
  // One operation over buffer set `set`.
  void issue(int set);

  // Runs one operation and looks in NCCL's log for the copy-engine set-up of this communicator.
  void confirm_copy_engine_path();

  NcclOptions opt_;
  std::vector<int> local_;  // the plan's ranks in this process
  std::unique_ptr<gpu::NcclComms> owned_;
  const gpu::NcclComms* comms_ = nullptr;
  std::vector<void*> src_windows_, dst_windows_;
  std::vector<std::vector<gpu::Graph>> graphs_;  // per buffer set, per rank of this process
  std::size_t launches_ = 0;
  nlohmann::json details_ = nlohmann::json::object();
};

NcclOperation::NcclOperation(const Plan& plan, NcclOptions opt, const gpu::NcclComms* shared) : GpuOperation(plan, all_ranks(plan), opt.cta_zero ? DeviceAllocator{"nccl", gpu::nccl_allocate, /*pooled=*/false} : DeviceAllocator{}, /*maps_peers=*/false), opt_(opt), local_(team::local_ranks(plan)) {
  if (opt.cta_zero) {
    // A communicator of its own, so that its copy-engine set-up (logged once per communicator)
    // happens inside this case.
    owned_ = make_comms(plan, true);
    comms_ = owned_.get();
    std::vector<void*> s(plan.ranks(), nullptr), d(plan.ranks(), nullptr);
    for (int r : local_) {
      s[r] = src(r);
      d[r] = dst(r);
    }
    src_windows_ = comms_->register_windows(s, plan.src_allocation(0));
    dst_windows_ = comms_->register_windows(d, plan.dst_allocation(0));
  } else {
    comms_ = shared;
  }
  // Eagerly, before any capture: NCCL sets its copy-engine collectives up at the first one.
  if (opt.cta_zero) confirm_copy_engine_path();
  if (opt.graph) {
    graphs_.resize(sets());
    for (int set = 0; set < sets(); ++set) {
      for (int r : local_) {
        gpu::set_device(device(r));
        gpu::begin_capture(stream(r));
      }
      issue(set);
      for (int r : local_) {
        gpu::set_device(device(r));
        graphs_[set].push_back(gpu::end_capture(stream(r)));
      }
    }
  }
}

NcclOperation::~NcclOperation() {
  try {
    for (int r : local_) stream(r).synchronize();
  } catch (...) {
  }
  graphs_.clear();
  if (comms_) {
    comms_->deregister_windows(dst_windows_);
    comms_->deregister_windows(src_windows_);
  }
}

void NcclOperation::issue(int set) {
  const Plan& p = plan();
  comms_->group_start();
  switch (p.collective) {
    case Collective::all_gather:
      // in place (the own block preset in the destination): sendbuff = recvbuff + rank * count
      for (int r : local_)
        comms_->all_gather(r, p.preset.empty() ? src(r, set) : dst(r, set) + r * p.bytes_per_rank, dst(r, set),
                           p.bytes_per_rank, stream(r));
      break;
    case Collective::all_to_all:
      for (int r : local_) comms_->all_to_all(r, src(r, set), dst(r, set), p.bytes_per_rank, stream(r));
      break;
    case Collective::none:
      for (const Transfer& t : p.transfers) {
        if (team::local(t.src_rank))
          comms_->send(t.src_rank, src(t.src_rank, set) + t.src_offset, t.bytes, t.dst_rank, stream(t.src_rank));
        if (team::local(t.dst_rank))
          comms_->recv(t.dst_rank, dst(t.dst_rank, set) + t.dst_offset, t.bytes, t.src_rank, stream(t.dst_rank));
      }
      break;
  }
  comms_->group_end();
}

void NcclOperation::confirm_copy_engine_path() {
  const std::size_t before = gpu::nccl_log_lines(kCeInitLog).size();
  issue(0);
  wait();
  const auto lines = gpu::nccl_log_lines(kCeInitLog);
  // this process's log: its own ranks (a process without a rank in the plan has nothing to confirm)
  const bool confirmed = !local_.empty() && lines.size() >= before + local_.size();
  details_["cta_policy"] = "zero";
  details_["copy_engine_path"] = {
      {"confirmed", confirmed},
      {"evidence", confirmed ? lines.back() : std::string()},
      {"how", gpu::nccl_log_path().empty()
                  ? std::string("no readable NCCL log (NCCL_DEBUG set by the user without a plain NCCL_DEBUG_FILE, "
                              "or no directory could be made for one)")
                  : fmt::format("NCCL INFO log {}: one '{}' line per rank of this process appeared during this case's "
                                "first collective",
                                gpu::nccl_log_path(), kCeInitLog)}};
}

class NcclEngine final : public Engine {
 public:
  NcclEngine() { gpu::nccl_prepare_log(); }
  std::unique_ptr<const TypedOptions> parse(const Options& options) const override {
    return std::make_unique<OptionsOf<NcclOptions>>(NcclOptions::from(options));
  }
  WhyNot unsupported(const Plan& plan, const TypedOptions& options, int) const override {
    const NcclOptions& o = options_of<NcclOptions>(options);
    if (plan.host_memory())
      return std::string("nccl moves device buffers between ranks; host-memory endpoints are not a collective (use ce, "
                         "ce-batch, sm or hsa)");
    if (plan.block_bytes)
      return std::string("nccl sends whole buffers; a block layout or scattered tokens (one transfer per block) is not a "
                         "collective (use ce, ce-batch or sm)");
    if (!team::world().multi())
      for (int a = 0; a < plan.ranks(); ++a)
        for (int b = a + 1; b < plan.ranks(); ++b)
          if (plan.devices[a] == plan.devices[b])
            return fmt::format("NCCL needs a GPU per rank: ranks {} and {} share GPU {} (one communicator rank per GPU)", a, b,
                               plan.devices[a]);
    if (o.cta_zero)
      if (auto why = gpu::nccl_ce_collectives_unsupported()) return why;
    if (plan.collective == Collective::all_to_all)
      if (auto why = gpu::nccl_all_to_all_unsupported()) return why;
    if (o.cta_zero && plan.collective == Collective::none)
      return std::string("cta_policy zero (NCCL's copy-engine collectives) covers allgather and alltoall; "
                         "this pattern runs as ncclSend/ncclRecv");
    return gpu_memory_shortfall(plan);
  }
  std::unique_ptr<Operation> prepare(const Plan& plan, const TypedOptions& options) override {
    const NcclOptions& o = options_of<NcclOptions>(options);
    const gpu::NcclComms* shared = nullptr;
    if (!o.cta_zero) {
      auto it = comms_.find(plan.devices);
      // every process must agree whether the communicator exists (one whose set-up failed in some
      // process is made again by all of them)
      const bool everywhere = team::first_error(it == comms_.end() ? "missing" : "").has_value() == false;
      if (!everywhere && it != comms_.end()) {
        comms_.erase(it);
        it = comms_.end();
      }
      if (it == comms_.end()) it = comms_.emplace(plan.devices, make_comms(plan, false)).first;
      shared = it->second.get();
    }
    return std::make_unique<NcclOperation>(plan, o, shared);
  }
  // One communicator across the processes; NCCL refuses two ranks on one GPU.
  WhyNot across_processes(const Plan& plan, const TypedOptions&) const override {
    const auto& ranks = team::world().ranks();
    for (int a = 0; a < plan.ranks(); ++a)
      for (int b = a + 1; b < plan.ranks(); ++b)
        if (a < static_cast<int>(ranks.size()) && b < static_cast<int>(ranks.size()) && ranks[a].node == ranks[b].node &&
            ranks[a].bus_id == ranks[b].bus_id)
          return fmt::format("NCCL needs a GPU per rank: ranks {} and {} share GPU {} ({}) on {}", a, b, ranks[a].device,
                             ranks[a].bus_id, ranks[a].host);
    return std::nullopt;
  }
  bool across_nodes() const override { return true; }

 private:
  std::map<std::vector<int>, std::unique_ptr<gpu::NcclComms>> comms_;  // set up once per device list (the same on every process)
};

}  // namespace

std::unique_ptr<Engine> make_nccl_engine() { return std::make_unique<NcclEngine>(); }

}  // namespace dmabench
