// hsa (AMD only): SDMA copies through the HSA runtime, one hsa_amd_memory_async_copy[_on_engine] per
// transfer, with DMA-Latte's engine selection as options (engines, schedule, trigger, packet: their
// table, help and defaults are in engines/hsa_options.cpp; results/SCHEMA.md, README "AMD").
// Completion: the host spins on the HSA completion signals (each copy decrements its signal).
#include <deque>
#include <memory>

#include <fmt/format.h>

#include "amd/engine_map.hpp"
#include "amd/environment.hpp"
#include "core/errors.hpp"
#include "engines/engine_factories.hpp"
#include "dist/team.hpp"
#include "engines/gpu_operation.hpp"
#include "engines/hsa_options.hpp"
#include "gpu/features.hpp"
#include "gpu/hsa.hpp"

namespace dmabench {
namespace {

constexpr double kTimeoutS = 60;

struct PlannedCopy {
  gpu::hsa::Copy copy;
  int signal = 0;  // index of its completion signal
};

// The engine of every copy of the plan under the selection policy, or the reason it cannot be chosen.
WhyNot choose_engines(const Plan& plan, const amd::Selection& sel, std::vector<int>* engines) {
  engines->clear();
  std::vector<int> sources;
  for (const Transfer& t : plan.transfers) sources.push_back(plan.devices[t.issuer]);
  switch (sel.policy) {
    case amd::Policy::runtime:
      engines->assign(plan.transfers.size(), -1);
      return std::nullopt;
    case amd::Policy::round_robin: {
      std::vector<int> out(plan.transfers.size());
      for (int dev : plan.devices) {
        std::vector<std::size_t> idx;
        for (std::size_t i = 0; i < sources.size(); ++i)
          if (sources[i] == dev) idx.push_back(i);
        if (idx.empty()) continue;
        const int count = gpu::hsa::sdma_engine_count(dev);
        if (count <= 0) return fmt::format("round-robin: the SDMA engine count of GPU {} is unknown", dev);
        const auto rr = amd::round_robin(std::vector<int>(idx.size(), dev), count);
        for (std::size_t k = 0; k < idx.size(); ++k) out[idx[k]] = rr[k];
      }
      *engines = out;
      return std::nullopt;
    }
    case amd::Policy::preferred: {
      std::map<std::pair<int, int>, int> seen;
      for (const Transfer& t : plan.transfers) {
        const int s = plan.devices[t.src_rank], d = plan.devices[t.dst_rank];
        const int e = amd::nth_engine(gpu::hsa::preferred_engines(s, d), seen[{s, d}]++);
        if (e < 0 && s == d) {  // a GPU's copy to itself: no recommendation, the runtime picks
          engines->push_back(-1);
          continue;
        }
        if (e < 0) return fmt::format("preferred: the runtime recommends no SDMA engine for GPU {} -> GPU {}", s, d);
        engines->push_back(e);
      }
      return std::nullopt;
    }
    case amd::Policy::map: {
      std::vector<amd::MapEntry> map;
      try {
        map = amd::load_engine_map(sel.map_file);
      } catch (const std::exception& e) {
        return std::string(e.what());
      }
      for (const Transfer& t : plan.transfers) {
        const int s = plan.devices[t.src_rank], d = plan.devices[t.dst_rank];
        const auto e = amd::map_engine(map, s, d);
        if (!e && s == d) {  // a GPU's copy to itself, not in the map: the runtime picks
          engines->push_back(-1);
          continue;
        }
        if (!e) return fmt::format("engine map {} has no line for GPU {} -> GPU {} ('{},ENGINE,{}')", sel.map_file, s, d, s, d);
        engines->push_back(*e);
      }
      return std::nullopt;
    }
  }
  return std::string("unknown engine selection");
}

class HsaOperation final : public GpuOperation {
 public:
  HsaOperation(const Plan& plan, HsaOptions opt) : GpuOperation(plan, {}), opt_(opt) {
    std::vector<int> engines;
    if (auto why = choose_engines(plan, opt.selection, &engines)) throw std::runtime_error(*why);
    std::map<int, int> signal_of_issuer;
    std::vector<PlannedCopy> copies;  // buffer set 0 (the set's addresses are filled in below)
    for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
      const Transfer& t = plan.transfers[i];
      if (!dist::local(t.issuer)) continue;  // another process issues it
      transfers_.push_back(i);
      PlannedCopy c;
      c.copy = gpu::hsa::Copy{nullptr, agent_device(t.dst_rank), nullptr, agent_device(t.src_rank), t.bytes, engines[i]};
      if (opt.pcpy) {
        c.signal = static_cast<int>(signals_.size());
        signals_.push_back(std::make_unique<gpu::hsa::Signal>(0));
        signal_bytes_.push_back(t.bytes);
      } else {
        auto [it, fresh] = signal_of_issuer.try_emplace(t.issuer, static_cast<int>(signals_.size()));
        if (fresh) {
          signals_.push_back(std::make_unique<gpu::hsa::Signal>(0));
          signal_bytes_.push_back(0);
        }
        c.signal = it->second;
        signal_bytes_[c.signal] += t.bytes;
      }
      copies.push_back(c);
    }
    // every buffer set's copies, worked out once (never in launch())
    for (int set = 0; set < sets(); ++set) {
      copies_by_set_.push_back(copies);
      for (std::size_t i = 0; i < copies.size(); ++i) {
        const Transfer& t = plan.transfers[transfers_[i]];
        gpu::hsa::Copy& c = copies_by_set_.back()[i].copy;
        c.dst = dst(t.dst_rank, set) + t.dst_offset;
        c.src = src(t.src_rank, set) + t.src_offset;
      }
    }
    for (std::size_t i : transfers_) engines_used_.push_back(engines[i]);
  }

  ~HsaOperation() override {
    try {
      drain();
    } catch (...) {
    }
  }

  // Before the peers' buffers are unmapped: nothing of this process may still be copying into them.
  void close_peers() override {
    drain();
    GpuOperation::close_peers();
  }

  void arm(int ops) override {
    if (!opt_.host_flag) return;
    for (int k = 0; k < ops; ++k) {
      armed_.push_back(std::make_unique<gpu::hsa::Signal>(1));
      post(armed_.back().get());
    }
  }

  void launch() override {
    if (!opt_.host_flag) return post(nullptr);
    if (armed_.empty()) throw std::logic_error("hsa: launch without a pre-posted operation");
    armed_.front()->store(0);  // releases every copy of this operation
    released_.push_back(std::move(armed_.front()));
    armed_.pop_front();
  }

  void wait() override {
    for (auto& s : signals_) s->spin_until_zero(kTimeoutS);
    released_.clear();  // their copies completed: the dependency signals can go
    if (gpu::hsa::tracing())
      for (std::size_t i = 0; i < signals_.size(); ++i) gpu::hsa::record_copy(*signals_[i], signal_bytes_[i]);
  }

  nlohmann::json details() const override {
    nlohmann::json d = {{"sdma_engines", engines_used_},
                        {"completion_signals", signals_.size()},
                        {"dma_environment", amd::dma_environment().to_json()}};
    return d;
  }

 private:
  // Releases copies still waiting for a trigger that will not come, then waits for every signal.
  void drain() {
    for (auto& d : armed_) d->store(0);
    for (auto& s : signals_) s->spin_until_zero(kTimeoutS);
  }

  // The GPU whose HSA agent owns a rank's buffers, as this process numbers GPUs: another process's
  // rank by its bus id (its buffers are opened here through hipIpcOpenMemHandle).
  int agent_device(int rank) const {
    if (dist::local(rank)) return device(rank);
    const auto& r = dist::world().ranks().at(static_cast<std::size_t>(rank));
    const int d = gpu::device_by_bus_id(r.bus_id);
    if (d < 0)
      throw Unsupported(fmt::format("hsa names both GPUs of a copy, and rank {}'s GPU ({}) is not visible in this process",
                                    rank, r.bus_id));
    return d;
  }

  // Each completion signal counts the copies posted on it; a copy the runtime refuses is taken off
  // again, so that wait() and the destructor never spin on a copy that does not exist. Operations
  // are posted in launch order, so the k-th post moves buffer set k mod sets.
  void post(const gpu::hsa::Signal* dependency) {
    for (const auto& c : copies_by_set_[plan().set_of(posts_++)]) {
      signals_[c.signal]->add(1);
      try {
        gpu::hsa::async_copy(c.copy, dependency, *signals_[c.signal]);
      } catch (...) {
        signals_[c.signal]->add(-1);
        throw;
      }
    }
  }

  HsaOptions opt_;
  std::vector<std::size_t> transfers_;  // the plan transfers this process issues
  std::vector<std::vector<PlannedCopy>> copies_by_set_;  // per buffer set, one per transfer in transfers_
  std::vector<std::unique_ptr<gpu::hsa::Signal>> signals_;
  std::vector<std::uint64_t> signal_bytes_;
  std::vector<int> engines_used_;
  std::size_t posts_ = 0;
  std::deque<std::unique_ptr<gpu::hsa::Signal>> armed_, released_;
};

class HsaEngine final : public Engine {
 public:
  WhyNot unsupported(const Plan& plan, const Options& options, int ops_per_sample) const override {
    const HsaOptions o = HsaOptions::from(options);
    if (o.host_flag && ops_per_sample > kMaxPrePostedOps)
      return fmt::format("pre-launch pre-posts every operation of a sample behind a signal: at most {} (pipeline_depth)",
                         kMaxPrePostedOps);
    const gpu::BuildFacts b = gpu::this_build();
    if (o.packet != HsaPacket::linear) return gpu::missing(b, "hsa packet=broadcast|swap");
    if (o.selection.policy != amd::Policy::runtime) {
      if (auto why = gpu::hsa::copy_on_engine_unsupported()) return why;
      std::vector<int> engines;
      if (auto bad = choose_engines(plan, o.selection, &engines)) return bad;
    }
    return gpu_memory_shortfall(plan);
  }
  std::unique_ptr<Operation> prepare(const Plan& plan, const Options& options) override {
    return std::make_unique<HsaOperation>(plan, HsaOptions::from(options));
  }
  // Each process posts its rank's copies into the other ranks' buffers, opened through IPC handles
  // (compiled only: never run on AMD hardware).
  WhyNot across_processes(const Plan&, const Options&) const override { return std::nullopt; }
};

}  // namespace

std::unique_ptr<Engine> make_hsa_engine() { return std::make_unique<HsaEngine>(); }

}  // namespace dmabench
