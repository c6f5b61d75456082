// sdma: SDMA queues driven with raw packets, as the DMA-Latte artifact does (SDMA-FACTS.md §3), on an
// amd::sdma::Platform: KFD queues through libhsakmt on the hip backend (gpu/kfd.cpp), the software SDMA
// engine on the host backend (amd/sdma/soft_engine.cpp). The variants are options
// (engines/sdma_options.cpp); the command layouts are engines/sdma_commands.cpp.
//
// Per command: [POLL_REGMEM on a trigger word] + data packets + one sync packet (ATOMIC ADD64 -1 on a
// 64-bit completion word, or FENCE writing 0), then the doorbell. Completion: the host spins on every
// completion word of the operation with acquire loads.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "amd/sdma/packets.hpp"
#include "amd/sdma/platform.hpp"
#include "amd/sdma/ring.hpp"
#include "amd/sdma/soft_engine.hpp"
#include "core/datagen.hpp"
#include "engines/engine_factories.hpp"
#include "engines/host_validation.hpp"
#include "engines/sdma_commands.hpp"
#include "engines/sdma_options.hpp"
#ifdef DMABENCH_HAVE_KFD
#include "gpu/kfd.hpp"
#endif

namespace dmabench {
namespace {

namespace sdma = amd::sdma;
using sdma_commands::Command;

constexpr double kTimeoutS = 60;
constexpr int kSlots = kMaxPrePostedOps;  // completion / trigger words of this many operations

std::uint64_t addr(const void* p) { return reinterpret_cast<std::uint64_t>(p); }

sdma_commands::EngineChoice choice_of(const sdma::Platform& p) {
  return {[&p](int s, int d) { return p.recommended_engine(s, d); }, [&p](int d) { return p.engine_count(d); },
          [&p](int d) { return p.first_xgmi_engine(d); }};
}

// The ring a command queue needs for kSlots pre-posted operations of its commands, as a power of two.
std::size_t ring_bytes_for(std::size_t bytes_per_op) {
  std::size_t need = bytes_per_op * kSlots + 4096, ring = 4096;
  while (ring < need) ring *= 2;
  return ring;
}

class SdmaOperation final : public Operation {
 public:
  SdmaOperation(sdma::Platform& p, const Plan& plan, const SdmaOptions& o, std::vector<Command> commands)
      : p_(p), plan_(plan), o_(o), commands_(std::move(commands)) {
    for (int r = 0; r < plan.ranks(); ++r) {
      src_.push_back(p.alloc_device(plan.devices[r], plan.src_allocation(r), plan.devices));
      dst_.push_back(plan.exchange ? src_.back() : p.alloc_device(plan.devices[r], plan.dst_allocation(r), plan.devices));
    }
    const std::size_t c = commands_.size(), triggers = o.word_per_command ? c : 1;
    signals_ = p.alloc_host((kSlots * c + kSlots * triggers) * 8, plan.devices);
    stamps_ = p.alloc_host(kSlots * c * 64, plan.devices);
    for (int set = 0; set < plan.sets; ++set) {
      const sdma_commands::Where where{[this, set](int r, std::uint64_t off) { return addr(src(r, set)) + off; },
                                       [this, set](int r, std::uint64_t off) { return addr(dst(r, set)) + off; }};
      data_.emplace_back();
      for (const Command& cmd : commands_) data_.back().push_back(sdma_commands::data_packets(cmd, o, where));
    }
    std::map<std::pair<int, int>, std::size_t> per_op_bytes;
    for (std::size_t i = 0; i < c; ++i) {
      std::size_t b = 24 + 32 + 2 * 12 + 36;  // poll, sync, two timestamps, padding slack
      for (const auto& pk : data_[0][i]) b += sdma::dword_count(pk) * 4;
      per_op_bytes[{commands_[i].rank, commands_[i].engine}] += b;
    }
    for (const auto& [key, bytes] : per_op_bytes) {
      auto q = p.create_queue(plan.devices[key.first], key.second, ring_bytes_for(bytes));
      if (!q) throw std::runtime_error(fmt::format("SDMA queue for GPU {} engine {}: {}", plan.devices[key.first], key.second, q.why_not()));
      queues_[key] = std::move(q).value();
      writers_[key] = std::make_unique<sdma::RingWriter>(*queues_[key]);
    }
    for (const Command& cmd : commands_) writer_of_.push_back(writers_.at({cmd.rank, cmd.engine}).get());  // no lookup in launch()
  }

  void arm(int ops) override {
    if (launched_ != waited_) throw std::logic_error("sdma: arm() with operations still in flight");
    collect_stamps();  // of the operations traced before (never in the timed wait())
    if (ops > kSlots) throw std::logic_error(fmt::format("sdma: {} operations armed at once, more than {}", ops, kSlots));
    for (int k = 0; k < ops; ++k) reset_words(launched_ + k);
    armed_ = launched_ + ops;
    if (o_.trigger != SdmaTrigger::enqueue)
      for (int k = 0; k < ops; ++k) post(launched_ + k, true);
  }

  void launch() override {
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

  void wait() override {
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t op = waited_; op < launched_; ++op)
      for (std::size_t c = 0; c < commands_.size(); ++c)
        for (std::uint64_t spins = 0; !complete(op, c); ++spins)
          if ((spins & 0xFFF) == 0xFFF) check_progress(op, c, start);
    waited_ = launched_;
  }

  void fill_sources(std::uint64_t seed) override {
    for (int r = 0; r < plan_.ranks(); ++r) write_stream(src_[r].get(), plan_.src_allocation(r), datagen::stream_key(seed, r));
  }
  void poison_destinations(std::uint64_t seed) override {
    if (plan_.exchange) return;  // the destination is the source: it holds the data to exchange
    for (int r = 0; r < plan_.ranks(); ++r)
      write_stream(dst_[r].get(), plan_.dst_allocation(r), datagen::stream_key(seed ^ datagen::kPoisonSalt, r));
    for (int set = 0; set < plan_.sets; ++set)
      for (const Transfer& t : plan_.preset) {  // in-place blocks: there before the operation starts
        std::vector<unsigned char> block(t.bytes);
        p_.read(block.data(), src(t.src_rank, set) + t.src_offset, t.bytes);
        p_.write(dst(t.dst_rank, set) + t.dst_offset, block.data(), t.bytes);
      }
  }
  std::optional<Mismatch> check_destinations(const Plan& expected, std::uint64_t seed) override {
    if (expected.sets != plan_.sets) throw std::logic_error("check_destinations: the plan's buffer sets differ from the operation's");
    std::vector<std::vector<unsigned char>> copies(plan_.ranks());
    for (int r = 0; r < plan_.ranks(); ++r) {
      copies[r].resize(plan_.dst_allocation(r));
      p_.read(copies[r].data(), dst_[r].get(), copies[r].size());
    }
    return first_host_mismatch(expected, seed, [&](int r) { return copies[r].data(); });
  }

  nlohmann::json details() const override {
    nlohmann::json queues = nlohmann::json::array();
    for (const auto& [key, q] : queues_) queues.push_back({{"rank", key.first}, {"engine", q->engine()}, {"queue", q->describe()}});
    return {{"platform", p_.describe()},
            {"hardware_times", p_.hardware_times()},
            {"commands_per_operation", commands_.size()},
            {"packets_per_operation", packet_counts()},
            {"queues", queues}};
  }
  // TIMESTAMP GET_GLOBAL after the poll and after the data packets of every command while tracing;
  // the GPU ticks become host steady-clock ns through two clock-counter pairs (start and stop), the
  // conversion ROCr's TranslateTime makes: the SDMA global timestamp and KFD's GPU clock counter are
  // taken to be one time base (SDMA-FACTS.md §1.8, §3.5).
  Maybe<std::unique_ptr<CopyTracer>> copy_tracer() override { return std::unique_ptr<CopyTracer>(std::make_unique<Tracer>(*this)); }

  nlohmann::json packet_dump() const override {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& [key, cap] : captures_) {
      nlohmann::json q{{"rank", key.first}, {"device", plan_.devices[key.first]}, {"engine", key.second},
                       {"queue", queues_.at(key)->describe()}};
      q.update(sdma::to_json(cap));
      out.push_back(q);
    }
    return {{"platform", p_.name()}, {"hardware_times", p_.hardware_times()}, {"queues", out}};
  }

 private:
  // Rank's buffers of buffer set `set` (Plan::sets).
  char* src(int rank, int set) const { return static_cast<char*>(src_[rank].get()) + set * plan_.src_stride(rank); }
  char* dst(int rank, int set) const { return static_cast<char*>(dst_[rank].get()) + set * plan_.dst_stride(rank); }
  std::size_t trigger_count() const { return o_.word_per_command ? commands_.size() : 1; }
  std::uint64_t* words() const { return static_cast<std::uint64_t*>(signals_.get()); }
  std::uint64_t* completion_word(std::uint64_t op, std::size_t c) const { return words() + (op % kSlots) * commands_.size() + c; }
  std::uint64_t* trigger_word(std::uint64_t op, std::size_t w) const {
    return words() + kSlots * commands_.size() + (op % kSlots) * trigger_count() + w;
  }
  void reset_words(std::uint64_t op) {
    for (std::size_t c = 0; c < commands_.size(); ++c) __atomic_store_n(completion_word(op, c), 1, __ATOMIC_RELEASE);
    for (std::size_t w = 0; w < trigger_count(); ++w) __atomic_store_n(trigger_word(op, w), 1, __ATOMIC_RELEASE);
  }
  bool complete(std::uint64_t op, std::size_t c) const {
    std::uint64_t* w = completion_word(op, c);
    if (o_.sync == SdmaSync::fence) return __atomic_load_n(reinterpret_cast<std::uint32_t*>(w), __ATOMIC_ACQUIRE) == 0;
    return __atomic_load_n(w, __ATOMIC_ACQUIRE) == 0;
  }
  void check_progress(std::uint64_t op, std::size_t c, std::chrono::steady_clock::time_point start) const {
    for (const auto& [key, q] : queues_)
      if (auto why = q->fault()) throw std::runtime_error(*why);
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > kTimeoutS)
      throw std::runtime_error(fmt::format("timeout: command {} of {} (rank {}, engine {}) of operation {} not complete after {} s",
                                           c + 1, commands_.size(), commands_[c].rank, commands_[c].engine, op, kTimeoutS));
    std::this_thread::yield();
  }

  // Writes operation `op`'s commands into their rings, one doorbell each (none while staging).
  void post(std::uint64_t op, bool poll) {
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
      if (o_.sync == SdmaSync::atomic)
        w.put(sdma::AtomicAdd64{addr(completion_word(op, c)), ~std::uint64_t{0}});
      else
        w.put(sdma::Fence{addr(completion_word(op, c)), 0});
      w.submit();
    }
    if (capture)
      for (auto& [key, w] : writers_) captures_[key] = w->stop_capture();
  }

  std::map<std::string, int> packet_counts() const {
    std::map<std::string, int> n;
    for (const auto& pks : data_[0])
      for (const auto& pk : pks) ++n[sdma::packet_name(pk)];
    n[o_.sync == SdmaSync::atomic ? "ATOMIC_ADD64" : "FENCE"] += static_cast<int>(commands_.size());
    if (o_.trigger != SdmaTrigger::enqueue) n["POLL_REGMEM"] += static_cast<int>(commands_.size());
    return n;
  }

  void write_stream(void* dst, std::size_t n, std::uint64_t key) {
    std::vector<unsigned char> bytes(n);
    fill_stream(bytes.data(), n, key);
    p_.write(dst, bytes.data(), n);
  }

  class Tracer final : public CopyTracer {
   public:
    explicit Tracer(SdmaOperation& op) : op_(op) {}
    std::string source() const override {
      return fmt::format("SDMA TIMESTAMP (GET_GLOBAL) packets around each command's data packets on the {}, converted with two "
                         "clock-counter pairs taken at the start and the end of the traced pass{}",
                         op_.p_.name(), op_.p_.hardware_times() ? "" : " (software times, not hardware times)");
    }
    ~Tracer() override { op_.tracing_ = false; }
    void start() override {
      op_.ticks_.clear();
      op_.collected_ = op_.launched_;  // operations from here on carry timestamps
      op_.tracing_ = true;
      begin_ = op_.p_.clock_counters(op_.plan_.devices[0]);
    }
    std::vector<CopyInterval> stop() override {
      op_.collect_stamps();
      op_.tracing_ = false;
      const sdma::ClockPair end = op_.p_.clock_counters(op_.plan_.devices[0]);
      if (end.gpu_ticks <= begin_.gpu_ticks) throw std::runtime_error("the GPU clock counter did not advance while tracing");
      const double ns_per_tick = (end.host_ns - begin_.host_ns) / static_cast<double>(end.gpu_ticks - begin_.gpu_ticks);
      auto host_ns = [&](std::uint64_t t) { return begin_.host_ns + (static_cast<double>(t) - static_cast<double>(begin_.gpu_ticks)) * ns_per_tick; };
      std::vector<CopyInterval> out;
      for (const auto& [a, b, bytes] : op_.ticks_) out.push_back(CopyInterval{host_ns(a), host_ns(b), bytes});
      return out;
    }

   private:
    SdmaOperation& op_;
    sdma::ClockPair begin_;
  };

  std::uint64_t* stamp(std::uint64_t op, std::size_t c, int which) const {  // 32-byte aligned slots
    return static_cast<std::uint64_t*>(stamps_.get()) + ((op % kSlots) * commands_.size() + c) * 8 + which * 4;
  }
  // While tracing: the stamps of every command of the operations completed since the last call (before
  // their slots are reused: arm() calls it, at most kSlots operations after).
  void collect_stamps() {
    if (!tracing_) return;
    for (; collected_ < waited_; ++collected_)
      for (std::size_t c = 0; c < commands_.size(); ++c) {
        std::uint64_t bytes = 0;
        for (const auto& u : commands_[c].units) bytes += u.transfers[0].bytes * u.transfers.size();
        ticks_.push_back({__atomic_load_n(stamp(collected_, c, 0), __ATOMIC_ACQUIRE),
                          __atomic_load_n(stamp(collected_, c, 1), __ATOMIC_ACQUIRE), bytes});
      }
  }

  sdma::Platform& p_;
  Plan plan_;
  SdmaOptions o_;
  std::vector<Command> commands_;
  std::vector<sdma::Allocation> src_, dst_;
  sdma::Allocation signals_;
  std::vector<std::vector<std::vector<sdma::Packet>>> data_;  // [set][command]
  std::map<std::pair<int, int>, std::unique_ptr<sdma::Queue>> queues_;  // (rank, engine)
  std::map<std::pair<int, int>, std::unique_ptr<sdma::RingWriter>> writers_;
  std::vector<sdma::RingWriter*> writer_of_;  // per command
  std::map<std::pair<int, int>, sdma::RingWriter::Capture> captures_;
  std::uint64_t launched_ = 0, armed_ = 0, waited_ = 0, collected_ = 0;
  sdma::Allocation stamps_;
  bool tracing_ = false;
  std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> ticks_;  // start, end, bytes per traced command
};

class SdmaEngine final : public Engine {
 public:
  explicit SdmaEngine(std::unique_ptr<sdma::Platform> p) : p_(std::move(p)) {}
  WhyNot unsupported(const Plan& plan, const Options& options, int ops_per_sample) const override {
    const SdmaOptions o = SdmaOptions::from(options);
    if (ops_per_sample > kSlots)
      return fmt::format("{} operations per sample: the sdma engine keeps completion words for {}", ops_per_sample, kSlots);
    if (o.submit == SdmaSubmit::gpu && o.trigger != SdmaTrigger::enqueue)
      return std::string("submit=gpu writes the packets when the operation starts: it needs trigger=enqueue");
    if (o.submit == SdmaSubmit::gpu || o.trigger == SdmaTrigger::gpu_flag)
      if (auto why = p_->gpu_initiated_unsupported()) return *why;
    for (int d : plan.devices)
      if (d >= p_->device_count()) return fmt::format("device {} is not one of the {} devices of the {}", d, p_->device_count(), p_->name());
    auto units = sdma_commands::plan_units(plan, o, choice_of(*p_));
    if (!units) return units.why_not();
    if (p_->hardware_times()) return std::nullopt;
    std::size_t bytes = 0;  // on the software engine the buffers are host memory, and validation reads them back
    for (int r = 0; r < plan.ranks(); ++r) bytes += plan.src_allocation(r) + (plan.exchange ? 0 : plan.dst_allocation(r));
    return host_memory_shortfall(2 * bytes);
  }
  std::unique_ptr<Operation> prepare(const Plan& plan, const Options& options) override {
    const SdmaOptions o = SdmaOptions::from(options);
    auto units = sdma_commands::plan_units(plan, o, choice_of(*p_));
    if (!units) throw std::logic_error("sdma: prepare() of a plan it cannot run: " + units.why_not());
    return std::make_unique<SdmaOperation>(*p_, plan, o, sdma_commands::schedule(units.value(), o));
  }
  bool exchanges(const Options& options) const override { return SdmaOptions::from(options).packet == SdmaPacketKind::swap; }

 private:
  std::unique_ptr<sdma::Platform> p_;
};

}  // namespace

std::unique_ptr<Engine> make_sdma_engine_on(std::unique_ptr<sdma::Platform> platform) {
  return std::make_unique<SdmaEngine>(std::move(platform));
}

Maybe<std::unique_ptr<Engine>> make_sdma_engine(std::string_view backend) {
  using Result = Maybe<std::unique_ptr<Engine>>;
  if (backend == "host") return std::unique_ptr<Engine>(std::make_unique<SdmaEngine>(sdma::make_soft_platform()));
#ifdef DMABENCH_HAVE_KFD
  if (backend == "hip") {
    auto p = gpu::make_kfd_platform();
    if (!p) return Result::no(p.why_not());
    return std::unique_ptr<Engine>(std::make_unique<SdmaEngine>(std::move(p).value()));
  }
#endif
  return Result::no(fmt::format("this build has no sdma engine for the {} backend (the hip backend needs libhsakmt's headers at "
                                "configure time: Debian libhsakmt-dev, ROCm's hsakmt)",
                                backend));
}

}  // namespace dmabench
