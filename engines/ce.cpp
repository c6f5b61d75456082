// ce and ce-batch: the copy (DMA) engines, driven through the runtime, with DMA-Latte's features
// as options (schedule, streams, trigger, completion, graph, issue, gate, local; ce-batch also
// overlap_hint, event_before): their table, help and defaults are in engines/options/ce.cpp (results/SCHEMA.md,
// docs/user-guide.md "DMA options").
// ce issues one cudaMemcpyAsync / hipMemcpyAsync per copy (gpu::copy_kind()); ce-batch one
// cudaMemcpyBatchAsync / hipMemcpyBatchAsync per lane. The same source runs on NVIDIA and AMD through gpu/gpu.hpp.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "engines/options/ce.hpp"
#include "engines/engine_factories.hpp"
#include "engines/gpu_operation.hpp"
#include "amd/environment.hpp"
#include "engines/spin_workers.hpp"
#include "team/team.hpp"

namespace dmabench {
namespace {

constexpr int kMaxPcpyStreams = 64;  // streams auto under pcpy: one stream per copy, at most this many

bool has_pageable(const Plan& plan) {
  for (int r = 0; r < plan.ranks(); ++r)
    for (const Location& l : {plan.src_location(r), plan.dst_location(r)})
      if (l.host && l.kind == HostKind::pageable) return true;
  return false;
}

bool reached(std::uint32_t value, std::uint32_t target) { return static_cast<std::int32_t>(value - target) >= 0; }

// One copy (or chunk of one) issued by a GPU.
struct Item {
  gpu::CopyJob job;  // buffer set 0
  std::size_t dst_stride = 0, src_stride = 0;  // how far the next buffer set's ends are (0: a bounce buffer)
  int unit = 0;  // items of one unit (a bounced chunk's two hops) go to one lane, in order
  int lane = 0;
  bool last_in_lane = false;
  int slot = -1;  // completion slot signalled after this item, or -1
};

// Everything one issuing GPU needs.
struct DeviceWork {
  int rank = 0, device = 0;
  std::vector<gpu::Stream> lanes;
  std::vector<gpu::Event> marks;  // event_before: one per lane, recorded just before the lane's batch
  std::unique_ptr<gpu::Stream> head;     // graph launches and their completion
  std::unique_ptr<gpu::Stream> trigger;  // gpu-flag: the trigger kernel
  std::unique_ptr<gpu::Stream> poll;     // gpu-poll: the polling kernel
  std::vector<Item> items;
  std::vector<std::vector<gpu::CopyJob>> set_jobs;                // per buffer set, the items' copies in item order
  std::vector<std::vector<std::vector<gpu::CopyJob>>> lane_jobs;  // per buffer set, per lane
  std::vector<std::vector<gpu::CopyBatch>> lane_batches;           // ce-batch: lane_jobs as the call takes them
  int slots = 0;                        // completion points per operation
  std::vector<gpu::Event> events;       // event completion of items that do not end their lane
  std::vector<int> event_of_slot;
  gpu::DeviceBuffer words;              // [0] trigger flag, [1 + s] completion slot s (device memory)
  gpu::DeviceBuffer stamps;             // [0] trigger time, [1] completion observed (%globaltimer, ns), [2] scratch
  std::size_t host_slot_base = 0;       // flag-spin: this GPU's slots in the host-mapped array
  std::vector<gpu::Graph> graphs;       // per buffer set
  std::vector<gpu::DeviceBuffer> bounce;  // local=peer-bounce: the peer-side buffers
  std::uint32_t* word(int i) const { return static_cast<std::uint32_t*>(words.data()) + i; }
};

class CeOperation final : public GpuOperation {
 public:
  CeOperation(const Plan& plan, CeOptions opt);

  ~CeOperation() override;

  // Before the peers' buffers are unmapped: nothing of this process may still be copying into them.
  void close_peers() override {
    drain();
    GpuOperation::close_peers();
  }

  void arm(int ops) override;

  void launch() override;

  void wait() override;

  // Waits for one GPU's completion objects (event and gpu-poll completion).
  void settle(DeviceWork& w);

  std::optional<double> device_seconds() override;

  nlohmann::json details() const override;
  std::optional<std::size_t> descriptors() const override {
    std::size_t n = 0;
    for (const auto& w : work_) n += w->items.size();
    return n;
  }

 private:
  std::size_t total_slots() const {
    std::size_t n = 0;
    for (const auto& w : work_) n += w->slots;
    return n;
  }

  static void zero_words(DeviceWork& w) { gpu::fill_words(w.word(0), 1 + w.slots, 0); }

  // The GPU whose memory bounces `device`'s same-GPU copies: the next device of the plan.
  int bounce_device(int device) const;

  void build_items(DeviceWork& w, const std::vector<Transfer>& transfers);

  static gpu::CopyJob job_of(const Item& it, int set) {
    return {static_cast<char*>(it.job.dst) + set * it.dst_stride, static_cast<const char*>(it.job.src) + set * it.src_stride,
            it.job.bytes};
  }

  // The copies of one GPU, as one graph per buffer set: fork every lane from the head stream, join them back.
  void capture(DeviceWork& w);

  // Issues one operation's copies and completion signals for generation g (waits already posted):
  // operation g (counted from 1) moves buffer set (g - 1) mod sets.
  void issue(DeviceWork& w, std::uint32_t g);

  // Releases anything still waiting for a trigger that will not come, then waits for every stream.
  void drain();

  void signal(DeviceWork& w, int slot, std::uint32_t g, const gpu::Stream& s, bool ends_stream);

  // Holds `s` until *flag reaches g: a stream wait on the word, or a one-thread kernel spinning on it.
  void gate(DeviceWork& w, const gpu::Stream& s, const std::uint32_t* flag, std::uint32_t g);

  void post_polls(std::uint32_t target);

  CeOptions opt_;
  std::vector<std::unique_ptr<DeviceWork>> work_;
  std::unique_ptr<gpu::HostMapped> host_trigger_, host_slots_;
  std::unique_ptr<SpinWorkers> workers_;  // issue thread-per-gpu
  std::uint32_t issued_ = 0;  // operations launched (generation of the last one)
  std::uint32_t armed_ = 0;   // operations pre-posted
};

CeOperation::CeOperation(const Plan& plan, CeOptions opt) : GpuOperation(plan, {}), opt_(opt) {
  std::size_t host_slots = 0;
  for (int r : team::local_issuers(plan)) {
    work_.push_back(std::make_unique<DeviceWork>());
    DeviceWork& w = *work_.back();
    w.rank = r;
    w.device = device(r);
    build_items(w, opt_.coalesce ? coalesce(plan.issued_by(r)) : plan.issued_by(r));
    for (int set = 0; set < sets(); ++set) {  // addresses worked out once, never in launch()
      w.set_jobs.emplace_back();
      for (const Item& it : w.items) {
        w.set_jobs[set].push_back(job_of(it, set));
        w.lane_jobs[set][it.lane].push_back(w.set_jobs[set].back());
      }
      if (opt_.batch) w.lane_batches.emplace_back(w.lane_jobs[set].begin(), w.lane_jobs[set].end());
    }
    if (opt_.graph || opt_.trigger == Trigger::gpu_flag || opt_.completion == Completion::gpu_poll)
      w.head = std::make_unique<gpu::Stream>(w.device);
    if (opt_.trigger == Trigger::gpu_flag) w.trigger = std::make_unique<gpu::Stream>(w.device);
    if (opt_.completion == Completion::gpu_poll) w.poll = std::make_unique<gpu::Stream>(w.device);
    w.words = gpu::DeviceBuffer(w.device, sizeof(std::uint32_t) * (1 + w.slots));
    w.stamps = gpu::DeviceBuffer(w.device, 3 * sizeof(std::uint64_t));
    gpu::set_device(w.device);
    zero_words(w);
    w.event_of_slot.assign(w.slots, -1);
    if (opt_.completion == Completion::event && !opt_.graph)
      for (const Item& it : w.items)
        if (it.slot >= 0 && !it.last_in_lane) {
          w.event_of_slot[it.slot] = static_cast<int>(w.events.size());
          w.events.emplace_back(w.device);
        }
    w.host_slot_base = host_slots;
    host_slots += w.slots;
    gpu::preload_kernels(w.device);
  }
  if (opt_.trigger == Trigger::host_flag) host_trigger_ = std::make_unique<gpu::HostMapped>(sizeof(std::uint32_t));
  if (opt_.completion == Completion::flag_spin)
    host_slots_ = std::make_unique<gpu::HostMapped>(sizeof(std::uint32_t) * std::max<std::size_t>(1, host_slots));
  if (opt_.graph)
    for (auto& w : work_) capture(*w);
  if (opt_.thread_per_gpu)
    workers_ = std::make_unique<SpinWorkers>(
        static_cast<int>(work_.size()), [this](int i) { gpu::set_device(work_[i]->device); },
        [this](int i, std::uint32_t g) {
          if (opt_.trigger == Trigger::enqueue) issue(*work_[i], g);
        },
        [this](int i) { settle(*work_[i]); });
}

CeOperation::~CeOperation() {
  workers_.reset();
  try {
    drain();
  } catch (...) {
  }
}

void CeOperation::arm(int ops) {
  if (opt_.trigger == Trigger::enqueue) {
    if (opt_.completion == Completion::gpu_poll) post_polls(issued_ + ops);
    return;
  }
  for (int k = 1; k <= ops; ++k) {
    const std::uint32_t g = issued_ + k;
    for (auto& w : work_) {
      gpu::set_device(w->device);
      const auto* flag = static_cast<const std::uint32_t*>(opt_.trigger == Trigger::host_flag ? host_trigger_->data() : w->word(0));
      if (opt_.graph) {
        gate(*w, *w->head, flag, g);
      } else {
        for (auto& lane : w->lanes) gate(*w, lane, flag, g);
      }
      issue(*w, g);
    }
  }
  armed_ = issued_ + ops;
  if (opt_.completion == Completion::gpu_poll) post_polls(armed_);
}

void CeOperation::launch() {
  const std::uint32_t g = ++issued_;
  switch (opt_.trigger) {
    case Trigger::enqueue:
      if (workers_) {
        workers_->release(g);
        break;
      }
      for (auto& w : work_) {
        gpu::set_device(w->device);
        issue(*w, g);
      }
      break;
    case Trigger::host_flag:
      std::atomic_ref<std::uint32_t>(*static_cast<std::uint32_t*>(host_trigger_->data())).store(g, std::memory_order_release);
      break;
    case Trigger::gpu_flag:
      for (auto& w : work_) {
        gpu::set_device(w->device);
        gpu::launch_trigger(*w->trigger, w->word(0), g, static_cast<std::uint64_t*>(w->stamps.data()));
      }
      break;
  }
}

void CeOperation::wait() {
  if (workers_ && opt_.completion != Completion::flag_spin) return workers_->settle();
  if (workers_) workers_->settle();  // every release issued; the caller spins on the host words
  switch (opt_.completion) {
    case Completion::event:
      for (auto& w : work_) settle(*w);
      break;
    case Completion::flag_spin: {
      auto* slots = static_cast<std::uint32_t*>(host_slots_->data());
      const std::size_t n = total_slots();
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      for (std::size_t i = 0; i < n; ++i) {
        std::atomic_ref<std::uint32_t> word(slots[i]);
        for (unsigned spin = 0; !reached(word.load(std::memory_order_acquire), issued_); ++spin)
          if ((spin & 0xffff) == 0 && std::chrono::steady_clock::now() > deadline)
            throw std::runtime_error(fmt::format("flag-spin completion: host slot {} still {} after 60 s, expected {}", i,
                                                 word.load(), issued_));
      }
      break;
    }
    case Completion::gpu_poll:
      for (auto& w : work_) settle(*w);
      break;
  }
}

void CeOperation::settle(DeviceWork& w) {
  if (opt_.completion == Completion::flag_spin) return;
  if (opt_.completion == Completion::gpu_poll) return w.poll->synchronize();
  for (auto& e : w.events) e.synchronize();
  if (opt_.graph) {
    w.head->synchronize();
  } else {
    for (auto& lane : w.lanes) lane.synchronize();
  }
}

std::optional<double> CeOperation::device_seconds() {
  if (opt_.trigger != Trigger::gpu_flag) return std::nullopt;
  double longest = 0;
  for (auto& w : work_) {
    std::uint64_t t[2] = {0, 0};
    gpu::copy_to_host(t, w->stamps.data(), sizeof t);
    if (t[1] < t[0]) throw std::runtime_error("gpu-flag: completion stamp before trigger stamp");
    longest = std::max(longest, static_cast<double>(t[1] - t[0]) * gpu::gpu_clock_ns_per_tick(w->device) * 1e-9);
  }
  return longest;
}

nlohmann::json CeOperation::details() const {
  nlohmann::json lanes = nlohmann::json::array(), copies = nlohmann::json::array();
  for (const auto& w : work_) {
    lanes.push_back(w->lanes.size());
    copies.push_back(w->items.size());
  }
  nlohmann::json d = {{"lanes_per_gpu", lanes}, {"copies_per_gpu", copies}};
  if (gpu::backend_name() == "hip") {  // AMD pitfalls: DMA switched off, more streams than hardware queues
    d["copy_kind"] = gpu::copy_kind();
    if (opt_.batch && plan().host_memory())
      d["batch_note"] = "ROCm 7.2's hipMemcpyBatchAsync issues host<->device copies one by one (ROCm/clr #273)";
    const amd::DmaEnvironment env = amd::dma_environment();
    std::vector<std::string> warnings = env.warnings;
    std::size_t most = 0;
    for (const auto& w : work_) most = std::max(most, w->lanes.size());
    if (auto w = amd::hw_queue_warning(env, static_cast<int>(most)); !w.empty()) warnings.push_back(w);
    if (!warnings.empty()) d["warnings"] = warnings;
  }
  return d;
}

int CeOperation::bounce_device(int device) const {
  const auto& d = plan().devices;
  const auto at = std::find(d.begin(), d.end(), device) - d.begin();
  for (std::size_t i = 1; i < d.size(); ++i)
    if (d[(at + i) % d.size()] != device) return d[(at + i) % d.size()];
  throw std::runtime_error("local=peer-bounce needs a second GPU in the case");
}

void CeOperation::build_items(DeviceWork& w, const std::vector<Transfer>& transfers) {
  const int k = opt_.streams;
  const int per_transfer = k > static_cast<int>(transfers.size()) ? (k + static_cast<int>(transfers.size()) - 1) / static_cast<int>(transfers.size()) : 1;
  int units = 0;
  for (const Transfer& t : transfers) {
    char* d = dst(t.dst_rank) + t.dst_offset;
    const char* s = src(t.src_rank) + t.src_offset;
    // local=peer-bounce: a same-GPU copy goes out to a buffer on a peer GPU and back, so that
    // only copy engines move it (the runtime runs same-GPU copies on the SMs)
    char* via = nullptr;
    if (opt_.peer_bounce && device(t.src_rank) == device(t.dst_rank) && t.bytes > 0 &&
        !plan().src_location(t.src_rank).host && !plan().dst_location(t.dst_rank).host) {
      w.bounce.emplace_back(bounce_device(w.device), t.bytes);
      via = static_cast<char*>(w.bounce.back().data());
    }
    const std::size_t ds = plan().dst_stride(t.dst_rank), ss = plan().src_stride(t.src_rank);
    // chunks of equal size rounded up to 256 bytes; the last one takes the rest
    const std::size_t chunk = std::max<std::size_t>(256, (t.bytes / per_transfer + 255) / 256 * 256);
    for (std::size_t off = 0; off < t.bytes; off += chunk, ++units) {
      const std::size_t b = std::min(chunk, t.bytes - off);
      if (via) {
        w.items.push_back(Item{gpu::CopyJob{via + off, s + off, b}, 0, ss, units});
        w.items.push_back(Item{gpu::CopyJob{d + off, via + off, b}, ds, 0, units});
      } else {
        w.items.push_back(Item{gpu::CopyJob{d + off, s + off, b}, ds, ss, units});
      }
    }
  }
  const int n = static_cast<int>(w.items.size());
  const int lanes = k > 0 ? std::min(k, units) : (opt_.schedule == Schedule::pcpy && !opt_.batch ? units : 1);
  for (int i = 0; i < lanes; ++i) w.lanes.emplace_back(w.device);
  if (opt_.batch && opt_.event_before)
    for (int i = 0; i < lanes; ++i) w.marks.emplace_back(w.device, true);  // a marker without timing did not help
  w.lane_jobs.assign(sets(), std::vector<std::vector<gpu::CopyJob>>(lanes));
  for (int i = 0; i < n; ++i) w.items[i].lane = w.items[i].unit % lanes;
  for (int l = 0; l < lanes; ++l)
    for (int i = n - 1; i >= 0; --i)
      if (w.items[i].lane == l) {
        w.items[i].last_in_lane = true;
        break;
      }
  if (opt_.graph) {
    w.slots = 1;  // the graph is one unit of work: one completion after it
  } else if (opt_.schedule == Schedule::pcpy) {
    for (int i = 0; i < n; ++i) w.items[i].slot = w.slots++;
  } else {
    for (auto& it : w.items)
      if (it.last_in_lane) it.slot = w.slots++;
  }
}

void CeOperation::capture(DeviceWork& w) {
  gpu::set_device(w.device);
  for (int set = 0; set < sets(); ++set) {
    gpu::Event fork(w.device);
    std::vector<gpu::Event> joins;
    gpu::begin_capture(*w.head);
    fork.record(*w.head);
    for (std::size_t l = 0; l < w.lanes.size(); ++l) {
      gpu::stream_wait_event(w.lanes[l], fork);
      for (const auto& job : w.lane_jobs[set][l]) gpu::copy_async(job.dst, job.src, job.bytes, w.lanes[l]);
      joins.emplace_back(w.device);
      joins.back().record(w.lanes[l]);
      gpu::stream_wait_event(*w.head, joins.back());
    }
    w.graphs.push_back(gpu::end_capture(*w.head));
  }
}

void CeOperation::issue(DeviceWork& w, std::uint32_t g) {
  const int set = plan().set_of(g - 1);
  if (opt_.graph) {
    w.graphs[set].launch(*w.head);
    signal(w, 0, g, *w.head, true);
    return;
  }
  if (opt_.batch) {
    for (std::size_t l = 0; l < w.lanes.size(); ++l) {
      if (!w.marks.empty()) w.marks[l].record(w.lanes[l]);  // event_before (options/ce.cpp says why)
      gpu::copy_batch_async(w.lane_batches[set][l], w.device, w.lanes[l], opt_.overlap_hint);
      signal(w, static_cast<int>(l), g, w.lanes[l], true);  // b2b only: one slot per lane, in lane order
    }
    return;
  }
  for (std::size_t i = 0; i < w.items.size(); ++i) {
    const Item& it = w.items[i];
    const gpu::CopyJob& job = w.set_jobs[set][i];
    gpu::copy_async(job.dst, job.src, job.bytes, w.lanes[it.lane]);
    if (it.slot >= 0) signal(w, it.slot, g, w.lanes[it.lane], it.last_in_lane);
  }
}

void CeOperation::drain() {
  if (host_trigger_) std::atomic_ref<std::uint32_t>(*static_cast<std::uint32_t*>(host_trigger_->data())).store(armed_);
  for (auto& w : work_) {
    gpu::set_device(w->device);
    if (armed_ != issued_) gpu::fill_words(w->word(0), 1, armed_);
    for (auto& l : w->lanes) l.synchronize();
    for (auto* s : {w->head.get(), w->trigger.get(), w->poll.get()})
      if (s) s->synchronize();
  }
}

void CeOperation::signal(DeviceWork& w, int slot, std::uint32_t g, const gpu::Stream& s, bool ends_stream) {
  switch (opt_.completion) {
    case Completion::event:
      if (!ends_stream) w.events[w.event_of_slot[slot]].record(s);
      break;  // the end of a stream is observed by synchronizing the stream
    case Completion::flag_spin:
      gpu::stream_write_value(s, static_cast<std::uint32_t*>(host_slots_->data()) + w.host_slot_base + slot, g);
      break;
    case Completion::gpu_poll:
      gpu::stream_write_value(s, w.word(1 + slot), g);
      break;
  }
}

void CeOperation::gate(DeviceWork& w, const gpu::Stream& s, const std::uint32_t* flag, std::uint32_t g) {
  if (opt_.gate == Gate::wait_value)
    gpu::stream_wait_value(s, flag, g);
  else
    gpu::launch_poll(s, flag, 1, g, static_cast<std::uint64_t*>(w.stamps.data()) + 2);  // its stamp is unused
}

void CeOperation::post_polls(std::uint32_t target) {
  for (auto& w : work_) {
    gpu::set_device(w->device);
    gpu::launch_poll(*w->poll, w->word(1), w->slots, target, static_cast<std::uint64_t*>(w->stamps.data()) + 1);
  }
}

class CeEngine final : public Engine {
 public:
  explicit CeEngine(bool batch) : batch_(batch) {}
  std::unique_ptr<const TypedOptions> parse(const Options& options) const override {
    return std::make_unique<OptionsOf<CeOptions>>(CeOptions::from(options, batch_));
  }
  WhyNot unsupported(const Plan& plan, const TypedOptions& options, int ops_per_sample) const override {
    const CeOptions& o = options_of<CeOptions>(options);
    // combinations that make no sense anywhere first, then what this machine lacks
    // HIP has a batch graph node (hipGraphAddExtMemcpyBatchNode) but no documented capture of the call;
    // RCCL falls back to one hipMemcpyAsync per copy while capturing.
    if (batch_ && o.graph)
      return std::string(gpu::backend_name() == "hip"
                             ? "hipMemcpyBatchAsync is not captured into a graph (not documented to be capturable)"
                             : "cudaMemcpyBatchAsync cannot be captured in a graph");
    if (batch_ && o.schedule == Schedule::pcpy)
      return std::string("ce-batch issues a lane's copies in one call with one completion: schedule pcpy does not apply (use b2b)");
    if (o.trigger == Trigger::gpu_flag && o.completion != Completion::gpu_poll)
      return std::string("trigger gpu-flag is timed on the GPU clock from the trigger to a GPU-side observation: it needs completion gpu-poll");
    if (o.gate == Gate::spin_kernel && o.trigger == Trigger::enqueue)
      return std::string("gate spin-kernel holds pre-posted copies: it needs trigger host-flag or gpu-flag");
    if (o.peer_bounce && batch_)
      return std::string("local peer-bounce needs its two hops in order; a batch call does not order its copies (use ce)");
    if (o.peer_bounce) {
      std::set<int> distinct(plan.devices.begin(), plan.devices.end());
      if (distinct.size() < 2) return std::string("local peer-bounce needs a second GPU in the case");
    }
    if (o.trigger == Trigger::gpu_flag && ops_per_sample > 1)
      return std::string("trigger gpu-flag times one GPU-triggered operation: use timing oneshot");
    if (o.trigger != Trigger::enqueue && ops_per_sample > kMaxPrePostedOps)
      return fmt::format("trigger {} pre-posts every operation of a sample behind its gate: at most {} (pipeline_depth)",
                         o.trigger == Trigger::host_flag ? "host-flag" : "gpu-flag", kMaxPrePostedOps);
    if ((o.trigger != Trigger::enqueue || o.graph) && has_pageable(plan))
      return fmt::format("pageable host memory is copied synchronously by the runtime (through a staging buffer): {} would "
                         "block the thread that posts it behind its own trigger; use pinned, mapped or registered memory",
                         o.graph ? "a copy captured in a graph" : "a copy pre-posted behind a trigger");
    if (o.schedule == Schedule::pcpy && o.streams == 0)
      for (int r : plan.issuers()) {
        const std::size_t copies = (o.coalesce ? coalesce(plan.issued_by(r)) : plan.issued_by(r)).size();
        if (copies > static_cast<std::size_t>(kMaxPcpyStreams))
          return fmt::format("schedule pcpy with streams auto puts each of GPU {}'s {} copies on a stream of its own (at "
                             "most {}): use schedule b2b, or streams=K",
                             plan.devices[r], copies, kMaxPcpyStreams);
      }
    if (batch_)
      if (auto why = gpu::copy_batch_unsupported()) return why;
    if (o.thread_per_gpu)
      if (auto why = SpinWorkers::cpus_short(static_cast<int>(team::local_issuers(plan).size()))) return why;
    if (o.trigger == Trigger::gpu_flag)
      for (int r : team::local_issuers(plan))
        if (auto why = gpu::gpu_clock_unsupported(plan.devices[r])) return why;
    if (o.needs_memops())
      for (int r : team::local_issuers(plan))
        if (auto why = gpu::stream_memops_unsupported(plan.devices[r])) return "stream memory operations unavailable: " + *why;
    return gpu_memory_shortfall(plan);
  }
  std::unique_ptr<Operation> prepare(const Plan& plan, const TypedOptions& options) override {
    return std::make_unique<CeOperation>(plan, options_of<CeOptions>(options));
  }
  // Each process issues its rank's copies into the other ranks' buffers, opened through interprocess
  // handles; trigger and completion words are the issuing process's own (host-mapped or device memory).
  WhyNot across_processes(const Plan&, const TypedOptions& options) const override {
    if (options_of<CeOptions>(options).peer_bounce)
      return std::string("local peer-bounce bounces through a buffer on a second GPU of the same process; a process of a "
                         "multi-process run drives one GPU");
    return std::nullopt;
  }

 private:
  bool batch_;
};

}  // namespace

std::unique_ptr<Engine> make_ce_engine() { return std::make_unique<CeEngine>(false); }
std::unique_ptr<Engine> make_ce_batch_engine() { return std::make_unique<CeEngine>(true); }

}  // namespace dmabench
