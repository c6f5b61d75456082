// hsa (AMD only): SDMA copies through the HSA runtime, one hsa_amd_memory_async_copy[_on_engine] per
// transfer (a block layout's every block), with DMA-Latte's engine selection as options (engines, schedule,
// trigger, packet: their table, help and defaults are in engines/options/hsa.cpp; results/SCHEMA.md, docs/amd.md
// "The hsa engine"). Host memory endpoints come from GpuOperation (hipHostMalloc, hipHostRegister) and are named to HSA
// by their CPU agent (gpu::hsa::host_memory); their copies stay on host-facing engines (host_engines below).
// Completion: the host spins on the HSA completion signals (each copy decrements its signal).
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "amd/engine_map.hpp"
#include "amd/environment.hpp"
#include "core/errors.hpp"
#include "engines/engine_factories.hpp"
#include "team/team.hpp"
#include "engines/gpu_operation.hpp"
#include "engines/options/hsa.hpp"
#include "gpu/features.hpp"
#include "gpu/hsa.hpp"

namespace dmabench {
namespace {

constexpr double kTimeoutS = 60;

struct PlannedCopy {
  gpu::hsa::Copy copy;
  int signal = 0;  // index of its completion signal
};

// ROCr's SDMA ring per blit queue (1 MiB in ROCR-Runtime's sources of August 2025, ../shared/SDMA-FACTS.md §7)
// and what one copy behind a dependency takes there at most (POLL_REGMEM on the dependency 24 bytes,
// COPY_LINEAR 28, the completion's ATOMIC 32, FENCE and TRAP 24, an HDP flush poll 24, timestamps 24: about
// 160): copies pre-posted behind one signal beyond what the ring holds would block the posting itself.
constexpr std::size_t kRocrRingBytes = std::size_t{1} << 20;
constexpr std::size_t kGatedCopyBytes = 192;

// round-robin: the i-th device-to-device copy a GPU issues goes to its engine i mod (its SDMA engines).
WhyNot round_robin_engines(const Plan& plan, std::vector<int>* engines) {
  for (int dev : plan.devices) {
    std::vector<std::size_t> idx;
    for (std::size_t i = 0; i < plan.transfers.size(); ++i)
      if (plan.devices[plan.transfers[i].issuer] == dev && !plan.touches_host(plan.transfers[i])) idx.push_back(i);
    if (idx.empty()) continue;
    const int count = gpu::hsa::sdma_engine_count(dev);
    if (count <= 0) return fmt::format("round-robin: the SDMA engine count of GPU {} is unknown", dev);
    const auto rr = amd::round_robin(std::vector<int>(idx.size(), dev), count);
    for (std::size_t k = 0; k < idx.size(); ++k) (*engines)[idx[k]] = rr[k];
  }
  return std::nullopt;
}

// preferred: the runtime's recommended engine per GPU pair (a GPU's copy to itself: the runtime picks).
WhyNot preferred_engines(const Plan& plan, std::vector<int>* engines) {
  std::map<std::pair<int, int>, int> seen;
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const Transfer& t = plan.transfers[i];
    if (plan.touches_host(t)) continue;
    const int s = plan.devices[t.src_rank], d = plan.devices[t.dst_rank];
    const int e = amd::nth_engine(gpu::hsa::preferred_engines(s, d), seen[{s, d}]++);
    if (e < 0 && s == d) continue;  // no recommendation for a GPU's copy to itself: the runtime picks
    if (e < 0) return fmt::format("preferred: the runtime recommends no SDMA engine for GPU {} -> GPU {}", s, d);
    (*engines)[i] = e;
  }
  return std::nullopt;
}

// map:FILE: the map's engine per GPU pair (a GPU's copy to itself that the map leaves out: the runtime picks).
WhyNot map_engines(const Plan& plan, const std::string& file, std::vector<int>* engines) {
  std::vector<amd::MapEntry> map;
  try {
    map = amd::load_engine_map(file);
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const Transfer& t = plan.transfers[i];
    if (plan.touches_host(t)) continue;
    const int s = plan.devices[t.src_rank], d = plan.devices[t.dst_rank];
    const auto e = amd::map_engine(map, s, d);
    if (!e && s == d) continue;
    if (!e) return fmt::format("engine map {} has no line for GPU {} -> GPU {} ('{},ENGINE,{}')", file, s, d, s, d);
    (*engines)[i] = *e;
  }
  return std::nullopt;
}

// Copies from or to host memory stay on the issuing GPU's host-facing (PCIe) engines, HSA engine ids 0 .. n-1
// (SDMA0 and SDMA1 on MI300X, ../shared/SDMA-FACTS.md §2.3), under every `engines` option. runtime, and
// preferred and map (the driver recommends engines per xGMI link only; a map names GPU pairs): the runtime
// picks (-1), which for host memory is its host-to-device or device-to-host blit, both on PCIe engines
// (ROCm/ROCR-Runtime, runtime/hsa-runtime/core/runtime/amd_gpu_agent.cpp: GpuAgent::InitDma creates them
// with use_xgmi false; GetBlitObject picks them when one agent is a CPU agent). round-robin: a GPU's host
// copies over its host-facing engines in turn (the runtime accepts any engine for a non-xGMI copy,
// GpuAgent::DmaCopyOnEngine, except that on gfx90a its engine 0 takes host-to-device copies only, "due to a RAS
// issue": there the other copies rotate over engines 1 .. n-1).
WhyNot host_engines(const Plan& plan, const amd::Selection& sel, std::vector<int>* engines) {
  if (sel.policy != amd::Policy::round_robin) return std::nullopt;
  std::map<int, int> issued;
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const Transfer& t = plan.transfers[i];
    if (!plan.touches_host(t)) continue;
    const int dev = plan.devices[t.issuer], count = gpu::hsa::host_sdma_engine_count(dev);
    const bool to_device = plan.src_location(t.src_rank).host && !plan.dst_location(t.dst_rank).host;
    const int first = !to_device && gpu::properties(dev).arch.rfind("gfx90a", 0) == 0 ? 1 : 0;
    if (count - first <= 0)
      return fmt::format("round-robin: GPU {} reports no host-facing SDMA engine for this host-memory copy ({} host-facing)", dev,
                         count);
    (*engines)[i] = first + issued[dev]++ % (count - first);
  }
  return std::nullopt;
}

// The engine of every copy of the plan under the selection policy (-1: the runtime picks), or the reason
// it cannot be chosen.
WhyNot choose_engines(const Plan& plan, const amd::Selection& sel, std::vector<int>* engines) {
  engines->assign(plan.transfers.size(), -1);
  WhyNot why;
  switch (sel.policy) {
    case amd::Policy::runtime: break;
    case amd::Policy::round_robin: why = round_robin_engines(plan, engines); break;
    case amd::Policy::preferred: why = preferred_engines(plan, engines); break;
    case amd::Policy::map: why = map_engines(plan, sel.map_file, engines); break;
  }
  if (why) return why;
  return host_engines(plan, sel, engines);
}

// Why the plan's host buffers cannot be HSA copy endpoints: pageable memory, which the runtime neither
// allocated nor locked (pinned and mapped come from hipHostMalloc, registered from hipHostRegister, which
// locks the pages for the GPUs: gpu::allocate_host).
WhyNot host_kind_problem(const Plan& plan) {
  for (int r = 0; r < plan.ranks(); ++r)
    for (const Location& at : {plan.src_location(r), plan.dst_location(r)})
      if (at.host && at.kind == HostKind::pageable)
        return std::string("host memory kind pageable: an HSA copy needs memory its GPU agent can access directly "
                           "(hsa_amd_memory_async_copy), i.e. allocated or locked by the runtime (pinned, mapped, "
                           "registered); pageable pages are neither");
  return std::nullopt;
}

// trigger=host-flag: why the copies a GPU pre-posts behind one signal for a sample would not fit in ROCr's ring.
WhyNot gated_copies_problem(const Plan& plan, int ops_per_sample) {
  std::map<int, std::size_t> per_gpu;
  for (const Transfer& t : plan.transfers) ++per_gpu[plan.devices[t.issuer]];
  constexpr std::size_t kMax = kRocrRingBytes / kGatedCopyBytes;
  for (const auto& [dev, copies] : per_gpu)
    if (copies * static_cast<std::size_t>(ops_per_sample) > kMax)
      return fmt::format("trigger=host-flag pre-posts {} copies of GPU {} ({} per operation x {} operations per sample) behind "
                         "one signal; the runtime's SDMA ring (1 MiB) holds about {} such copies, and posting more would block "
                         "before the trigger is released (fewer blocks or operations per sample fit)",
                         copies * ops_per_sample, dev, copies, ops_per_sample, kMax);
  return std::nullopt;
}

class HsaOperation final : public GpuOperation {
 public:
  HsaOperation(const Plan& plan, HsaOptions opt);

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

  void arm(int ops) override;

  void launch() override;

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

  // A rank's buffer as its copies address it: where it is, or for host memory the address GPU agents use
  // and the CPU agent that owns it (gpu::hsa::host_memory); a host buffer the runtime does not know skips the case.
  struct Endpoint {
    char* base = nullptr;
    std::uint64_t cpu_agent = 0;
  };
  Endpoint endpoint(int rank, char* p, const Location& at) const {
    if (!at.host || !team::local(rank)) return Endpoint{p, 0};
    auto h = gpu::hsa::host_memory(p);
    if (!h) throw Unsupported(fmt::format("host memory kind {} of rank {}: {}", to_string(at.kind), rank, h.why_not()));
    return Endpoint{static_cast<char*>(h->agent_address), h->cpu_agent};
  }

  // The GPU whose HSA agent owns a rank's buffers, as this process numbers GPUs: another process's
  // rank by its bus id (its buffers are opened here through hipIpcOpenMemHandle).
  int agent_device(int rank) const;

  // Each completion signal counts the copies posted on it; a copy the runtime refuses is taken off
  // again, so that wait() and the destructor never spin on a copy that does not exist. Operations
  // are posted in launch order, so the k-th post moves buffer set k mod sets.
  void post(const gpu::hsa::Signal* dependency);

  HsaOptions opt_;
  std::vector<std::size_t> transfers_;  // the plan transfers this process issues
  std::vector<std::vector<PlannedCopy>> copies_by_set_;  // per buffer set, one per transfer in transfers_
  std::vector<std::unique_ptr<gpu::hsa::Signal>> signals_;
  std::vector<std::uint64_t> signal_bytes_;
  std::vector<int> engines_used_;
  std::size_t posts_ = 0;
  std::deque<std::unique_ptr<gpu::hsa::Signal>> armed_, released_;
};

HsaOperation::HsaOperation(const Plan& plan, HsaOptions opt) : GpuOperation(plan, {}), opt_(opt) {
  std::vector<int> engines;
  if (auto why = choose_engines(plan, opt.selection, &engines)) throw std::runtime_error(*why);
  std::map<int, int> signal_of_issuer;
  std::vector<PlannedCopy> copies;  // buffer set 0 (the set's addresses are filled in below)
  for (std::size_t i = 0; i < plan.transfers.size(); ++i) {
    const Transfer& t = plan.transfers[i];
    if (!team::local(t.issuer)) continue;  // another process issues it
    transfers_.push_back(i);
    PlannedCopy c;
    c.copy = gpu::hsa::Copy{
        .dst = nullptr, .dst_device = agent_device(t.dst_rank), .src = nullptr, .src_device = agent_device(t.src_rank),
        .bytes = t.bytes, .engine = engines[i]};
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
  // every buffer set's copies, worked out once (never in launch()): one per transfer, so one per block
  std::vector<Endpoint> src_end, dst_end;
  for (int r = 0; r < plan.ranks(); ++r) {
    src_end.push_back(endpoint(r, src(r), plan.src_location(r)));
    dst_end.push_back(endpoint(r, dst(r), plan.dst_location(r)));
  }
  for (int set = 0; set < sets(); ++set) {
    copies_by_set_.push_back(copies);
    for (std::size_t i = 0; i < copies.size(); ++i) {
      const Transfer& t = plan.transfers[transfers_[i]];
      gpu::hsa::Copy& c = copies_by_set_.back()[i].copy;
      const Endpoint &from = src_end[t.src_rank], &to = dst_end[t.dst_rank];
      c.dst = to.base + set * plan.dst_stride(t.dst_rank) + t.dst_offset;
      c.src = from.base + set * plan.src_stride(t.src_rank) + t.src_offset;
      c.dst_cpu_agent = to.cpu_agent;
      c.src_cpu_agent = from.cpu_agent;
    }
  }
  for (std::size_t i : transfers_) engines_used_.push_back(engines[i]);
}

void HsaOperation::arm(int ops) {
  if (!opt_.host_flag) return;
  for (int k = 0; k < ops; ++k) {
    armed_.push_back(std::make_unique<gpu::hsa::Signal>(1));
    post(armed_.back().get());
  }
}

void HsaOperation::launch() {
  if (!opt_.host_flag) return post(nullptr);
  if (armed_.empty()) throw std::logic_error("hsa: launch without a pre-posted operation");
  armed_.front()->store(0);  // releases every copy of this operation
  released_.push_back(std::move(armed_.front()));
  armed_.pop_front();
}

int HsaOperation::agent_device(int rank) const {
  if (team::local(rank)) return device(rank);
  const auto& r = team::world().ranks().at(static_cast<std::size_t>(rank));
  const int d = gpu::device_by_bus_id(r.bus_id);
  if (d < 0)
    throw Unsupported(fmt::format("hsa names both GPUs of a copy, and rank {}'s GPU ({}) is not visible in this process",
                                  rank, r.bus_id));
  return d;
}

void HsaOperation::post(const gpu::hsa::Signal* dependency) {
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

class HsaEngine final : public Engine {
 public:
  std::unique_ptr<const TypedOptions> parse(const Options& options) const override {
    return std::make_unique<OptionsOf<HsaOptions>>(HsaOptions::from(options));
  }
  WhyNot unsupported(const Plan& plan, const TypedOptions& options, int ops_per_sample) const override {
    const HsaOptions& o = options_of<HsaOptions>(options);
    if (o.host_flag && ops_per_sample > kMaxPrePostedOps)
      return fmt::format("pre-launch pre-posts every operation of a sample behind a signal: at most {} (pipeline_depth)",
                         kMaxPrePostedOps);
    if (auto why = host_kind_problem(plan)) return why;
    if (o.host_flag)
      if (auto why = gated_copies_problem(plan, ops_per_sample)) return why;
    const gpu::BuildFacts b = gpu::this_build();
    if (o.packet != HsaPacket::linear) return gpu::missing(b, "hsa packet=broadcast|swap");
    if (o.selection.policy != amd::Policy::runtime) {
      if (auto why = gpu::hsa::copy_on_engine_unsupported()) return why;
      std::vector<int> engines;
      if (auto bad = choose_engines(plan, o.selection, &engines)) return bad;
    }
    return gpu_memory_shortfall(plan);
  }
  std::unique_ptr<Operation> prepare(const Plan& plan, const TypedOptions& options) override {
    return std::make_unique<HsaOperation>(plan, options_of<HsaOptions>(options));
  }
  // Each process posts its rank's copies into the other ranks' buffers, opened through IPC handles
  // (compiled only: never run on AMD hardware).
  WhyNot across_processes(const Plan&, const TypedOptions&) const override { return std::nullopt; }
};

}  // namespace

std::unique_ptr<Engine> make_hsa_engine() { return std::make_unique<HsaEngine>(); }

}  // namespace dmabench
