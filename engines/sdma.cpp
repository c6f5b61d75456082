// sdma: SDMA queues driven with raw packets, as the DMA-Latte artifact does (SDMA-FACTS.md §3), on an
// amd::sdma::Platform: KFD queues through libhsakmt on the hip backend (gpu/kfd.cpp), the software SDMA
// engine on the host backend (amd/sdma/soft_engine.cpp). The variants are options
// (engines/options/sdma.cpp); the command layouts are engines/sdma_commands.cpp.
//
// Per command: [POLL_REGMEM on a trigger word] + data packets + one sync packet (ATOMIC ADD64 -1 on a
// 64-bit completion word, or FENCE writing 0), then the doorbell. Completion: the host spins on every
// completion word of the operation with acquire loads.
//
// Host memory as an endpoint (a plan's Location in host memory) comes from the platform: on the software
// engine placed pages (mlock'ed but for pageable), on KFD GPU-mapped system memory allocated under the
// node's memory policy, or registered pages (hsaKmtRegisterMemoryToNodes + map); the host fills and checks
// it in place. Copies from or to it run on a host-facing engine (engines/sdma_commands.cpp). Block layouts
// are one COPY_LINEAR per block: pcpy gives every block its own command (completion and doorbell), b2b puts
// `ways` blocks behind one.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "amd/sdma/packets.hpp"
#include "amd/sdma/platform.hpp"
#include "amd/sdma/ring.hpp"
#include "amd/sdma/soft_engine.hpp"
#include "core/datagen.hpp"
#include "engines/engine_factories.hpp"
#include "engines/host_validation.hpp"
#include "engines/sdma_commands.hpp"
#include "engines/options/sdma.hpp"
#ifdef DMABENCH_HAVE_KFD
#include "gpu/kfd.hpp"
#endif

namespace dmabench {
namespace {

namespace sdma = amd::sdma;
using sdma_commands::Command;

constexpr double kTimeoutS = 60;
constexpr int kSlots = kMaxPrePostedOps;  // completion / trigger words of this many operations
// Rings: room for kSlots operations posted ahead, but never more than this (a plan of thousands of blocks
// per operation would otherwise ask for hundreds of MiB of ring), plus slack for NOP padding at wraps.
constexpr std::size_t kMaxRingBytes = std::size_t{16} << 20;
constexpr std::size_t kRingSlack = 4096;
// What a command may carry besides its data packets: a POLL_REGMEM (24 bytes), its sync (ATOMIC 32, FENCE
// 16) and two TIMESTAMPs (12 each) while tracing.
constexpr std::size_t kCommandOverheadBytes = 24 + 32 + 2 * 12;

std::uint64_t addr(const void* p) { return reinterpret_cast<std::uint64_t>(p); }

sdma_commands::EngineChoice choice_of(const sdma::Platform& p) {
  return {[&p](int s, int d) { return p.recommended_engine(s, d); }, [&p](int d) { return p.engine_count(d); },
          [&p](int d) { return p.first_xgmi_engine(d); }, [&p](int d) { return p.gfx_target(d); },
          [&p](int d, int e) { return p.engine_unusable(d, e); }};
}

// The completion packet a command issued by `device` ends with: sync=auto takes ATOMIC where the device's link to
// the CPU has PCIe 64-bit atomics and FENCE where it has not, the choice ROCr makes for its own SDMA completion
// (amd/topology.hpp host_atomics); sync=atomic on a device without them is refused earlier (unsupported()).
SdmaSync sync_for(const sdma::Platform& p, SdmaSync asked, int device) {
  if (asked != SdmaSync::auto_) return asked;
  return p.host_atomics_unsupported(device) ? SdmaSync::fence : SdmaSync::atomic;
}

// Why sync=atomic cannot complete the plan's commands (a GPU without PCIe 64-bit atomics to system memory), or nullopt.
WhyNot atomics_problem(const Plan& plan, const SdmaOptions& o, const sdma::Platform& p) {
  if (o.sync != SdmaSync::atomic) return std::nullopt;
  for (int d : plan.devices)
    if (auto why = p.host_atomics_unsupported(d))
      return fmt::format("sync=atomic: the completion word lives in system memory and {}, so an ATOMIC completion would never "
                         "land (ROCr completes with FENCE there); sync=fence or sync=auto (the default) run",
                         *why);
  return std::nullopt;
}

// What one operation writes at most into each queue's ring, (rank, engine) -> bytes: every command's data
// packets and its overhead (packet sizes do not depend on addresses).
std::map<std::pair<int, int>, std::size_t> bytes_per_queue(const std::vector<Command>& commands, const SdmaOptions& o) {
  const sdma_commands::Where offsets{[](int, std::uint64_t off) { return off; }, [](int, std::uint64_t off) { return off; }};
  std::map<std::pair<int, int>, std::size_t> out;
  for (const Command& cmd : commands) {
    std::size_t b = kCommandOverheadBytes;
    for (const auto& pk : sdma_commands::data_packets(cmd, o, offsets)) b += sdma::dword_count(pk) * 4;
    out[{cmd.rank, cmd.engine}] += b;
  }
  return out;
}

// The ring of a queue whose operations take `per_op` bytes: room for kSlots of them, as a power of two,
// at most kMaxRingBytes.
std::size_t ring_bytes_for(std::size_t per_op) {
  const std::size_t want = std::min(per_op * kSlots + kRingSlack, kMaxRingBytes);
  std::size_t ring = 4096;
  while (ring < want) ring *= 2;
  return ring;
}

// Why some queue's ring cannot hold what the plan posts at once: one operation (submit=gpu stages it whole
// before its doorbell; the others are held to the same bound), or with a pre-launch trigger every
// operation of a sample, posted ahead behind their polls before any is released.
WhyNot ring_problem(const std::vector<Command>& commands, const SdmaOptions& o, int ops_per_sample) {
  const std::size_t ahead = o.trigger == SdmaTrigger::enqueue ? 1 : static_cast<std::size_t>(ops_per_sample);
  for (const auto& [key, per_op] : bytes_per_queue(commands, o)) {
    const std::size_t ring = ring_bytes_for(per_op);
    if (per_op * ahead + kRingSlack <= ring) continue;
    const auto n = std::count_if(commands.begin(), commands.end(),
                                 [&](const Command& c) { return c.rank == key.first && c.engine == key.second; });
    const std::string where = fmt::format("the ring of rank {}'s engine {} ({} commands per operation)", key.first, key.second, n);
    if (ahead == 1)
      return fmt::format("one operation of this plan writes {:.1f} MiB of packets into {}, more than the largest ring the "
                         "sdma engine makes ({} MiB)",
                         per_op / 1048576.0, where, kMaxRingBytes >> 20);
    return fmt::format("the pre-launch trigger posts the {} operations of a sample ahead: {:.1f} MiB of packets in {}, more "
                       "than its {} MiB ring (rings are at most {} MiB); fewer operations per sample (pipeline_depth) or "
                       "trigger=enqueue fit",
                       ahead, per_op * ahead / 1048576.0, where, ring >> 20, kMaxRingBytes >> 20);
  }
  return std::nullopt;
}

// Why the plan's host buffers cannot be copy endpoints on the platform (a kind it cannot take), or nullopt.
WhyNot host_kind_problem(const Plan& plan, const sdma::Platform& p) {
  for (int r = 0; r < plan.ranks(); ++r)
    for (const Location& at : {plan.src_location(r), plan.dst_location(r)})
      if (at.host)
        if (auto why = p.host_kind_unsupported(at.kind)) return fmt::format("host memory kind {}: {}", to_string(at.kind), *why);
  return std::nullopt;
}

// One of a rank's buffers: device memory from the platform, or host memory (a plan Location in host memory).
struct Buffer {
  sdma::Allocation memory;   // the host's address of byte 0 (device memory: the platform's address, for read/write)
  std::uint64_t device = 0;  // the address packets use for byte 0
  bool host = false;
  unsigned char* bytes(std::size_t at = 0) const { return static_cast<unsigned char*>(memory.get()) + at; }
};

// What a traced command's stamps hold: its ticks, bytes and the GPU whose clock wrote them.
struct Stamp {
  std::uint64_t start = 0, end = 0, bytes = 0;
  int device = 0;
};

class SdmaOperation final : public Operation {
 public:
  SdmaOperation(sdma::Platform& p, const Plan& plan, const SdmaOptions& o, std::vector<Command> commands);

  void arm(int ops) override;
  void launch() override;
  void wait() override;

  // Host buffers are written and read by the host where they are; device buffers through the platform
  // (on KFD: SDMA copies staged through host memory on a PCIe engine).
  void fill_sources(std::uint64_t seed) override;
  void poison_destinations(std::uint64_t seed) override;
  // Every destination byte of every set: what a transfer writes, and the poison where none writes (block
  // layouts in a pool) — first_host_mismatch checks both, on host destinations in place and on a copy of
  // each device destination read back whole.
  std::optional<Mismatch> check_destinations(const Plan& expected, std::uint64_t seed) override;
  std::vector<hostmem::BufferInfo> host_buffers() const override { return host_buffers_; }

  nlohmann::json details() const override;
  Maybe<std::unique_ptr<CopyTracer>> copy_tracer() override;

  nlohmann::json packet_dump() const override;

 private:
  // A rank's buffer on its device, or in host memory where the plan puts it (recorded for host_buffers()).
  Buffer buffer(int rank, const Location& at, std::size_t bytes, const char* side);
  // Every buffer set's data packets, worked out once (never in launch()).
  void encode_packets();
  // One queue per (rank, engine) its commands use, with a ring for kSlots operations (at most kMaxRingBytes).
  void create_queues();
  std::size_t trigger_count() const { return o_.word_per_command ? commands_.size() : 1; }
  std::uint64_t* words() const { return static_cast<std::uint64_t*>(signals_.get()); }
  std::uint64_t* completion_word(std::uint64_t op, std::size_t c) const { return words() + (op % kSlots) * commands_.size() + c; }
  std::uint64_t* trigger_word(std::uint64_t op, std::size_t w) const;
  void reset_words(std::uint64_t op);
  bool complete(std::uint64_t op, std::size_t c) const;
  void check_progress(std::uint64_t op, std::size_t c, std::chrono::steady_clock::time_point start) const;

  // Writes operation `op`'s commands into their rings, one doorbell each (none while staging).
  void post(std::uint64_t op, bool poll);

  std::map<std::string, int> packet_counts() const;

  void write_stream(const Buffer& b, std::size_t n, std::uint64_t key);
  void read(void* out, const Buffer& b, std::size_t at, std::size_t n);
  void write(const Buffer& b, std::size_t at, const void* in, std::size_t n);

  class Tracer;  // copy_tracer()'s: defined below

  // 32-byte aligned slots
  std::uint64_t* stamp(std::uint64_t op, std::size_t c, int which) const;
  // While tracing: the stamps of every command of the operations completed since the last call (before
  // their slots are reused: arm() calls it, at most kSlots operations after).
  void collect_stamps();

  // "atomic" or "fence" when every command ends the same way, else which GPUs take which (sync=auto).
  std::string sync_used() const;

  sdma::Platform& p_;
  Plan plan_;
  SdmaOptions o_;
  std::vector<Command> commands_;
  std::vector<SdmaSync> sync_;  // per command: the completion packet it ends with (sync=auto resolved)
  std::vector<Buffer> src_, dst_;
  std::vector<hostmem::BufferInfo> host_buffers_;
  // Memory the engines write (completion and trigger words, timestamps) is declared before the queues, so it is
  // freed after them on every path, a constructor that throws half way included: a queue still running must never
  // write into freed pages.
  sdma::Allocation signals_;
  sdma::Allocation stamps_;
  std::vector<std::vector<std::vector<sdma::Packet>>> data_;  // [set][command]
  std::map<std::pair<int, int>, std::unique_ptr<sdma::Queue>> queues_;  // (rank, engine)
  std::map<std::pair<int, int>, std::unique_ptr<sdma::RingWriter>> writers_;
  std::vector<sdma::RingWriter*> writer_of_;  // per command
  std::map<std::pair<int, int>, sdma::RingWriter::Capture> captures_;
  std::uint64_t launched_ = 0, armed_ = 0, waited_ = 0, collected_ = 0;
  bool tracing_ = false;
  std::vector<Stamp> ticks_;  // per traced command
};

void SdmaOperation::fill_sources(std::uint64_t seed) {
  for (int r = 0; r < plan_.ranks(); ++r) write_stream(src_[r], plan_.src_allocation(r), datagen::stream_key(seed, r));
}

std::uint64_t* SdmaOperation::trigger_word(std::uint64_t op, std::size_t w) const {
  return words() + kSlots * commands_.size() + (op % kSlots) * trigger_count() + w;
}

void SdmaOperation::reset_words(std::uint64_t op) {
  for (std::size_t c = 0; c < commands_.size(); ++c) __atomic_store_n(completion_word(op, c), 1, __ATOMIC_RELEASE);
  for (std::size_t w = 0; w < trigger_count(); ++w) __atomic_store_n(trigger_word(op, w), 1, __ATOMIC_RELEASE);
}

bool SdmaOperation::complete(std::uint64_t op, std::size_t c) const {
  std::uint64_t* w = completion_word(op, c);
  if (sync_[c] == SdmaSync::fence) return __atomic_load_n(reinterpret_cast<std::uint32_t*>(w), __ATOMIC_ACQUIRE) == 0;
  return __atomic_load_n(w, __ATOMIC_ACQUIRE) == 0;
}

void SdmaOperation::read(void* out, const Buffer& b, std::size_t at, std::size_t n) {
  if (b.host) std::memcpy(out, b.bytes(at), n);
  else p_.read(out, b.bytes(at), n);
}

void SdmaOperation::write(const Buffer& b, std::size_t at, const void* in, std::size_t n) {
  if (b.host) std::memcpy(b.bytes(at), in, n);
  else p_.write(b.bytes(at), in, n);
}

// TIMESTAMP GET_GLOBAL after the poll and after the data packets of every command while tracing;
// the GPU ticks become host steady-clock ns through two clock-counter pairs (start and stop) of the GPU
// whose engine wrote them, the conversion ROCr's GpuAgent::TranslateTime makes per agent: the SDMA global
// timestamp and that GPU's KFD clock counter are taken to be one time base (SDMA-FACTS.md §1.8, §3.5);
// GPUs' counters differ in offset and need not share a rate. The copy-end TIMESTAMP follows the data
// packets directly, as ROCr's end timestamp does (amd_blit_sdma.cpp SubmitCommand: copy packets, then
// BuildGetGlobalTimestampCommand); whether the engine takes it only once the copy's last writes have
// landed is UNCONFIRMED (ROCr uses FENCE, not WRITE, for signals because "the SDMA engine may overlap a
// serial copy/write packets"), so the breakdown's source says copy end may be early.
class SdmaOperation::Tracer final : public CopyTracer {
 public:
  explicit Tracer(SdmaOperation& op) : op_(op) {}
  std::string source() const override {
    return fmt::format("SDMA TIMESTAMP (GET_GLOBAL) packets around each command's data packets on the {}, converted with two "
                       "clock-counter pairs of the issuing GPU taken at the start and the end of the traced pass{}; the "
                       "copy-end stamp follows the data packets as ROCr's does, and whether it waits for the copy's last "
                       "writes is unconfirmed: copy end may be early (copy an under-, completion an over-estimate)",
                       op_.p_.name(), op_.p_.hardware_times() ? "" : " (software times, not hardware times)");
  }
  ~Tracer() override { op_.tracing_ = false; }
  void start() override {
    op_.ticks_.clear();
    op_.collected_ = op_.launched_;  // operations from here on carry timestamps
    op_.tracing_ = true;
    begin_.clear();
    for (int d : op_.plan_.devices) begin_.emplace(d, op_.p_.clock_counters(d));
  }
  std::vector<CopyInterval> stop() override {
    op_.collect_stamps();
    op_.tracing_ = false;
    std::map<int, sdma::ClockMap> clocks;  // each GPU's own pairs
    for (const auto& [d, begin] : begin_) {
      auto map = sdma::ClockMap::between(begin, op_.p_.clock_counters(d));
      if (!map) throw std::runtime_error(fmt::format("GPU {}: {}", d, map.why_not()));
      clocks.emplace(d, *map);
    }
    std::vector<CopyInterval> out;
    for (const Stamp& st : op_.ticks_) {
      const sdma::ClockMap& m = clocks.at(st.device);
      out.push_back(CopyInterval{m.host_ns(st.start), m.host_ns(st.end), st.bytes});
    }
    return out;
  }

 private:
  SdmaOperation& op_;
  std::map<int, sdma::ClockPair> begin_;
};

Maybe<std::unique_ptr<CopyTracer>> SdmaOperation::copy_tracer() { return std::unique_ptr<CopyTracer>(std::make_unique<Tracer>(*this)); }

void SdmaOperation::collect_stamps() {
  if (!tracing_) return;
  for (; collected_ < waited_; ++collected_)
    for (std::size_t c = 0; c < commands_.size(); ++c) {
      std::uint64_t bytes = 0;
      for (const auto& u : commands_[c].units) bytes += u.transfers[0].bytes * u.transfers.size();
      ticks_.push_back(Stamp{__atomic_load_n(stamp(collected_, c, 0), __ATOMIC_ACQUIRE),
                             __atomic_load_n(stamp(collected_, c, 1), __ATOMIC_ACQUIRE), bytes,
                             plan_.devices[commands_[c].rank]});
    }
}

SdmaOperation::SdmaOperation(sdma::Platform& p, const Plan& plan, const SdmaOptions& o, std::vector<Command> commands) : p_(p), plan_(plan), o_(o), commands_(std::move(commands)) {
  for (int r = 0; r < plan.ranks(); ++r) {
    src_.push_back(buffer(r, plan.src_location(r), plan.src_allocation(r), "src"));
    dst_.push_back(plan.exchange ? src_.back() : buffer(r, plan.dst_location(r), plan.dst_allocation(r), "dst"));
  }
  const std::size_t c = commands_.size(), triggers = o.word_per_command ? c : 1;
  signals_ = p.alloc_host((kSlots * c + kSlots * triggers) * 8, plan.devices);
  stamps_ = p.alloc_host(kSlots * c * 64, plan.devices);
  for (const Command& cmd : commands_) sync_.push_back(sync_for(p, o.sync, plan.devices[cmd.rank]));
  encode_packets();
  create_queues();
}

void SdmaOperation::arm(int ops) {
  if (launched_ != waited_) throw std::logic_error("sdma: arm() with operations still in flight");
  collect_stamps();  // of the operations traced before (never in the timed wait())
  if (ops > kSlots) throw std::logic_error(fmt::format("sdma: {} operations armed at once, more than {}", ops, kSlots));
  for (int k = 0; k < ops; ++k) reset_words(launched_ + k);
  armed_ = launched_ + ops;
  if (o_.trigger != SdmaTrigger::enqueue)
    for (int k = 0; k < ops; ++k) post(launched_ + k, true);
}

void SdmaOperation::launch() {
  const std::uint64_t op = launched_++;
  if (op >= armed_) {
    if (o_.trigger != SdmaTrigger::enqueue) throw std::logic_error("sdma: launch() beyond what arm() posted");
    reset_words(op);
  }
  if (o_.trigger == SdmaTrigger::enqueue) {
    if (o_.submit == SdmaSubmit::host) return post(op, false);
    for (auto& [key, w] : writers_) w->begin_staging();  // submit=gpu: the GPU of each rank writes its rings
    post(op, false);
    for (auto& [key, w] : writers_)
      if (auto staged = w->end_staging(); !staged.dwords.empty()) p_.gpu_submit(plan_.devices[key.first], w->queue(), staged);
    return;
  }
  for (std::size_t w = 0; w < trigger_count(); ++w)  // prelaunch: the host's stores; gpu-flag: rank 0's GPU's
    if (o_.trigger == SdmaTrigger::prelaunch)
      __atomic_store_n(trigger_word(op, w), 0, __ATOMIC_RELEASE);
    else
      p_.gpu_store(plan_.devices[0], trigger_word(op, w), 0);
}

void SdmaOperation::wait() {
  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t op = waited_; op < launched_; ++op)
    for (std::size_t c = 0; c < commands_.size(); ++c)
      for (std::uint64_t spins = 0; !complete(op, c); ++spins)
        if ((spins & 0xFFF) == 0xFFF) check_progress(op, c, start);
  waited_ = launched_;
}

void SdmaOperation::poison_destinations(std::uint64_t seed) {
  if (plan_.exchange) return;  // the destination is the source: it holds the data to exchange
  for (int r = 0; r < plan_.ranks(); ++r)
    write_stream(dst_[r], plan_.dst_allocation(r), datagen::stream_key(seed ^ datagen::kPoisonSalt, r));
  for (int set = 0; set < plan_.sets; ++set)
    for (const Transfer& t : plan_.preset) {  // in-place blocks: there before the operation starts
      std::vector<unsigned char> block(t.bytes);
      read(block.data(), src_[t.src_rank], set * plan_.src_stride(t.src_rank) + t.src_offset, t.bytes);
      write(dst_[t.dst_rank], set * plan_.dst_stride(t.dst_rank) + t.dst_offset, block.data(), t.bytes);
    }
}

std::optional<Mismatch> SdmaOperation::check_destinations(const Plan& expected, std::uint64_t seed) {
  if (expected.sets != plan_.sets) throw std::logic_error("check_destinations: the plan's buffer sets differ from the operation's");
  std::vector<std::vector<unsigned char>> copies(plan_.ranks());
  for (int r = 0; r < plan_.ranks(); ++r) {
    if (dst_[r].host) continue;
    copies[r].resize(plan_.dst_allocation(r));
    p_.read(copies[r].data(), dst_[r].memory.get(), copies[r].size());
  }
  return first_host_mismatch(expected, seed, [&](int r) {
    return HostDestination{dst_[r].host ? dst_[r].bytes() : copies[r].data(), datagen::stream_key(seed ^ datagen::kPoisonSalt, r)};
  });
}

nlohmann::json SdmaOperation::details() const {
  nlohmann::json queues = nlohmann::json::array();
  for (const auto& [key, q] : queues_) queues.push_back({{"rank", key.first}, {"engine", q->engine()}, {"queue", q->describe()}});
  return {{"platform", p_.describe()},
          {"hardware_times", p_.hardware_times()},
          {"commands_per_operation", commands_.size()},
          {"sync", sync_used()},
          {"packets_per_operation", packet_counts()},
          {"queues", queues}};
}

nlohmann::json SdmaOperation::packet_dump() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [key, cap] : captures_) {
    nlohmann::json q{{"rank", key.first}, {"device", plan_.devices[key.first]}, {"engine", key.second},
                     {"queue", queues_.at(key)->describe()}};
    q.update(sdma::to_json(cap));
    out.push_back(q);
  }
  return {{"platform", p_.name()}, {"hardware_times", p_.hardware_times()}, {"queues", out}};
}

Buffer SdmaOperation::buffer(int rank, const Location& at, std::size_t bytes, const char* side) {
  if (!at.host) {
    sdma::Allocation a = p_.alloc_device(plan_.devices[rank], bytes, plan_.devices);
    const std::uint64_t device = addr(a.get());
    return Buffer{std::move(a), device, false};
  }
  hostmem::BufferInfo info = buffer_info(rank, side, at, bytes);
  sdma::HostBuffer h = p_.alloc_host_buffer(at.kind, bytes, at.node, plan_.devices, info);
  host_buffers_.push_back(std::move(info));
  return Buffer{std::move(h.memory), h.device_address, true};
}

void SdmaOperation::encode_packets() {
  for (int set = 0; set < plan_.sets; ++set) {
    const sdma_commands::Where where{
        [this, set](int r, std::uint64_t off) { return src_[r].device + set * plan_.src_stride(r) + off; },
        [this, set](int r, std::uint64_t off) { return dst_[r].device + set * plan_.dst_stride(r) + off; }};
    data_.emplace_back();
    for (const Command& cmd : commands_) data_.back().push_back(sdma_commands::data_packets(cmd, o_, where));
  }
}

void SdmaOperation::create_queues() {
  for (const auto& [key, per_op] : bytes_per_queue(commands_, o_)) {
    const int device = plan_.devices[key.first];
    auto q = p_.create_queue(device, key.second, ring_bytes_for(per_op));
    if (!q) throw std::runtime_error(fmt::format("SDMA queue for GPU {} engine {}: {}", device, key.second, q.why_not()));
    queues_[key] = std::move(q).value();
    writers_[key] = std::make_unique<sdma::RingWriter>(*queues_[key]);
  }
  for (const Command& cmd : commands_) writer_of_.push_back(writers_.at({cmd.rank, cmd.engine}).get());  // no lookup in launch()
}

void SdmaOperation::check_progress(std::uint64_t op, std::size_t c, std::chrono::steady_clock::time_point start) const {
  for (const auto& [key, q] : queues_)
    if (auto why = q->fault()) throw std::runtime_error(*why);
  if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > kTimeoutS)
    throw std::runtime_error(fmt::format("timeout: command {} of {} (rank {}, engine {}) of operation {} not complete after {} s",
                                         c + 1, commands_.size(), commands_[c].rank, commands_[c].engine, op, kTimeoutS));
  std::this_thread::yield();
}

void SdmaOperation::post(std::uint64_t op, bool poll) {
  const auto& data = data_[plan_.set_of(op)];
  const bool capture = op == 0;
  if (capture)
    for (auto& [key, w] : writers_) w->start_capture();
  for (std::size_t c = 0; c < commands_.size(); ++c) {
    sdma::RingWriter& w = *writer_of_[c];
    if (poll) w.put(sdma::PollRegMem{.addr = addr(trigger_word(op, o_.word_per_command ? c : 0)), .reference = 0});
    if (tracing_) w.put(sdma::TimestampGlobal{addr(stamp(op, c, 0))});
    for (const auto& pk : data[c]) w.put(pk);
    if (tracing_) w.put(sdma::TimestampGlobal{addr(stamp(op, c, 1))});
    if (sync_[c] == SdmaSync::atomic)
      w.put(sdma::AtomicAdd64{addr(completion_word(op, c)), ~std::uint64_t{0}});
    else
      w.put(sdma::Fence{addr(completion_word(op, c)), 0});
    w.submit();
  }
  if (capture)
    for (auto& [key, w] : writers_) captures_[key] = w->stop_capture();
}

std::map<std::string, int> SdmaOperation::packet_counts() const {
  std::map<std::string, int> n;
  for (const auto& pks : data_[0])
    for (const auto& pk : pks) ++n[sdma::packet_name(pk)];
  for (SdmaSync sync : sync_) ++n[sync == SdmaSync::atomic ? "ATOMIC_ADD64" : "FENCE"];
  if (o_.trigger != SdmaTrigger::enqueue) n["POLL_REGMEM"] += static_cast<int>(commands_.size());
  return n;
}

void SdmaOperation::write_stream(const Buffer& b, std::size_t n, std::uint64_t key) {
  if (b.host) return fill_stream(b.bytes(), n, key);
  std::vector<unsigned char> bytes(n);
  fill_stream(bytes.data(), n, key);
  p_.write(b.memory.get(), bytes.data(), n);
}

std::uint64_t* SdmaOperation::stamp(std::uint64_t op, std::size_t c, int which) const {
  return static_cast<std::uint64_t*>(stamps_.get()) + ((op % kSlots) * commands_.size() + c) * 8 + which * 4;
}

std::string SdmaOperation::sync_used() const {
  std::vector<int> atomic, fence;
  for (std::size_t c = 0; c < commands_.size(); ++c) {
    auto& list = sync_[c] == SdmaSync::atomic ? atomic : fence;
    const int d = plan_.devices[commands_[c].rank];
    if (std::find(list.begin(), list.end(), d) == list.end()) list.push_back(d);
  }
  if (fence.empty()) return "atomic";
  if (atomic.empty()) return "fence";
  return fmt::format("atomic on GPUs {}, fence on GPUs {}", fmt::join(atomic, ","), fmt::join(fence, ","));
}

class SdmaEngine final : public Engine {
 public:
  explicit SdmaEngine(std::unique_ptr<sdma::Platform> p) : p_(std::move(p)) {}
  std::unique_ptr<const TypedOptions> parse(const Options& options) const override {
    return std::make_unique<OptionsOf<SdmaOptions>>(SdmaOptions::from(options));
  }
  WhyNot unsupported(const Plan& plan, const TypedOptions& options, int ops_per_sample) const override {
    const SdmaOptions& o = options_of<SdmaOptions>(options);
    if (ops_per_sample > kSlots)
      return fmt::format("{} operations per sample: the sdma engine keeps completion words for {}", ops_per_sample, kSlots);
    if (o.submit == SdmaSubmit::gpu && o.trigger != SdmaTrigger::enqueue)
      return std::string("submit=gpu writes the packets when the operation starts: it needs trigger=enqueue");
    if (o.submit == SdmaSubmit::gpu || o.trigger == SdmaTrigger::gpu_flag)
      if (auto why = p_->gpu_initiated_unsupported()) return *why;
    for (int d : plan.devices)
      if (d >= p_->device_count()) return fmt::format("device {} is not one of the {} devices of the {}", d, p_->device_count(), p_->name());
    if (auto why = host_kind_problem(plan, *p_)) return why;
    if (auto why = atomics_problem(plan, o, *p_)) return why;
    auto units = sdma_commands::plan_units(plan, o, choice_of(*p_));
    if (!units) return units.why_not();
    if (auto why = ring_problem(sdma_commands::schedule(units.value(), o), o, ops_per_sample)) return why;
    return host_memory_shortfall(host_bytes_needed(plan));
  }
  std::unique_ptr<Operation> prepare(const Plan& plan, const TypedOptions& options) override {
    const SdmaOptions& o = options_of<SdmaOptions>(options);
    auto units = sdma_commands::plan_units(plan, o, choice_of(*p_));
    if (!units) throw std::logic_error("sdma: prepare() of a plan it cannot run: " + units.why_not());
    return std::make_unique<SdmaOperation>(*p_, plan, o, sdma_commands::schedule(units.value(), o));
  }
  bool exchanges(const TypedOptions& options) const override { return options_of<SdmaOptions>(options).packet == SdmaPacketKind::swap; }

 private:
  // Host memory a case takes: its host buffers, a validation copy of every device destination, and on the
  // software engine the device buffers too (host memory there), twice (the staging of fill and poison).
  std::size_t host_bytes_needed(const Plan& plan) const {
    std::size_t host = 0, device = 0, readback = 0;
    for (int r = 0; r < plan.ranks(); ++r) {
      (plan.src_location(r).host ? host : device) += plan.src_allocation(r);
      if (plan.exchange) continue;
      (plan.dst_location(r).host ? host : device) += plan.dst_allocation(r);
      if (!plan.dst_location(r).host) readback += plan.dst_allocation(r);
    }
    return host + (p_->hardware_times() ? readback : 2 * device);
  }

  std::unique_ptr<sdma::Platform> p_;
};

}  // namespace

std::unique_ptr<Engine> make_sdma_engine_on(std::unique_ptr<sdma::Platform> platform) {
  return std::make_unique<SdmaEngine>(std::move(platform));
}

Maybe<std::unique_ptr<Engine>> make_sdma_engine(std::string_view backend) {
  auto p = make_sdma_platform(backend);
  if (!p) return Maybe<std::unique_ptr<Engine>>::no(p.why_not());
  return std::unique_ptr<Engine>(std::make_unique<SdmaEngine>(std::move(p).value()));
}

std::vector<std::string> sdma_platform_facts(const sdma::Platform& p, int max_devices) {
  std::vector<std::string> out;
  for (int d = 0; d < std::min(p.device_count(), max_devices); ++d) {
    const WhyNot no_atomics = p.host_atomics_unsupported(d);
    out.push_back(fmt::format("GPU {}: PCIe 64-bit atomics to system memory: {}; sdma sync=auto (the default) completes with {}", d,
                              no_atomics ? "no (" + *no_atomics + ")" : std::string("yes"), no_atomics ? "FENCE" : "ATOMIC"));
    std::vector<int> usable;
    std::string left_out;
    for (int e = 0; e < p.engine_count(d); ++e) {
      if (auto why = p.engine_unusable(d, e)) {
        if (left_out.empty()) left_out = "; left out: " + *why;
      } else {
        usable.push_back(e);
      }
    }
    out.push_back(fmt::format("GPU {}: usable SDMA engines: {} ({} of {} counted; host-facing below {}){}", d,
                              usable.empty() ? std::string("none") : fmt::format("{}", fmt::join(usable, ",")), usable.size(),
                              p.engine_count(d), p.first_xgmi_engine(d), left_out));
  }
  return out;
}

Maybe<std::unique_ptr<sdma::Platform>> make_sdma_platform(std::string_view backend) {
  using Result = Maybe<std::unique_ptr<sdma::Platform>>;
  if (backend == "host") return sdma::make_soft_platform();
#ifdef DMABENCH_HAVE_KFD
  if (backend == "hip") return gpu::make_kfd_platform();
#endif
  return Result::no(fmt::format("this build has no sdma engine for the {} backend (the hip backend needs libhsakmt's headers at "
                                "configure time: Debian libhsakmt-dev, ROCm's hsakmt)",
                                backend));
}

}  // namespace dmabench
