#include "amd/sdma/soft_engine.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>
#include <variant>

#include <fmt/format.h>

#include "amd/sdma/packets.hpp"

namespace dmabench::amd::sdma {
namespace {

double steady_ns() {
  return static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

Allocation aligned_bytes(std::size_t bytes) {
  const std::size_t n = (bytes + 4095) / 4096 * 4096;
  void* p = std::aligned_alloc(4096, n ? n : 4096);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, n ? n : 4096);
  return Allocation(p, std::free);
}

template <class T>
T load_acquire(std::uint64_t addr) {
  return __atomic_load_n(reinterpret_cast<T*>(addr), __ATOMIC_ACQUIRE);
}
template <class T>
void store_release(std::uint64_t addr, T v) {
  __atomic_store_n(reinterpret_cast<T*>(addr), v, __ATOMIC_RELEASE);
}

// One queue: a ring, its pointer cells, and the thread that executes it.
class SoftQueue final : public Queue {
 public:
  SoftQueue(int device, int engine, std::size_t ring_bytes, double hz, std::uint64_t tick_offset, bool host_atomics, std::atomic<long>& traps, bool plant);
  ~SoftQueue() override;
  const QueueCells& cells() const override { return cells_; }
  void submit(std::uint64_t wptr) override;
  int device() const override { return device_; }
  int engine() const override { return engine_; }
  std::string describe() const override {
    return fmt::format("software SDMA queue of device {} engine {}", device_, engine_);
  }
  WhyNot fault() const override {
    std::lock_guard lock(mu_);
    return fault_;
  }

 private:
  void run();

  bool stopping() {
    std::lock_guard lock(mu_);
    return stop_;
  }

  // Executes the packet at byte position `at`; returns its size in dwords.
  std::size_t execute(std::uint64_t at, std::uint64_t end);

  void run_packet(const CopyLinear& c);
  void run_packet(const CopyBroadcast& c);
  void run_packet(const Swap& s);
  void run_packet(const PollRegMem& p);
  void run_packet(const AtomicAdd64& a) {
    if (!host_atomics_)  // on hardware the word would never change: stop, so a test sees it at once
      throw std::runtime_error(fmt::format("ATOMIC on device {}, whose link to the CPU has no PCIe 64-bit atomics (the "
                                           "software engine's no_host_atomics setting)", device_));
    __atomic_fetch_add(reinterpret_cast<std::uint64_t*>(a.addr), a.value, __ATOMIC_ACQ_REL);
  }
  void run_packet(const Fence& f) { store_release<std::uint32_t>(f.addr, f.data); }
  void run_packet(const Trap&) { traps_.fetch_add(1); }
  void run_packet(const TimestampGlobal& t) {
    store_release<std::uint64_t>(t.addr, tick_offset_ + static_cast<std::uint64_t>(steady_ns() * hz_ / 1e9));
  }
  void run_packet(const ConstFill& f) {
    auto* d = reinterpret_cast<unsigned char*>(f.dst);
    if (!f.dwords) {
      std::memset(d, static_cast<int>(f.data & 0xFF), f.bytes);
      return;
    }
    for (std::uint64_t i = 0; i < f.bytes; i += 4) std::memcpy(d + i, &f.data, 4);
  }
  void run_packet(const Nop&) {}

  int device_, engine_;
  double hz_;
  std::uint64_t tick_offset_;
  bool host_atomics_;
  std::atomic<long>& traps_;
  bool plant_;
  Allocation ring_mem_;
  QueueCells cells_;
  volatile std::uint64_t rptr_ = 0, wptr_ = 0;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::uint64_t doorbell_ = 0;
  bool stop_ = false;
  WhyNot fault_;
  std::thread thread_;
};

void SoftQueue::run_packet(const PollRegMem& p) {
  if (!p.memory) return;  // register polls (HDP flush): nothing to wait for here
  for (std::uint32_t tries = 0;; ++tries) {
    if (poll_satisfied(p.func, load_acquire<std::uint32_t>(p.addr), p.mask, p.reference)) return;
    if (p.retry_count != 0xFFF && tries >= p.retry_count) return;  // gives up and goes on (gem5 does the same)
    if (tries > 64) {
      if (stopping()) throw std::runtime_error("stopped while polling");
      std::this_thread::sleep_for(std::chrono::microseconds(p.interval ? p.interval : 1));
    }
  }
}

void SoftQueue::run_packet(const Swap& s) {
  auto* a = reinterpret_cast<unsigned char*>(s.a);
  auto* b = reinterpret_cast<unsigned char*>(s.b);
  unsigned char tmp[4096];
  for (std::uint64_t i = 0; i < s.bytes; i += sizeof tmp) {
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof tmp, s.bytes - i));
    std::memcpy(tmp, a + i, n);
    std::memcpy(a + i, b + i, n);
    std::memcpy(b + i, tmp, n);
  }
}

void SoftQueue::run_packet(const CopyBroadcast& c) {
  std::memmove(reinterpret_cast<void*>(c.dst1), reinterpret_cast<const void*>(c.src), c.bytes);
  std::memmove(reinterpret_cast<void*>(c.dst2), reinterpret_cast<const void*>(c.src), c.bytes);
}

void SoftQueue::run_packet(const CopyLinear& c) {
  std::memmove(reinterpret_cast<void*>(c.dst), reinterpret_cast<const void*>(c.src), c.bytes);
}

SoftQueue::SoftQueue(int device, int engine, std::size_t ring_bytes, double hz, std::uint64_t tick_offset, bool host_atomics, std::atomic<long>& traps, bool plant) : device_(device), engine_(engine), hz_(hz), tick_offset_(tick_offset), host_atomics_(host_atomics), traps_(traps), plant_(plant), ring_mem_(aligned_bytes(ring_bytes)) {
  cells_.ring = static_cast<std::uint32_t*>(ring_mem_.get());
  cells_.ring_bytes = ring_bytes;
  cells_.rptr = &rptr_;
  cells_.wptr = &wptr_;
  thread_ = std::thread([this] { run(); });
}

SoftQueue::~SoftQueue() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void SoftQueue::submit(std::uint64_t wptr) {
  if (plant_) {  // fault injection (SoftSettings): the first packet becomes an unknown opcode
    cells_.ring[(__atomic_load_n(const_cast<std::uint64_t*>(&wptr_), __ATOMIC_ACQUIRE) & (cells_.ring_bytes - 1)) / 4] = 0x0000FF03;
    plant_ = false;
  }
  __atomic_store_n(const_cast<std::uint64_t*>(&wptr_), wptr, __ATOMIC_RELEASE);
  {
    std::lock_guard lock(mu_);
    doorbell_ = wptr;  // the doorbell write
  }
  cv_.notify_all();
}

void SoftQueue::run() {
  std::uint64_t rptr = 0;
  for (;;) {
    std::uint64_t target;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || doorbell_ > rptr; });
      if (stop_) return;
      target = doorbell_;
    }
    while (rptr < target) {
      try {
        rptr += execute(rptr, target) * 4;
      } catch (const std::exception& e) {
        std::lock_guard lock(mu_);
        fault_ = fmt::format("{} at ring offset 0x{:x} (read pointer {} bytes) of the {}", e.what(),
                             rptr & (cells_.ring_bytes - 1), rptr, describe());
        return;  // the queue stops, as hardware's illegal-instruction interrupt stops it
      }
      __atomic_store_n(const_cast<std::uint64_t*>(&rptr_), rptr, __ATOMIC_RELEASE);
    }
  }
}

std::size_t SoftQueue::execute(std::uint64_t at, std::uint64_t end) {
  const std::uint64_t offset = at & (cells_.ring_bytes - 1);
  const std::size_t to_end = (cells_.ring_bytes - offset) / 4, pending = (end - at) / 4;
  const std::uint32_t* p = cells_.ring + offset / 4;
  const Decoded d = decode(p, std::min(to_end, pending));
  std::visit([&](const auto& packet) { run_packet(packet); }, d.packet);
  return d.dwords;
}

// The GPU stand-in: one thread per device that runs what a GPU kernel would, in order.
class StandIn {
 public:
  StandIn() : thread_([this] { run(); }) {}
  ~StandIn() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void post(std::function<void()> work) {
    {
      std::lock_guard lock(mu_);
      work_.push_back(std::move(work));
    }
    cv_.notify_all();
  }

 private:
  void run() {
    for (;;) {
      std::function<void()> w;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !work_.empty(); });
        if (stop_ && work_.empty()) return;
        w = std::move(work_.front());
        work_.pop_front();
      }
      w();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> work_;
  bool stop_ = false;
  std::thread thread_;
};

class SoftPlatform final : public Platform {
 public:
  explicit SoftPlatform(const SoftSettings& s) : s_(s) {}
  std::string name() const override { return "software SDMA engine"; }
  bool hardware_times() const override { return false; }
  int device_count() const override { return s_.devices; }
  int engine_count(int) const override { return s_.engines; }
  int first_xgmi_engine(int) const override { return s_.first_xgmi_engine; }
  int recommended_engine(int src, int dst) const override { return soft_recommended_engine(src, dst); }
  WhyNot engine_unusable(int device, int engine) const override {
    if (engine < 0 || engine >= s_.engines)
      return fmt::format("engine {} does not exist: device {} has {} SDMA engines", engine, device, s_.engines);
    if (engine < 32 && (s_.fused_engines >> engine & 1u))
      return fmt::format("engine {} of device {} is fused off (the software engine's fused_engines setting)", engine, device);
    return std::nullopt;
  }
  WhyNot host_atomics_unsupported(int device) const override {
    if (std::find(s_.no_host_atomics.begin(), s_.no_host_atomics.end(), device) == s_.no_host_atomics.end()) return std::nullopt;
    return fmt::format("device {}'s link to the CPU has no PCIe 64-bit atomics (the software engine's no_host_atomics setting)",
                       device);
  }
  Allocation alloc_device(int, std::size_t bytes, const std::vector<int>&) override { return aligned_bytes(bytes); }
  Allocation alloc_host(std::size_t bytes, const std::vector<int>&) override { return aligned_bytes(bytes); }
  // Every kind is host memory here (the engine's threads read and write the process's pages): placed on the
  // node and touched, and mlock'ed for every kind but pageable, as the host backend stands in for pinning
  // (engines/host.cpp).
  WhyNot host_kind_unsupported(HostKind) const override { return std::nullopt; }
  HostBuffer alloc_host_buffer(HostKind kind, std::size_t bytes, int node, const std::vector<int>&,
                               hostmem::BufferInfo& info) override {
    Allocation memory(hostmem::map_pages(bytes, node, kind != HostKind::pageable, info));
    const auto at = reinterpret_cast<std::uint64_t>(memory.get());
    return HostBuffer{std::move(memory), at};
  }
  void write(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void read(void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  Maybe<std::unique_ptr<Queue>> create_queue(int device, int engine, std::size_t ring_bytes) override;
  ClockPair clock_counters(int device) override {
    const double ns = steady_ns();
    return ClockPair{offset(device) + static_cast<std::uint64_t>(ns * hz(device) / 1e9), ns};
  }
  WhyNot gpu_initiated_unsupported() const override { return std::nullopt; }
  void gpu_store(int device, std::uint64_t* word, std::uint64_t value) override {
    stand_in(device).post([word, value] { __atomic_store_n(word, value, __ATOMIC_RELEASE); });
  }
  void gpu_submit(int device, Queue& queue, const StagedPackets& staged) override;
  nlohmann::json describe() const override {
    return {{"platform", name()},
            {"hardware_times", false},
            {"engines_per_device", s_.engines},
            {"timestamp_hz", s_.timestamp_hz},
            {"gpu_stand_in", "one CPU thread per device runs what a GPU kernel would (gpu-flag trigger, submit=gpu)"}};
  }

 private:
  double hz(int device) const {
    const auto it = s_.device_timestamp_hz.find(device);
    return it == s_.device_timestamp_hz.end() ? s_.timestamp_hz : it->second;
  }
  std::uint64_t offset(int device) const {
    const auto it = s_.device_tick_offset.find(device);
    return it == s_.device_tick_offset.end() ? 0 : it->second;
  }
  StandIn& stand_in(int device) {
    std::lock_guard lock(mu_);
    auto& s = stand_ins_[device];
    if (!s) s = std::make_unique<StandIn>();
    return *s;
  }

  SoftSettings s_;
  std::atomic<long> traps_{0};
  std::mutex mu_;
  std::map<int, std::unique_ptr<StandIn>> stand_ins_;
};

Maybe<std::unique_ptr<Queue>> SoftPlatform::create_queue(int device, int engine, std::size_t ring_bytes) {
  using Result = Maybe<std::unique_ptr<Queue>>;
  if (device < 0 || device >= s_.devices) return Result::no(fmt::format("no software device {}", device));
  if (auto why = engine_unusable(device, engine)) return Result::no(*why);
  if (ring_bytes < 64 || (ring_bytes & (ring_bytes - 1)) != 0)
    return Result::no(fmt::format("ring of {} bytes: not a power of two of 64 bytes or more", ring_bytes));
  return std::unique_ptr<Queue>(std::make_unique<SoftQueue>(device, engine, ring_bytes, hz(device), offset(device),
                                                            !host_atomics_unsupported(device), traps_, s_.plant_unknown_opcode));
}

void SoftPlatform::gpu_submit(int device, Queue& queue, const StagedPackets& staged) {
  stand_in(device).post([&queue, staged] {
    // the staged dwords may run past the ring's end (a NOP pad to the end, then packets from offset 0): wrap
    const QueueCells& c = queue.cells();
    const std::uint64_t at = staged.from & (c.ring_bytes - 1), bytes = staged.dwords.size() * 4;
    const std::uint64_t first = std::min(bytes, c.ring_bytes - at);
    std::memcpy(reinterpret_cast<char*>(c.ring) + at, staged.dwords.data(), first);
    std::memcpy(c.ring, reinterpret_cast<const char*>(staged.dwords.data()) + first, bytes - first);
    std::atomic_thread_fence(std::memory_order_release);
    queue.submit(staged.from + staged.dwords.size() * 4);
  });
}

}  // namespace

int soft_recommended_engine(int src, int dst) {
  if (src == dst) return -1;
  const int k = ((dst - src) % 7 + 7) % 7;  // 0..6
  return 2 + 2 * k;  // even engines 2..14
}

std::unique_ptr<Platform> make_soft_platform(SoftSettings settings) {
  if (const char* fault = std::getenv("DMABENCH_SOFT_SDMA_FAULT"); fault && std::string(fault) == "unknown-opcode")
    settings.plant_unknown_opcode = true;
  return std::make_unique<SoftPlatform>(settings);
}

}  // namespace dmabench::amd::sdma
