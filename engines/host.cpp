// The `host` backend and its engine: CPU threads, one per rank, memcpy between per-rank host
// buffers. It runs anywhere and makes every pattern, the harness and the JSON testable without a GPU.
// Under mpirun each process is one host rank: its buffers are POSIX shared memory that the other
// processes map, so the multi-process path (team/) is tested without a GPU too.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "core/datagen.hpp"
#include "core/host_memory.hpp"
#include "team/team.hpp"
#include "engines/backend.hpp"
#include "engines/buffer_pool.hpp"
#include "engines/engine_factories.hpp"
#include "engines/host_validation.hpp"
#include "engines/spin_workers.hpp"
#include "core/cpus.hpp"

namespace dmabench {
namespace {

constexpr int kMaxHostRanks = 64;

// A rank's buffer memory: 64-byte aligned heap bytes in a one-process run; in a multi-process run, POSIX shared
// memory that the other processes map too (created, mapped by every process, then unlinked, so that nothing is
// left in /dev/shm however the run ends); a host-memory endpoint (Plan::Location): pages bound to the NUMA node
// and touched, every kind but pageable also mlock'ed (the host backend's stand-in for the runtime's pinning).
using HostMemory = PooledBuffer::Memory;

HostMemory heap_bytes(std::size_t n) {
  void* p = std::aligned_alloc(64, (n + 63) / 64 * 64);
  if (!p) throw std::bad_alloc();
  return HostMemory(p, [](void* q) { std::free(q); });
}

// Creates (create) or opens the shared-memory object `name` of n bytes and maps it.
HostMemory shared_bytes(const std::string& name, std::size_t n, bool create) {
  const int fd = shm_open(name.c_str(), create ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
  if (fd < 0) throw std::runtime_error(fmt::format("shm_open {}: {}", name, std::strerror(errno)));
  // posix_fallocate, not ftruncate: tmpfs grants any size to ftruncate and a full /dev/shm would
  // then kill the process with SIGBUS at the first write
  if (create) {
    if (const int err = posix_fallocate(fd, 0, static_cast<off_t>(n)); err != 0) {
      close(fd);
      shm_unlink(name.c_str());
      throw std::runtime_error(fmt::format("posix_fallocate {} of {} bytes: {} (is /dev/shm large enough?)", name, n,
                                           std::strerror(err)));
    }
  }
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    if (create) shm_unlink(name.c_str());
    throw std::runtime_error(fmt::format("mmap {} ({} bytes): {}", name, n, std::strerror(err)));
  }
  return HostMemory(p, [n](void* q) { munmap(q, n); });
}

// Test-only fault injection (DMABENCH_HOST_FAULT, docs/testing.md), for tests that must see a case
// fail or a rank be slow: "corrupt:R" flips the last byte of a transfer issuing rank R writes in
// every operation (its first transfer to another rank, if any); "misplace:R" writes rank R's first transfer (a block
// of a block layout) at the destination of its second as well, as a block copied to the wrong slot; "delay:R:MS" makes rank R's operations take MS milliseconds longer;
// "die:R" kills rank R's process (SIGKILL) when its first operation is released: between two cases,
// after the first is recorded; "slow-device:D:MS" makes every rank on host device D take MS milliseconds
// longer per operation (a slow link: every pair that device D takes part in); "stretch:PCT" makes every operation
// PCT percent longer (each worker spins after its transfers until its part took 1 + PCT/100 times as long, from the
// later of the operation's launch and the worker's previous operation's end: a regression of a set size outside the
// timing code, for measuring what a gate catches: dmabench-results gate-rates); "stretch:L:B" L percent where the
// worker moves under 1 MiB per operation (a launch-bound case), B percent otherwise.
struct HostFault {
  int rank = -1;
  bool corrupt = false;
  bool misplace = false;
  bool die = false;
  int delay_ms = 0;
  int slow_device = -1;
  double stretch = 0;            // the fraction every operation is made longer by ...
  double stretch_bandwidth = 0;  // ... that of a worker that moves 1 MiB or more per operation
  static HostFault from_env() {
    HostFault f;
    const char* v = std::getenv("DMABENCH_HOST_FAULT");
    if (!v || !*v) return f;
    int r = -1, ms = 0;
    if (std::sscanf(v, "corrupt:%d", &r) == 1) {
      f.rank = r;
      f.corrupt = true;
    } else if (std::sscanf(v, "misplace:%d", &r) == 1) {
      f.rank = r;
      f.misplace = true;
    } else if (std::sscanf(v, "delay:%d:%d", &r, &ms) == 2) {
      f.rank = r;
      f.delay_ms = ms;
    } else if (std::sscanf(v, "die:%d", &r) == 1) {
      f.rank = r;
      f.die = true;
    } else if (std::sscanf(v, "slow-device:%d:%d", &r, &ms) == 2) {
      f.slow_device = r;
      f.delay_ms = ms;
    } else if (!parse_stretch(v, f)) {
      throw std::runtime_error(fmt::format(
          "DMABENCH_HOST_FAULT='{}': accepted: corrupt:RANK, misplace:RANK, delay:RANK:MS, die:RANK, slow-device:DEVICE:MS, "
          "stretch:PERCENT or stretch:LAUNCH_PERCENT:BANDWIDTH_PERCENT (0 to 1000)",
          v));
    }
    return f;
  }
  // "stretch:L" or "stretch:L:B": percents from 0 to 1000, nothing after them.
  static bool parse_stretch(const char* v, HostFault& f) {
    double launch = 0, bandwidth = 0;
    char tail = 0;
    const int one = std::sscanf(v, "stretch:%lf%c", &launch, &tail);
    if (one == 1) {
      bandwidth = launch;
    } else if (!(one == 2 && tail == ':' && std::sscanf(v, "stretch:%lf:%lf%c", &launch, &bandwidth, &tail) == 2)) {
      return false;
    }
    if (!(launch >= 0 && launch <= 1000 && bandwidth >= 0 && bandwidth <= 1000)) return false;
    f.stretch = launch / 100;
    f.stretch_bandwidth = bandwidth / 100;
    return true;
  }
};

// Whether the host engine pins its rank threads (DMABENCH_HOST_PIN=0: not; the default: pinned).
bool pin_workers() {
  const char* v = std::getenv("DMABENCH_HOST_PIN");
  return !(v && std::string_view(v) == "0");
}

// One persistent worker thread per issuing rank. launch() posts one more operation; each worker
// runs its rank's transfers once per posted operation, in order; wait() returns when every worker
// has finished every posted operation.
class HostOperation final : public Operation {
 public:
  explicit HostOperation(const Plan& plan);
  ~HostOperation() override;

  void launch() override {
    {
      std::lock_guard lock(mu_);
      if (stretching()) posted_at_[posted_ % kPostedRing] = Clock::now();
      ++posted_;
    }
    cv_.notify_all();
  }

  void wait() override;

  // In a multi-process run each process fills, poisons and checks its own rank's buffers. Validation touches
  // what the case reads and writes, and reads the rest of a destination once (engines/buffer_pool.hpp).
  void fill_sources(std::uint64_t seed) override;
  void poison_destinations(std::uint64_t seed) override;
  std::vector<hostmem::BufferInfo> host_buffers() const override { return host_buffers_; }
  std::optional<std::size_t> descriptors() const override {
    std::size_t n = 0;
    for (const auto& w : workers_) n += w->transfers.size();
    return n;
  }
  std::optional<Mismatch> check_destinations(const Plan& expected, std::uint64_t seed) override;
  // The breakdown's copy times: each worker stamps its memcpy calls while a tracer runs (host clock: no conversion).
  Maybe<std::unique_ptr<CopyTracer>> copy_tracer() override;

 private:
  class Tracer;
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint64_t kPostedRing = 4096;  // launch times kept for stretch: more than any pipeline depth
  struct Worker {
    int rank;
    std::vector<Transfer> transfers;
    std::uint64_t done;
    std::thread thread;
    Clock::time_point ended{};  // the end of its previous operation (stretch)
    double stretch = 0;         // the fraction its part is made longer by (HostFault::stretch)
    std::vector<CopyInterval> stamps;  // while tracing: each memcpy's start and end (read after wait())
  };

  // This process's rank's buffers as shared memory, and every other rank's mapped from theirs
  // (collective; the objects are unlinked once every process has mapped them).
  void map_shared();

  BufferLease allocate(int rank, const Location& at, std::size_t bytes, const char* side);
  // A rank's shared-memory object, created (create) or mapped from another process's (never pooled).
  BufferLease shared(int rank, const std::string& name, std::size_t bytes, bool create);

  char* src(int rank, int set) const { return src_[rank].data() + set * plan_.src_stride(rank); }
  char* dst(int rank, int set) const { return dst_[rank].data() + set * plan_.dst_stride(rank); }

  void run(Worker& w);
  bool stretching() const { return fault_.stretch > 0 || fault_.stretch_bandwidth > 0; }

  // Whether a worker's transfers read or write device `d` (its own rank's or another's buffers).
  bool touches(const Worker& w, int d) const {
    if (plan_.devices[w.rank] == d) return true;
    return std::any_of(w.transfers.begin(), w.transfers.end(), [&](const Transfer& t) {
      return plan_.devices[t.src_rank] == d || plan_.devices[t.dst_rank] == d;
    });
  }

  Plan plan_;
  const HostFault fault_ = HostFault::from_env();
  std::vector<BufferLease> src_, dst_;  // per rank (in a multi-process run: empty outside the plan)
  bool checked_ = false;                // the last check of the destinations found every byte right
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<hostmem::BufferInfo> host_buffers_;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::uint64_t posted_ = 0;
  std::vector<Clock::time_point> posted_at_ = std::vector<Clock::time_point>(stretching() ? kPostedRing : 0);
  bool stop_ = false;
  std::atomic<bool> tracing_{false};
};

class HostOperation::Tracer final : public CopyTracer {
 public:
  explicit Tracer(HostOperation& op) : op_(op) {}
  void start() override {
    for (auto& w : op_.workers_) w->stamps.clear();
    op_.tracing_ = true;
  }
  // Called after the traced operations were waited for: every worker's stamps are written before its `done` count
  // moves under the lock that wait() takes.
  std::vector<CopyInterval> stop() override {
    op_.tracing_ = false;
    std::vector<CopyInterval> out;
    for (auto& w : op_.workers_) out.insert(out.end(), w->stamps.begin(), w->stamps.end());
    return out;
  }
  std::string source() const override {
    return "the host engine's worker threads: steady-clock stamps around each memcpy (the host clock, no conversion)";
  }

 private:
  HostOperation& op_;
};

void HostOperation::wait() {
  std::unique_lock lock(mu_);
  done_cv_.wait(lock, [&] {
    return std::all_of(workers_.begin(), workers_.end(), [&](const auto& w) { return w->done == posted_; });
  });
}

Maybe<std::unique_ptr<CopyTracer>> HostOperation::copy_tracer() {
  return std::unique_ptr<CopyTracer>(std::make_unique<Tracer>(*this));
}

HostOperation::HostOperation(const Plan& plan) : plan_(plan) {
  src_.resize(plan.ranks());
  dst_.resize(plan.ranks());
  if (team::world().multi()) {
    map_shared();
  } else {
    for (int r = 0; r < plan.ranks(); ++r) {
      src_[r] = allocate(r, plan.src_location(r), plan.src_allocation(r), "src");
      dst_[r] = allocate(r, plan.dst_location(r), plan.dst_allocation(r), "dst");
    }
  }
  for (int r : team::local_issuers(plan)) workers_.push_back(std::make_unique<Worker>(Worker{r, plan.issued_by(r), 0, {}, {}, 0, {}}));
  for (auto& w : workers_) {
    std::size_t moved = 0;
    for (const Transfer& t : w->transfers) moved += t.bytes;
    w->stretch = moved < (std::size_t{1} << 20) ? fault_.stretch : fault_.stretch_bandwidth;
  }
  // Each worker on a CPU of its own where the process may use enough of them, round-robin over the allowed CPUs from
  // the sampling thread's (--cpu-choice; else from the process's rank in a multi-process run): left to the scheduler,
  // two ranks' threads shared one vCPU in some processes and not in others, and where the first worker ran relative
  // to the thread that hands it work decided the case's mode (on the 2-vCPU VM a 4 KiB copy took 5 us where both
  // shared a vCPU and 125 us where the worker's vCPU had to be woken): results/ci-vm-2cpu/README.md.
  const std::vector<int> cpus = pin_workers() ? cpus::allowed() : std::vector<int>{};
  std::size_t next = team::world().multi() ? static_cast<std::size_t>(team::world().rank()) : 0;
  if (const auto at = std::find(cpus.begin(), cpus.end(), cpus::sampling_cpu()); at != cpus.end())
    next = static_cast<std::size_t>(at - cpus.begin());
  for (auto& w : workers_) {
    const int cpu = cpus.empty() ? -1 : cpus[next++ % cpus.size()];
    w->thread = std::thread([this, w = w.get(), cpu] {
      if (cpu >= 0) cpus::pin_this_thread(cpu);  // best effort: unpinned it still runs
      run(*w);
    });
  }
}

HostOperation::~HostOperation() {
  if (!checked_)  // a destination not found right (or never checked) may have been written anywhere
    for (auto& d : dst_)
      if (d) d.state().forget();
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& w : workers_) w->thread.join();
  if (fault_.die && fault_.rank == team::world().rank()) ::raise(SIGKILL);
}

void HostOperation::fill_sources(std::uint64_t seed) {
  for (int r : team::local_ranks(plan_)) {
    if (!src_[r]) continue;  // a rank that sends nothing has no source
    const ByteRanges read = plan_.read_ranges(r);
    fill_ranges(reinterpret_cast<unsigned char*>(src_[r].data()), read, datagen::stream_key(seed, r));
    BufferState& st = src_[r].state();
    st.dirty.insert(st.dirty.end(), read.begin(), read.end());
  }
}

void HostOperation::poison_destinations(std::uint64_t) {
  checked_ = false;
  for (int r : team::local_ranks(plan_)) {
    if (!dst_[r]) continue;  // a rank that receives nothing has no destination
    BufferState& st = dst_[r].state();
    fill_ranges(reinterpret_cast<unsigned char*>(dst_[r].data()), to_restore(st, plan_.dst_allocation(r)), resting_key());
    st.resting = true;
    st.dirty = plan_.written_ranges(r);
  }
  for (int set = 0; set < plan_.sets; ++set)
    for (const Transfer& t : plan_.preset)  // in-place blocks: there before the operation starts
      if (team::local(t.dst_rank))
        std::memcpy(dst(t.dst_rank, set) + t.dst_offset, src(t.src_rank, set) + t.src_offset, t.bytes);
}

std::optional<Mismatch> HostOperation::check_destinations(const Plan& expected, std::uint64_t seed) {
  if (expected.sets != plan_.sets) throw std::logic_error("check_destinations: the plan's buffer sets differ from the operation's");
  auto bad = first_host_mismatch(expected, seed, [&](int r) {
    return HostDestination{team::local(r) ? reinterpret_cast<const unsigned char*>(dst_[r].data()) : nullptr, resting_key()};
  });
  checked_ = !bad;
  return bad;
}

void HostOperation::map_shared() {
  static std::atomic<unsigned> serial{0};
  const int me = team::world().rank();
  const std::string base = fmt::format("/dmabench-{}-{}", ::getpid(), serial++);
  // this process's objects are unlinked however this ends: once every process mapped them, or on error
  struct Unlink {
    std::vector<std::string> names;
    ~Unlink() {
      for (const auto& n : names) shm_unlink(n.c_str());
    }
  } unlink;
  std::string error;
  try {
    if (me < plan_.ranks()) {
      unlink.names.push_back(base + "-src");
      src_[me] = shared(me, base + "-src", plan_.src_allocation(me), true);
      unlink.names.push_back(base + "-dst");
      dst_[me] = shared(me, base + "-dst", plan_.dst_allocation(me), true);
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  const auto names = team::share(me < plan_.ranks() ? base : std::string(), error);
  error.clear();
  try {
    if (me < plan_.ranks())
      for (int r = 0; r < plan_.ranks(); ++r)
        if (r != me) {
          src_[r] = shared(r, names[r] + "-src", plan_.src_allocation(r), false);
          dst_[r] = shared(r, names[r] + "-dst", plan_.dst_allocation(r), false);
        }
  } catch (const std::exception& e) {
    error = e.what();
  }
  team::share(std::string(), error);  // every process mapped what it needs (or says why not)
}

BufferLease HostOperation::allocate(int rank, const Location& at, std::size_t bytes, const char* side) {
  if (!at.host)
    return lend_buffer(BufferPlace{.maker = "host-heap", .device = plan_.devices[rank], .host = true}, bytes,
                       [&](hostmem::BufferInfo&) { return heap_bytes(bytes); });
  BufferLease b = lend_buffer(BufferPlace{.maker = "host-pages", .host = true, .kind = at.kind, .node = at.node}, bytes,
                              [&](hostmem::BufferInfo& info) { return hostmem::map_pages(bytes, at.node, at.kind != HostKind::pageable, info); });
  host_buffers_.push_back(buffer_info(rank, side, at, b));
  return b;
}

BufferLease HostOperation::shared(int rank, const std::string& name, std::size_t bytes, bool create) {
  return lend_buffer(BufferPlace{.maker = "host-shared", .device = plan_.devices[rank], .host = true}, bytes,
                     [&](hostmem::BufferInfo&) { return shared_bytes(name, bytes, create); }, /*pooled=*/false);
}

void HostOperation::run(Worker& w) {
  for (;;) {
    Clock::time_point begun{};
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stop_ || w.done < posted_; });
      if (stop_) return;
      if (stretching()) begun = std::max(posted_at_[w.done % kPostedRing], w.ended);
    }
    const int set = plan_.set_of(w.done);
    const bool trace = tracing_.load(std::memory_order_relaxed);
    for (const Transfer& t : w.transfers) {
      const double begun_ns = trace ? steady_now_ns() : 0;
      std::memcpy(dst(t.dst_rank, set) + t.dst_offset, src(t.src_rank, set) + t.src_offset, t.bytes);
      if (trace) w.stamps.push_back({begun_ns, steady_now_ns(), t.bytes});
    }
    if (fault_.rank == w.rank && fault_.corrupt && !w.transfers.empty()) {
      auto t = std::find_if(w.transfers.begin(), w.transfers.end(), [&](const Transfer& x) { return x.dst_rank != w.rank; });
      if (t == w.transfers.end()) --t;
      dst(t->dst_rank, set)[t->dst_offset + t->bytes - 1] ^= 0x5a;
    }
    if (fault_.rank == w.rank && fault_.misplace && w.transfers.size() >= 2) {
      const Transfer& a = w.transfers[0];
      const Transfer& b = w.transfers[1];
      std::memcpy(dst(b.dst_rank, set) + b.dst_offset, src(a.src_rank, set) + a.src_offset, std::min(a.bytes, b.bytes));
    }
    const bool slow = fault_.slow_device >= 0 ? touches(w, fault_.slow_device) : fault_.rank == w.rank;
    if (slow && fault_.delay_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(fault_.delay_ms));
    if (stretching()) {  // spin until the part took (1 + stretch) times as long; the next one counts from here
      const auto now = Clock::now();
      const auto until = now + std::chrono::duration_cast<Clock::duration>((now - begun) * w.stretch);
      while (Clock::now() < until) {
      }
      w.ended = Clock::now();
    }
    {
      std::lock_guard lock(mu_);
      ++w.done;
    }
    done_cv_.notify_all();
  }
}

// Shared-memory objects of the run's processes on this host that died (kill -9 between creating and
// unlinking them) are removed: named /dmabench-<pid>-..., they would hold memory until reboot.
void remove_orphaned_shared_memory() {
  std::error_code ec;
  for (const auto& r : team::world().ranks()) {
    if (r.rank == team::world().rank() || !team::sees_process(r) || !team::process_gone(r.pid)) continue;
    const std::string prefix = fmt::format("dmabench-{}-", r.pid);
    for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", ec)) {
      const std::string file = entry.path().filename().string();
      if (file.rfind(prefix, 0) != 0) continue;
      std::string name(1, '/');
      name.append(file);
      shm_unlink(name.c_str());
    }
  }
}

class HostEngine final : public Engine {
 public:
  ~HostEngine() override {
    if (team::world().multi()) remove_orphaned_shared_memory();
  }
  std::unique_ptr<const TypedOptions> parse(const Options&) const override {
    return std::make_unique<OptionsOf<NoOptions>>(NoOptions{});
  }
  WhyNot unsupported(const Plan& plan, const TypedOptions&, int) const override {
    std::size_t bytes = 0;  // in a multi-process run, this process creates its own rank's buffers and maps the others
    for (int r = 0; r < plan.ranks(); ++r)
      if (team::local(r)) bytes += plan.src_allocation(r) + plan.dst_allocation(r);
    return host_memory_shortfall(bytes);
  }
  // Each process's rank's buffers are shared memory the other processes map.
  WhyNot across_processes(const Plan&, const TypedOptions&) const override { return std::nullopt; }
  std::unique_ptr<Operation> prepare(const Plan& plan, const TypedOptions&) override {
    return std::make_unique<HostOperation>(plan);
  }
};

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}

class HostBackend final : public Backend {
 public:
  std::string_view name() const override { return "host"; }
  int device_count() const override { return kMaxHostRanks; }
  std::vector<int> default_devices() const override { return {0, 1}; }
  nlohmann::json context() const override {
    return {{"devices", nlohmann::json::array()},
            {"host_ranks", "virtual: one CPU thread per rank, memcpy between per-rank host buffers"},
            {"rank_threads", pin_workers() ? "each pinned to one allowed CPU, round-robin (DMABENCH_HOST_PIN=0: not)"
                                           : "not pinned (DMABENCH_HOST_PIN=0)"},
            {"cpu", cpu_model()},
            {"cpu_threads", std::thread::hardware_concurrency()},
            {"numa_nodes", hostmem::nodes()}};
  }
  void prepare_devices(const std::vector<int>&) override {}
  std::vector<CalibrationProbe> calibration_probes(int) override {
    struct Kit {
      alignas(64) unsigned char src[64] = {1}, dst[64] = {};
      std::unique_ptr<SpinWorkers> worker;
      std::uint32_t generation = 0;
    };
    auto kit = std::make_shared<Kit>();
    std::vector<CalibrationProbe> probes = {
        {"memcpy_4B", "a 4-byte memcpy on the calling thread", [kit] {
           std::memcpy(kit->dst, kit->src, 4);
           std::atomic_signal_fence(std::memory_order_seq_cst);  // the copy is not optimized away
         }}};
    if (!SpinWorkers::cpus_short(1)) {  // a spinning worker beside the caller needs a CPU of its own
      Kit* k = kit.get();
      kit->worker = std::make_unique<SpinWorkers>(
          1, [](int) {}, [k](int, std::uint32_t) { std::memcpy(k->dst + 32, k->src, 4); }, [](int) {});
      probes.push_back({"worker_4B", "a 4-byte memcpy handed to a spinning worker thread (as the host engine's ranks), "
                                     "released and settled",
                        [kit] {
                          kit->worker->release(++kit->generation);
                          kit->worker->settle();
                        }});
    }
    return probes;
  }
};

}  // namespace

std::unique_ptr<Engine> make_host_engine() { return std::make_unique<HostEngine>(); }
std::unique_ptr<Backend> make_host_backend() { return std::make_unique<HostBackend>(); }

}  // namespace dmabench
