// sm: a GPU-core copy kernel on each issuing rank's device, one launch per rank for all of its
// transfers, loading locally and storing into the peer's memory over NVLink (needs peer access).
// Options blocks, sms (an SM budget) and coalesce: engines/options/sm.cpp.
#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "engines/engine_factories.hpp"
#include "engines/gpu_operation.hpp"
#include "engines/options/sm.hpp"
#include "team/team.hpp"

namespace dmabench {
namespace {

class SmOperation final : public GpuOperation {
 public:
  SmOperation(const Plan& plan, const SmOptions& o) : GpuOperation(plan, plan.issuers()), budgeted_(o.sms != 0) {
    kernels_.resize(sets());
    for (int s = 0; s < sets(); ++s)
      for (int r : team::local_issuers(plan)) {
        std::vector<gpu::CopyJob> jobs;
        for (const Transfer& t : o.coalesce ? coalesce(plan.issued_by(r)) : plan.issued_by(r))
          jobs.push_back({dst(t.dst_rank, s) + t.dst_offset, src(t.src_rank, s) + t.src_offset, t.bytes});
        if (s == 0) jobs_ += jobs.size();
        const int budget = o.sms == SmOptions::kAllSms ? gpu::properties(device(r)).multiprocessors : o.sms;
        kernels_[s].emplace_back(r, gpu::CopyKernel(device(r), std::move(jobs), o.blocks, budget));
      }
  }
  // The grid and, under a budget, the multiprocessors the blocks ran on (the most over the launches' kernels:
  // each buffer set's first launch); sm_budget null without one.
  std::optional<std::size_t> descriptors() const override { return jobs_; }
  nlohmann::json details() const override {
    long long grid = 0;
    int used = 0, multiprocessors = 0;
    for (const auto& set : kernels_)
      for (const auto& [rank, kernel] : set) {
        grid = std::max(grid, kernel.grid_blocks());
        used = std::max(used, kernel.sms_used().value_or(0));
        multiprocessors = std::max(multiprocessors, gpu::properties(device(rank)).multiprocessors);
      }
    nlohmann::json d = {{"grid_blocks", grid}, {"multiprocessors", multiprocessors}, {"sm_budget", nullptr}, {"sms_used", nullptr}};
    if (budgeted_) {
      d["sm_budget"] = grid;
      if (used > 0) d["sms_used"] = used;
    }
    return d;
  }
  void launch() override {
    for (auto& [rank, kernel] : kernels_[plan().set_of(launches_++)]) {
      gpu::set_device(device(rank));
      kernel.launch(stream(rank));
    }
  }

 private:
  std::vector<std::vector<std::pair<int, gpu::CopyKernel>>> kernels_;  // per buffer set
  std::size_t launches_ = 0;
  std::size_t jobs_ = 0;  // the copy jobs of one launch of every local issuer (descriptors)
  bool budgeted_;
};

constexpr std::size_t kMaxJobs = 65535;  // the grid's y dimension, one row a job (not under a budget: one dimension)

// The copy jobs a launch of each local issuer holds (its transfers, merged where coalesce is on).
std::map<int, std::size_t> count_jobs(const Plan& plan, const SmOptions& o) {
  std::map<int, std::size_t> n;
  for (int r : team::local_issuers(plan)) n[r] = o.coalesce ? coalesce(plan.issued_by(r)).size() : plan.issued_by(r).size();
  return n;
}

// An SM budget is the grid: it leaves no say to the blocks option, and a GPU has only so many multiprocessors.
WhyNot budget_unsupported(const Plan& plan, const SmOptions& o) {
  if (o.sms == 0) return std::nullopt;
  if (o.blocks != 0)
    return fmt::format("sm's sms (an SM budget: the grid is that many blocks) and blocks={} both set the grid: give one",
                       o.blocks);
  for (int r : team::local_issuers(plan)) {
    const int m = gpu::properties(plan.devices[r]).multiprocessors;
    if (o.sms > m) return fmt::format("sms={} is more than GPU {}'s {} multiprocessors (sms=all holds one block on each)",
                                      o.sms, plan.devices[r], m);
  }
  return std::nullopt;
}

class SmEngine final : public Engine {
 public:
  std::unique_ptr<const TypedOptions> parse(const Options& options) const override {
    return std::make_unique<OptionsOf<SmOptions>>(SmOptions::from(options));
  }
  WhyNot unsupported(const Plan& plan, const TypedOptions& options, int) const override {
    const SmOptions& o = options_of<SmOptions>(options);
    if (auto why = budget_unsupported(plan, o)) return why;
    for (int r = 0; r < plan.ranks(); ++r)
      for (const Location& l : {plan.src_location(r), plan.dst_location(r)})
        if (l.host && l.kind != HostKind::mapped)
          return fmt::format("sm loads and stores host memory from a kernel: it needs host kind mapped (pinned and mapped "
                             "into the GPU's address space), not {}",
                             to_string(l.kind));
    if (o.sms == 0)  // a budget's grid is one-dimensional: no row per job, nothing to count
      for (const auto& [rank, jobs] : count_jobs(plan, o))
        if (jobs > kMaxJobs)
          return fmt::format("sm's copy kernel takes at most {} copies per launch (one grid row each); GPU {} has {}",
                             kMaxJobs, plan.devices[rank], jobs);
    for (const Transfer& t : plan.transfers) {
      if (!team::local(t.issuer)) continue;
      const int from = plan.devices[t.issuer];
      for (int rank : {t.src_rank, t.dst_rank}) {
        // another process's rank: its GPU as this process numbers it (by bus id), when visible here
        const int to = team::local(rank) ? plan.devices[rank] : gpu::device_by_bus_id(team::world().ranks()[rank].bus_id);
        if (to >= 0 && to != from && !gpu::peer_link(from, to).access)
          return fmt::format("sm needs peer access from GPU {} to GPU {}, which the runtime does not offer", from, to);
      }
    }
    return gpu_memory_shortfall(plan);
  }
  std::unique_ptr<Operation> prepare(const Plan& plan, const TypedOptions& options) override {
    return std::make_unique<SmOperation>(plan, options_of<SmOptions>(options));
  }
  // The copy kernel stores into the other ranks' buffers, opened through interprocess handles.
  WhyNot across_processes(const Plan&, const TypedOptions&) const override { return std::nullopt; }
};

}  // namespace

std::unique_ptr<Engine> make_sm_engine() { return std::make_unique<SmEngine>(); }

}  // namespace dmabench
