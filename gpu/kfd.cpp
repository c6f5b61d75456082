// Sharing the process with HIP (amd/sdma/hip-coexistence.md, Q1 and Q2): HIP and the HSA runtime under it
// start first (make_kfd_platform asks HIP for its devices before it opens KFD, and the runner creates
// the backend before any engine); then this file opens KFD through libhsakmt, as ROCm/mori, rocm-xio
// and TransferBench PR #343 do (hsa_init, then hsaKmtOpenKFD). ROCm <= 6.2 as Debian builds it: the
// HSA runtime links the one shared libhsakmt.so.1, whose hsaKmtOpenKFD then answers
// KERNEL_ALREADY_OPENED; the runtime owns that thunk's topology snapshot, which this file never releases.
// ROCm >= 6.3: the runtime carries a static, hidden libhsakmt and this file links a second copy; both
// /dev/kfd fds share one kfd_process, and ACQUIRE_VM accepts both because each copy takes its render
// fd from the one shared libdrm_amdgpu (amdgpu_device_get_fd). Handles never cross copies: only memory
// allocated here is mapped, freed or put in packets here. KFD stays open for the process's life.
#include "gpu/kfd.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#ifdef DMABENCH_KFD_FLAT_HEADER
#include <hsakmt.h>
#else
#include <hsakmt/hsakmt.h>
#endif

#include "amd/sdma/packets.hpp"
#include "amd/sdma/ring.hpp"
#include "amd/topology.hpp"
#include "core/host_memory.hpp"
#include "gpu/call_error.hpp"
#include "gpu/gpu.hpp"

namespace dmabench::gpu {
namespace {

namespace sdma = amd::sdma;
using sdma::Allocation;

const char* status_name(HSAKMT_STATUS s) {
  switch (static_cast<int>(s)) {
    case HSAKMT_STATUS_SUCCESS: return "HSAKMT_STATUS_SUCCESS";
    case HSAKMT_STATUS_ERROR: return "HSAKMT_STATUS_ERROR";
    case HSAKMT_STATUS_DRIVER_MISMATCH: return "HSAKMT_STATUS_DRIVER_MISMATCH";
    case HSAKMT_STATUS_INVALID_PARAMETER: return "HSAKMT_STATUS_INVALID_PARAMETER";
    case HSAKMT_STATUS_INVALID_HANDLE: return "HSAKMT_STATUS_INVALID_HANDLE";
    case HSAKMT_STATUS_INVALID_NODE_UNIT: return "HSAKMT_STATUS_INVALID_NODE_UNIT";
    case HSAKMT_STATUS_NO_MEMORY: return "HSAKMT_STATUS_NO_MEMORY";
    case HSAKMT_STATUS_BUFFER_TOO_SMALL: return "HSAKMT_STATUS_BUFFER_TOO_SMALL";
    case HSAKMT_STATUS_NOT_IMPLEMENTED: return "HSAKMT_STATUS_NOT_IMPLEMENTED";
    case HSAKMT_STATUS_NOT_SUPPORTED: return "HSAKMT_STATUS_NOT_SUPPORTED";
    case HSAKMT_STATUS_UNAVAILABLE: return "HSAKMT_STATUS_UNAVAILABLE";
    case HSAKMT_STATUS_OUT_OF_RESOURCES: return "HSAKMT_STATUS_OUT_OF_RESOURCES";
    case HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED: return "HSAKMT_STATUS_KERNEL_IO_CHANNEL_NOT_OPENED";
    case HSAKMT_STATUS_KERNEL_COMMUNICATION_ERROR: return "HSAKMT_STATUS_KERNEL_COMMUNICATION_ERROR";
    case HSAKMT_STATUS_KERNEL_ALREADY_OPENED: return "HSAKMT_STATUS_KERNEL_ALREADY_OPENED";
    case HSAKMT_STATUS_HSAMMU_UNAVAILABLE: return "HSAKMT_STATUS_HSAMMU_UNAVAILABLE";
    case HSAKMT_STATUS_WAIT_FAILURE: return "HSAKMT_STATUS_WAIT_FAILURE";
    case HSAKMT_STATUS_WAIT_TIMEOUT: return "HSAKMT_STATUS_WAIT_TIMEOUT";
    case HSAKMT_STATUS_MEMORY_ALREADY_REGISTERED: return "HSAKMT_STATUS_MEMORY_ALREADY_REGISTERED";
    case HSAKMT_STATUS_MEMORY_NOT_REGISTERED: return "HSAKMT_STATUS_MEMORY_NOT_REGISTERED";
    case HSAKMT_STATUS_MEMORY_ALIGNMENT: return "HSAKMT_STATUS_MEMORY_ALIGNMENT";
    default: return "unknown HSAKMT_STATUS";
  }
}

[[noreturn]] void throw_kmt(HSAKMT_STATUS s, const char* call, const char* file, int line) {
  throw_call_error("libhsakmt", call, file, line, static_cast<long long>(s), status_name(s));
}

#define DMABENCH_KMT_CHECK(call)                                                                   \
  do {                                                                                             \
    const HSAKMT_STATUS dmabench_s_ = (call);                                                      \
    if (dmabench_s_ != HSAKMT_STATUS_SUCCESS) throw_kmt(dmabench_s_, #call, __FILE__, __LINE__);   \
  } while (0)

// Where nothing may throw (deleters, destructors): a failure is reported on stderr and otherwise ignored.
#define DMABENCH_KMT_QUIETLY(call)                                                                          \
  do {                                                                                                      \
    const HSAKMT_STATUS dmabench_s_ = (call);                                                               \
    if (dmabench_s_ != HSAKMT_STATUS_SUCCESS)                                                               \
      std::fprintf(stderr, "dmabench: %s at %s:%d: libhsakmt error %d: %s (ignored while releasing)\n", #call, \
                   __FILE__, __LINE__, static_cast<int>(dmabench_s_), status_name(dmabench_s_));            \
  } while (0)

constexpr std::size_t kPage = 4096;
constexpr std::size_t kStagingBytes = std::size_t{32} << 20;  // validation copies go through this much host memory
constexpr std::size_t kMoverRingBytes = 16384;
constexpr std::size_t kPlaceholderRingBytes = kPage;
constexpr double kMoveTimeoutS = 30;

std::size_t page_round(std::size_t bytes) { return std::max(kPage, (bytes + kPage - 1) / kPage * kPage); }
std::uint64_t addr(const void* p) { return reinterpret_cast<std::uint64_t>(p); }
double ns_of(std::chrono::steady_clock::time_point t) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
}

// ---- the process's KFD session ------------------------------------------------------------------------
// libhsakmt's open is reference counted, its topology snapshot is not: one hsaKmtReleaseSystemProperties
// drops it for every user of that copy (and on 6.x also its doorbells and apertures), and releasing
// then acquiring again can fail to re-acquire the VM (rocm-systems PR #4108). So KFD is opened once per
// process, by the first platform, and released at exit; every platform and queue shares the session.
struct Session {
  bool opened = false;
  bool shared_with_runtime = false;  // hsaKmtOpenKFD said KERNEL_ALREADY_OPENED: the HSA runtime's thunk
  bool acquired = false;             // this session owns the topology snapshot (released at exit)
  HsaVersionInfo version{};
  HsaSystemProperties system{};
  ~Session() {
    if (acquired) DMABENCH_KMT_QUIETLY(hsaKmtReleaseSystemProperties());
    if (opened) DMABENCH_KMT_QUIETLY(hsaKmtCloseKFD());
  }
};

std::string kmt_failure(const char* call, HSAKMT_STATUS s) {
  return fmt::format("{} failed: libhsakmt error {} ({})", call, static_cast<int>(s), status_name(s));
}

Maybe<std::shared_ptr<Session>> open_session() {
  using Result = Maybe<std::shared_ptr<Session>>;
  if (::access("/dev/kfd", F_OK) != 0) return Result::no("no /dev/kfd (the amdgpu kernel driver's KFD is not there)");
  if (::access("/dev/kfd", R_OK | W_OK) != 0)
    return Result::no(fmt::format("/dev/kfd is not readable and writable by this user ({}; the render group?)",
                                  std::strerror(errno)));
  auto s = std::make_shared<Session>();
  HSAKMT_STATUS st = hsaKmtOpenKFD();
  if (st != HSAKMT_STATUS_SUCCESS && st != HSAKMT_STATUS_KERNEL_ALREADY_OPENED)
    return Result::no(kmt_failure("hsaKmtOpenKFD()", st));
  s->opened = true;  // both answers count one open: hsaKmtCloseKFD balances it
  s->shared_with_runtime = st == HSAKMT_STATUS_KERNEL_ALREADY_OPENED;
  if ((st = hsaKmtGetVersion(&s->version)) != HSAKMT_STATUS_SUCCESS)
    return Result::no(kmt_failure("hsaKmtGetVersion()", st));
  if ((st = hsaKmtAcquireSystemProperties(&s->system)) != HSAKMT_STATUS_SUCCESS)
    return Result::no(kmt_failure("hsaKmtAcquireSystemProperties()", st));
  s->acquired = !s->shared_with_runtime;  // a shared thunk's snapshot is the HSA runtime's: never released here
  if (s->system.NumNodes == 0) return Result::no("KFD reports no node (hsaKmtAcquireSystemProperties: NumNodes 0)");
  return s;
}

Maybe<std::shared_ptr<Session>> session() {
  static std::mutex mu;
  static std::shared_ptr<Session> held;  // for the process's life
  std::lock_guard lock(mu);
  if (held) return held;
  auto s = open_session();
  if (s) held = *s;
  return s;
}

// ---- devices and memory -----------------------------------------------------------------------------
struct Device {
  int ordinal = 0;
  HSAuint32 node = 0;
  std::string bus_id;
  int sdma = 0, xgmi = 0;  // NumSdmaEngines (PCIe: engines 0..sdma-1), NumSdmaXgmiEngines (then)
  int queues_per_engine = 0;
  unsigned gfx_major = 0, gfx_minor = 0, gfx_stepping = 0;
  std::uint32_t device_id = 0;  // PCI device id
  amd::UsableEngines usable;    // engines 0..sdma+xgmi-1 less the fused-off ones (amd/topology.hpp)
  amd::HostAtomics atomics;     // PCIe 64-bit atomics on the link to the first CPU node (ATOMIC completion)
};

// An allocation of alloc_device, by base address: write()/read() find the device that owns an address.
struct DeviceRange {
  std::size_t bytes = 0;
  int device = 0;
};

// What the platform, its queues and its allocations share (they may outlive one another).
struct State {
  std::shared_ptr<Session> session;
  std::vector<Device> devices;
  bool by_eng_id = false;  // HSA_QUEUE_SDMA_BY_ENG_ID: the header has it and KFD >= 1.17
  std::mutex mu;
  std::map<std::uint64_t, DeviceRange> ranges;
  // KFD's SDMA queue slots of each (device, xGMI?) as this process holds them: KFD gives a new queue the
  // lowest free slot s of its kind, on engine s mod (engines of the kind) (SDMA-FACTS.md §2.3).
  std::map<std::pair<int, bool>, std::vector<bool>> slots;
};

HsaMemFlags host_flags(bool ring) {
  HsaMemFlags f{};
  f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
  f.ui32.HostAccess = 1;
  f.ui32.NoNUMABind = 1;
  if (ring) {  // as libhsakmt's own queue memory and mori's rings: pinned, uncached, executable
    f.ui32.NonPaged = 1;
    f.ui32.Uncached = 1;
    f.ui32.ExecuteAccess = 1;
  }
  return f;
}

// hsaKmtAllocMemory on `node`, mapped to `nodes` (none: not mapped); the deleter runs `before_free`,
// unmaps and frees.
Allocation kmt_memory(HSAuint32 node, std::size_t bytes, HsaMemFlags flags, std::vector<HSAuint32> nodes,
                      std::function<void(void*)> before_free = {}) {
  const std::size_t n = page_round(bytes);
  void* p = nullptr;
  DMABENCH_KMT_CHECK(hsaKmtAllocMemory(node, n, flags, &p));
  if (flags.ui32.HostAccess) std::memset(p, 0, n);
  if (!nodes.empty()) {
    HSAuint64 alternate_va = 0;
    HsaMemMapFlags map_flags{};
    const HSAKMT_STATUS s = hsaKmtMapMemoryToGPUNodes(p, n, &alternate_va, map_flags, nodes.size(), nodes.data());
    if (s != HSAKMT_STATUS_SUCCESS) {
      DMABENCH_KMT_QUIETLY(hsaKmtFreeMemory(p, n));
      throw_kmt(s, "hsaKmtMapMemoryToGPUNodes(p, n, &alternate_va, map_flags, nodes.size(), nodes.data())", __FILE__,
                __LINE__);
    }
  }
  return Allocation(p, [n, mapped = !nodes.empty(), before_free = std::move(before_free)](void* q) {
    if (before_free) before_free(q);
    if (mapped) DMABENCH_KMT_QUIETLY(hsaKmtUnmapMemoryToGPU(q));
    DMABENCH_KMT_QUIETLY(hsaKmtFreeMemory(q, n));
  });
}

// ---- queues -------------------------------------------------------------------------------------------
enum class QueueKind { pcie, xgmi, by_engine_id };

const char* kind_name(QueueKind k) {
  return k == QueueKind::pcie ? "SDMA" : k == QueueKind::xgmi ? "SDMA_XGMI" : "SDMA_BY_ENG_ID";
}

class KfdQueue final : public sdma::Queue {
 public:
  // `slot`: the KFD slot this queue is taken to hold (allocation order), -1 for BY_ENG_ID queues.
  KfdQueue(std::shared_ptr<State> st, int device, int engine, std::size_t ring_bytes, QueueKind kind, int slot)
      : st_(std::move(st)), device_(device), engine_(engine), kind_(kind), slot_(slot) {
    const Device& d = st_->devices[device];
    ring_ = kmt_memory(0, ring_bytes, host_flags(true), {d.node});
    HsaQueueResource res{};  // zeroed: libhsakmt reads ErrorReason
    create(d.node, ring_bytes, res);
    queue_id_ = res.QueueId;
    doorbell_ = res.Queue_DoorBell_aql;
    cells_.ring = static_cast<std::uint32_t*>(ring_.get());
    cells_.ring_bytes = ring_bytes;
    cells_.rptr = res.Queue_read_ptr_aql;
    cells_.wptr = res.Queue_write_ptr_aql;
  }
  ~KfdQueue() override {
    DMABENCH_KMT_QUIETLY(hsaKmtDestroyQueue(queue_id_));
    if (slot_ < 0) return;
    std::lock_guard lock(st_->mu);
    st_->slots[{device_, kind_ == QueueKind::xgmi}][static_cast<std::size_t>(slot_)] = false;
  }
  KfdQueue(const KfdQueue&) = delete;
  KfdQueue& operator=(const KfdQueue&) = delete;

  const sdma::QueueCells& cells() const override { return cells_; }
  // Full barrier, the wptr cell, full barrier, the 64-bit doorbell (gfx9 and later; SDMA-FACTS.md §2.4).
  void submit(std::uint64_t wptr) override {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(const_cast<std::uint64_t*>(cells_.wptr), wptr, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(doorbell_, wptr, __ATOMIC_RELEASE);
  }
  int device() const override { return device_; }
  int engine() const override { return engine_; }
  std::uint64_t* doorbell() const { return reinterpret_cast<std::uint64_t*>(doorbell_); }
  std::string describe() const override {
    const Device& d = st_->devices[device_];
    if (kind_ == QueueKind::by_engine_id)
      return fmt::format("KFD SDMA_BY_ENG_ID queue on engine {} of device {} (KFD node {})", engine_, device_, d.node);
    return fmt::format("KFD {} queue on engine {} of device {} (KFD node {}; engine assumed from KFD's allocation order: "
                       "slot {})",
                       kind_name(kind_), engine_, device_, d.node, slot_);
  }

 private:
  void create(HSAuint32 node, std::size_t ring_bytes, HsaQueueResource& res) {
    void* ring = ring_.get();
#ifdef DMABENCH_KFD_HAS_BY_ENG_ID
    if (kind_ == QueueKind::by_engine_id) {
      const auto engine = static_cast<HSAuint32>(engine_);
      DMABENCH_KMT_CHECK(hsaKmtCreateQueueExt(node, HSA_QUEUE_SDMA_BY_ENG_ID, 100, HSA_QUEUE_PRIORITY_NORMAL, engine, ring,
                                              ring_bytes, nullptr, &res));
      return;
    }
#endif
    if (kind_ == QueueKind::by_engine_id) throw std::logic_error("KFD: SDMA_BY_ENG_ID queue without the header's support");
    const HSA_QUEUE_TYPE type = kind_ == QueueKind::xgmi ? HSA_QUEUE_SDMA_XGMI : HSA_QUEUE_SDMA;
    DMABENCH_KMT_CHECK(hsaKmtCreateQueue(node, type, 100, HSA_QUEUE_PRIORITY_NORMAL, ring, ring_bytes, nullptr, &res));
  }

  std::shared_ptr<State> st_;
  int device_, engine_;
  QueueKind kind_;
  int slot_;
  Allocation ring_;
  HSA_QUEUEID queue_id_ = 0;
  HSAuint64* doorbell_ = nullptr;
  sdma::QueueCells cells_;
};

// The usable engine ids of a device, ascending.
std::vector<int> usable_list(const Device& d) {
  std::vector<int> out;
  for (int e = 0; e < d.sdma + d.xgmi && e < 32; ++e)
    if (d.usable.mask >> e & 1u) out.push_back(e);
  return out;
}

// ---- the platform -------------------------------------------------------------------------------------
// What GPU-initiated submission needs per device: a stream for its kernels and GPU-readable host memory
// for the packets a kernel copies into a ring (a bump area, reused once the stream has drained).
struct GpuSide {
  explicit GpuSide(int device) : stream(device) {}
  ~GpuSide() {  // kernels still copying from the area finish before it is freed (a failure is reported, not thrown)
    try {
      stream.synchronize();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dmabench: submit=gpu stream of device %d at teardown: %s\n", stream.device(), e.what());
    }
  }
  GpuSide(const GpuSide&) = delete;
  GpuSide& operator=(const GpuSide&) = delete;
  Allocation area;  // declared first: freed after the stream whose kernels read it
  Stream stream;
  std::size_t used = 0;
};

class KfdPlatform final : public sdma::Platform {
 public:
  explicit KfdPlatform(std::shared_ptr<State> st) : st_(std::move(st)) { read_recommendations(); }
  ~KfdPlatform() override;
  KfdPlatform(const KfdPlatform&) = delete;
  KfdPlatform& operator=(const KfdPlatform&) = delete;

  std::string name() const override { return "KFD (libhsakmt)"; }
  bool hardware_times() const override { return true; }
  int device_count() const override { return static_cast<int>(st_->devices.size()); }
  int engine_count(int device) const override { return dev(device).sdma + dev(device).xgmi; }
  int first_xgmi_engine(int device) const override { return dev(device).sdma; }
  std::string gfx_target(int device) const override;
  WhyNot engine_unusable(int device, int engine) const override;
  WhyNot host_atomics_unsupported(int device) const override;
  int recommended_engine(int src, int dst) const override;
  Allocation alloc_device(int device, std::size_t bytes, const std::vector<int>& peers) override;
  Allocation alloc_host(std::size_t bytes, const std::vector<int>& devices) override {
    return kmt_memory(0, bytes, host_flags(false), nodes_of(devices));
  }
  WhyNot host_kind_unsupported(HostKind kind) const override;
  sdma::HostBuffer alloc_host_buffer(HostKind kind, std::size_t bytes, int node, const std::vector<int>& devices,
                                     hostmem::BufferInfo& info) override;
  void write(void* device_dst, const void* host_src, std::size_t bytes) override;
  void read(void* host_dst, const void* device_src, std::size_t bytes) override;
  Maybe<std::unique_ptr<sdma::Queue>> create_queue(int device, int engine, std::size_t ring_bytes) override;
  sdma::ClockPair clock_counters(int device) override;
  // A GPU kernel writes the ring, the wptr cell and the 64-bit doorbell (amd/sdma/hip-coexistence.md Q2/Q3: libhsakmt
  // maps the doorbell page into the GPU's address space at its CPU address on discrete GPUs, and keeps
  // the wptr cell in GPU-mapped uncached host memory). On APUs and kernels without doorbell-in-GPUVM the
  // doorbell is CPU-only; a kernel's store then faults, and the case fails with the runtime's error.
  WhyNot gpu_initiated_unsupported() const override { return std::nullopt; }
  void gpu_store(int device, std::uint64_t* word, std::uint64_t value) override {
    launch_store_u64(gpu_side(device).stream, word, value);
  }
  void gpu_submit(int device, sdma::Queue& queue, const sdma::StagedPackets& staged) override;
  nlohmann::json describe() const override;

 private:
  GpuSide& gpu_side(int device);
  static constexpr std::size_t kStagingAreaBytes = std::size_t{4} << 20;

  // Validation copies of one device: a staging buffer, a queue on its engine 0 and a fence word.
  struct Mover {
    std::mutex mu;
    Allocation staging, word;
    std::unique_ptr<sdma::Queue> queue;
    std::unique_ptr<sdma::RingWriter> ring;
    std::uint32_t sequence = 0;
  };

  const Device& dev(int device) const;
  std::vector<HSAuint32> nodes_of(const std::vector<int>& devices) const;
  void read_recommendations();
  Maybe<std::unique_ptr<sdma::Queue>> ordered_queue(int device, int engine, std::size_t ring_bytes);
  std::unique_ptr<sdma::Queue> make_slot_queue(int device, int engine, std::size_t ring_bytes, QueueKind kind, int slot);
  int owner(const void* p, std::size_t bytes) const;
  Mover& mover(int device);
  void move(Mover& m, std::uint64_t dst, std::uint64_t src, std::size_t bytes);

  std::shared_ptr<State> st_;
  std::vector<std::vector<int>> recommended_;
  std::mutex movers_mu_, placeholders_mu_;
  std::vector<std::unique_ptr<sdma::Queue>> placeholders_;  // hold KFD slots below the queues asked for
  std::map<int, std::unique_ptr<Mover>> movers_;
  std::mutex gpu_side_mu_;
  std::map<int, std::unique_ptr<GpuSide>> gpu_side_;
};

std::string KfdPlatform::gfx_target(int device) const {
  const Device& d = dev(device);
  return fmt::format("gfx{}{}{:x}", d.gfx_major, d.gfx_minor, d.gfx_stepping);
}

int KfdPlatform::recommended_engine(int src, int dst) const {
  (void)dev(src);
  (void)dev(dst);
  return recommended_[static_cast<std::size_t>(src)][static_cast<std::size_t>(dst)];
}

std::vector<HSAuint32> KfdPlatform::nodes_of(const std::vector<int>& devices) const {
  std::vector<HSAuint32> nodes;
  for (int d : devices)
    if (std::find(nodes.begin(), nodes.end(), dev(d).node) == nodes.end()) nodes.push_back(dev(d).node);
  return nodes;
}

const Device& KfdPlatform::dev(int device) const {
  if (device < 0 || device >= device_count())
    throw std::out_of_range(fmt::format("KFD platform: no device {} (it has {})", device, device_count()));
  return st_->devices[static_cast<std::size_t>(device)];
}

GpuSide& KfdPlatform::gpu_side(int device) {
  std::lock_guard lock(gpu_side_mu_);
  auto& g = gpu_side_[device];
  if (!g) {
    g = std::make_unique<GpuSide>(dev(device).ordinal);
    g->area = alloc_host(kStagingAreaBytes, {device});
  }
  return *g;
}

sdma::ClockPair KfdPlatform::clock_counters(int device) {
  HsaClockCounters c{};
  const HSAuint32 node = dev(device).node;
  const auto before = std::chrono::steady_clock::now();
  DMABENCH_KMT_CHECK(hsaKmtGetClockCounters(node, &c));
  const auto after = std::chrono::steady_clock::now();
  return sdma::ClockPair{c.GPUClockCounter, (ns_of(before) + ns_of(after)) / 2};
}

WhyNot KfdPlatform::host_atomics_unsupported(int device) const {
  const Device& d = dev(device);
  if (d.atomics.available) return std::nullopt;
  return fmt::format("device {} (KFD node {}) has no PCIe 64-bit atomics to system memory: {}", device, d.node, d.atomics.why);
}

WhyNot KfdPlatform::engine_unusable(int device, int engine) const {
  const Device& d = dev(device);
  if (engine < 0 || engine >= d.sdma + d.xgmi)
    return fmt::format("engine {} does not exist: KFD reports {} SDMA engines on device {} ({} PCIe, {} xGMI)", engine,
                       d.sdma + d.xgmi, device, d.sdma, d.xgmi);
  if (engine >= 32 || !(d.usable.mask >> engine & 1u))
    return fmt::format("engine {} of device {} is counted by KFD but not usable: {}", engine, device, d.usable.note);
  return std::nullopt;
}

KfdPlatform::~KfdPlatform() {
  movers_.clear();  // their queues before the placeholders below them
  placeholders_.clear();
}

void KfdPlatform::gpu_submit(int device, sdma::Queue& queue, const sdma::StagedPackets& staged) {
  auto* q = dynamic_cast<KfdQueue*>(&queue);
  if (!q) throw std::logic_error("KFD platform: gpu_submit on a queue it did not create");
  GpuSide& g = gpu_side(device);
  const std::size_t bytes = staged.dwords.size() * 4;
  if (bytes > kStagingAreaBytes)
    throw std::runtime_error(fmt::format("submit=gpu: {} bytes of packets for one queue, more than the {}-byte staging area", bytes,
                                         kStagingAreaBytes));
  if (g.used + bytes > kStagingAreaBytes) {  // earlier kernels may still read the area: let them finish
    g.stream.synchronize();
    g.used = 0;
  }
  auto* src = reinterpret_cast<std::uint32_t*>(static_cast<char*>(g.area.get()) + g.used);
  std::memcpy(src, staged.dwords.data(), bytes);
  g.used += (bytes + 255) / 256 * 256;
  const sdma::QueueCells& c = q->cells();
  launch_ring_submit(g.stream, c.ring, c.ring_bytes, staged.from, src, staged.dwords.size(), const_cast<std::uint64_t*>(c.wptr),
                     q->doorbell(), staged.from + bytes);
}

// KFD's per-link recommended engines come from sysfs, whose node ids are not libhsakmt's (libhsakmt skips the GPUs
// whose render node it cannot open and renumbers the rest: libhsakmt/src/topology.c map_user_to_sysfs_node_id), so
// the sysfs nodes are matched to the devices by PCI location (amd::recommended_by_bus). An engine kept here may
// still be unusable (fused off on MI308X): the engine choice asks engine_unusable() and skips the case.
void KfdPlatform::read_recommendations() {
  std::vector<std::string> bus_ids;
  for (const Device& d : st_->devices) bus_ids.push_back(d.bus_id);
  recommended_ = amd::recommended_by_bus(bus_ids);
}

Allocation KfdPlatform::alloc_device(int device, std::size_t bytes, const std::vector<int>& peers) {
  std::vector<int> devices{device};
  devices.insert(devices.end(), peers.begin(), peers.end());
  HsaMemFlags f{};
  f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
  f.ui32.NonPaged = 1;
  f.ui32.HostAccess = 0;
  f.ui32.NoNUMABind = 1;
  std::weak_ptr<State> weak = st_;
  Allocation a = kmt_memory(dev(device).node, bytes, f, nodes_of(devices), [weak](void* p) {
    if (auto st = weak.lock()) {
      std::lock_guard lock(st->mu);
      st->ranges.erase(addr(p));
    }
  });
  std::lock_guard lock(st_->mu);
  st_->ranges[addr(a.get())] = DeviceRange{page_round(bytes), device};
  return a;
}

// ---- host memory as a copy endpoint -------------------------------------------------------------------
// SDMA reaches system memory only through the GPU's page tables: the pages must be mapped for the GPU
// (hsaKmtMapMemoryToGPUNodes), which pins them. pinned and mapped are one allocation here,
// hsaKmtAllocMemory(HostAccess) mapped to every device of the plan at one address for the CPU and the GPUs
// (how the artifact allocates its host buffers, SDMA-FACTS.md §2.2): NoNUMABind keeps libhsakmt's own
// binding off and the thread's MPOL_BIND policy places the pages (kmt_memory touches them inside the scope);
// hostmem::verify reads back where they landed (pages the kernel allocates itself, GTT memory, may not
// follow the policy; the record says so). registered: ordinary pages placed and touched, then
// hsaKmtRegisterMemoryToNodes and hsaKmtMapMemoryToGPUNodes, whose AlternateVAGPU is the address packets use
// (libhsakmt's fmm_register_user_memory makes a userptr BO in the GPU's own aperture). pageable memory has
// no GPU mapping at all.
WhyNot KfdPlatform::host_kind_unsupported(HostKind kind) const {
  if (kind != HostKind::pageable) return std::nullopt;
  return std::string("SDMA queues read and write system memory only through GPU-mapped pages (KFD memory or registered "
                     "userptr pages), and pageable memory is never mapped for the GPU; use host_memory kind registered");
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Placed, touched pages registered with KFD and mapped to `nodes`; packets use the GPU address it returns.
sdma::HostBuffer registered_pages(std::size_t bytes, int node, std::vector<HSAuint32> nodes, hostmem::BufferInfo& info) {
  hostmem::Memory pages = hostmem::map_pages(bytes, node, false, info);  // alloc_s, placement, "mmap+mbind"
  const std::size_t n = page_round(bytes);
  const auto t0 = std::chrono::steady_clock::now();
  DMABENCH_KMT_CHECK(hsaKmtRegisterMemoryToNodes(pages.get(), n, nodes.size(), nodes.data()));
  HSAuint64 gpu_va = 0;
  HsaMemMapFlags map_flags{};
  const HSAKMT_STATUS s = hsaKmtMapMemoryToGPUNodes(pages.get(), n, &gpu_va, map_flags, nodes.size(), nodes.data());
  if (s != HSAKMT_STATUS_SUCCESS) {
    DMABENCH_KMT_QUIETLY(hsaKmtDeregisterMemory(pages.get()));
    throw_kmt(s, "hsaKmtMapMemoryToGPUNodes(pages.get(), n, &gpu_va, map_flags, nodes.size(), nodes.data())", __FILE__, __LINE__);
  }
  info.register_s = seconds_since(t0);
  info.method += "+hsaKmtRegisterMemoryToNodes+hsaKmtMapMemoryToGPUNodes";
  const std::uint64_t device_address = gpu_va ? gpu_va : addr(pages.get());
  Allocation a(pages.release(), [unmap = pages.get_deleter()](void* p) {
    DMABENCH_KMT_QUIETLY(hsaKmtUnmapMemoryToGPU(p));
    DMABENCH_KMT_QUIETLY(hsaKmtDeregisterMemory(p));
    unmap(p);
  });
  return sdma::HostBuffer{std::move(a), device_address};
}

sdma::HostBuffer KfdPlatform::alloc_host_buffer(HostKind kind, std::size_t bytes, int node, const std::vector<int>& devices,
                                                hostmem::BufferInfo& info) {
  if (auto why = host_kind_unsupported(kind)) throw std::logic_error("KFD platform: " + *why);
  if (kind == HostKind::registered) return registered_pages(bytes, node, nodes_of(devices), info);
  const auto t0 = std::chrono::steady_clock::now();
  Allocation a;
  {
    hostmem::ScopedPolicy policy(node);
    a = kmt_memory(0, bytes, host_flags(false), nodes_of(devices));
  }
  info.alloc_s = seconds_since(t0);
  info.method = "hsaKmtAllocMemory(HostAccess)+hsaKmtMapMemoryToGPUNodes";
  if (node >= 0) info.method += " under MPOL_BIND";
  info.placement = hostmem::verify(a.get(), bytes, node >= 0 ? node : hostmem::nodes().front());
  const std::uint64_t device_address = addr(a.get());
  return sdma::HostBuffer{std::move(a), device_address};
}

int KfdPlatform::owner(const void* p, std::size_t bytes) const {
  std::lock_guard lock(st_->mu);
  auto it = st_->ranges.upper_bound(addr(p));
  if (it != st_->ranges.begin()) {
    --it;
    if (addr(p) + bytes <= it->first + it->second.bytes) return it->second.device;
  }
  throw std::invalid_argument(
      fmt::format("KFD platform: {} bytes at {} are not inside memory from alloc_device", bytes, static_cast<const void*>(p)));
}

KfdPlatform::Mover& KfdPlatform::mover(int device) {
  std::lock_guard lock(movers_mu_);
  auto& m = movers_[device];
  if (m) return *m;
  auto fresh = std::make_unique<Mover>();
  fresh->staging = alloc_host(kStagingBytes, {device});
  fresh->word = alloc_host(kPage, {device});
  auto q = create_queue(device, 0, kMoverRingBytes);
  if (!q)
    throw std::runtime_error(
        fmt::format("KFD platform: no SDMA queue for validation copies on device {}: {}", device, q.why_not()));
  fresh->queue = std::move(q).value();
  fresh->ring = std::make_unique<sdma::RingWriter>(*fresh->queue);
  m = std::move(fresh);
  return *m;
}

// COPY_LINEAR packets of at most 4 MiB (the kernel's copy_max_bytes on SDMA 4.4.2), then a FENCE that
// writes a new sequence number to the host word (a FENCE needs no PCIe atomics), then a CPU spin.
void KfdPlatform::move(Mover& m, std::uint64_t dst, std::uint64_t src, std::size_t bytes) {
  for (const auto& c : sdma::copy_chunks(bytes, sdma::kKernelMaxCopyBytes))
    m.ring->put(sdma::CopyLinear{src + c.offset, dst + c.offset, c.bytes});
  if (++m.sequence == 0) ++m.sequence;  // the word starts at 0
  const std::uint32_t seq = m.sequence;
  auto* word = static_cast<std::uint32_t*>(m.word.get());
  m.ring->put(sdma::Fence{addr(word), seq});
  m.ring->submit();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kMoveTimeoutS);
  while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != seq) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(fmt::format(
          "KFD platform: a validation copy of {} bytes on the {} did not complete within {} s (fence word {}, expected {}; "
          "rptr {}, wptr {})",
          bytes, m.queue->describe(), kMoveTimeoutS, __atomic_load_n(word, __ATOMIC_ACQUIRE), seq,
          static_cast<std::uint64_t>(*m.queue->cells().rptr), m.ring->submitted()));
  }
}

void KfdPlatform::write(void* device_dst, const void* host_src, std::size_t bytes) {
  if (bytes == 0) return;
  Mover& m = mover(owner(device_dst, bytes));
  std::lock_guard lock(m.mu);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(kStagingBytes, bytes - done);
    std::memcpy(m.staging.get(), static_cast<const char*>(host_src) + done, n);
    move(m, addr(device_dst) + done, addr(m.staging.get()), n);
    done += n;
  }
}

void KfdPlatform::read(void* host_dst, const void* device_src, std::size_t bytes) {
  if (bytes == 0) return;
  Mover& m = mover(owner(device_src, bytes));
  std::lock_guard lock(m.mu);
  for (std::size_t done = 0; done < bytes;) {
    const std::size_t n = std::min(kStagingBytes, bytes - done);
    move(m, addr(m.staging.get()), addr(device_src) + done, n);
    std::memcpy(static_cast<char*>(host_dst) + done, m.staging.get(), n);
    done += n;
  }
}

Maybe<std::unique_ptr<sdma::Queue>> KfdPlatform::create_queue(int device, int engine, std::size_t ring_bytes) {
  using Result = Maybe<std::unique_ptr<sdma::Queue>>;
  if (device < 0 || device >= device_count())
    return Result::no(fmt::format("no device {} (the KFD platform has {})", device, device_count()));
  const Device& d = dev(device);
  if (auto why = engine_unusable(device, engine)) return Result::no(*why);  // before KFD: a fused-off engine hangs
  if (ring_bytes < kPage || (ring_bytes & (ring_bytes - 1)) != 0)
    return Result::no(fmt::format("ring of {} bytes: KFD needs a power of two, and a ring of at least one page (4096 "
                                  "bytes: the ring must be one GPU mapping of exactly the queue's size)",
                                  ring_bytes));
  if (d.gfx_major < 9)
    return Result::no(fmt::format("device {} is gfx{}: KFD SDMA queues are driven here with 64-bit doorbells (gfx9 "
                                  "and later)",
                                  device, d.gfx_major));
  if (st_->by_eng_id)
    return std::unique_ptr<sdma::Queue>(
        std::make_unique<KfdQueue>(st_, device, engine, ring_bytes, QueueKind::by_engine_id, -1));
  return ordered_queue(device, engine, ring_bytes);
}

// Without SDMA_BY_ENG_ID the engine cannot be named: KFD gives a new queue of a kind the lowest free slot
// s of that kind, on the kind's engine s mod (engines of the kind). To land on `engine`, the free slots
// below the first free slot of that engine are filled with placeholder queues, kept for the platform's
// life. Right only while no other process (nor the HSA runtime's own blits) holds SDMA queues of that
// kind on the GPU; describe() says "assumed". Where a placeholder would sit on an engine that is not usable
// (MI308X's fused-off odd ids, amd/topology.hpp usable_engines), the queue is refused: none is made on such an engine.
Maybe<std::unique_ptr<sdma::Queue>> KfdPlatform::ordered_queue(int device, int engine, std::size_t ring_bytes) {
  const Device& d = dev(device);
  const bool xgmi = engine >= d.sdma;
  const int count = xgmi ? d.xgmi : d.sdma, index = xgmi ? engine - d.sdma : engine;
  const QueueKind kind = xgmi ? QueueKind::xgmi : QueueKind::pcie;
  std::lock_guard placeholders(placeholders_mu_);  // one allocation-order sequence at a time
  for (;;) {
    int slot = 0;
    {
      std::lock_guard lock(st_->mu);
      auto& held = st_->slots[{device, xgmi}];
      while (static_cast<std::size_t>(slot) < held.size() && held[static_cast<std::size_t>(slot)]) ++slot;
      if (static_cast<std::size_t>(slot) == held.size()) held.push_back(false);
      held[static_cast<std::size_t>(slot)] = true;  // taken now: the queue below frees it if it cannot be made
    }
    const bool wanted = slot % count == index;
    const int engine_of_slot = (xgmi ? d.sdma : 0) + slot % count;
    if (auto why = wanted ? WhyNot() : engine_unusable(device, engine_of_slot)) {
      std::lock_guard lock(st_->mu);
      st_->slots[{device, xgmi}][static_cast<std::size_t>(slot)] = false;
      return Maybe<std::unique_ptr<sdma::Queue>>::no(fmt::format(
          "engine {} of device {} is reached in KFD's allocation order (this libhsakmt has no SDMA_BY_ENG_ID) only past a "
          "queue on engine {}, which is not made: {}",
          engine, device, engine_of_slot, *why));
    }
    auto q = make_slot_queue(device, engine_of_slot, wanted ? ring_bytes : kPlaceholderRingBytes, kind, slot);
    if (wanted) return q;
    placeholders_.push_back(std::move(q));
  }
}

std::unique_ptr<sdma::Queue> KfdPlatform::make_slot_queue(int device, int engine, std::size_t ring_bytes, QueueKind kind,
                                                          int slot) {
  try {
    return std::make_unique<KfdQueue>(st_, device, engine, ring_bytes, kind, slot);
  } catch (...) {
    std::lock_guard lock(st_->mu);
    st_->slots[{device, kind == QueueKind::xgmi}][static_cast<std::size_t>(slot)] = false;
    throw;
  }
}

nlohmann::json KfdPlatform::describe() const {
  nlohmann::json devices = nlohmann::json::array(), engines = nlohmann::json::array();
  for (const Device& d : st_->devices) {
    devices.push_back({{"device", d.ordinal},
                       {"kfd_node", d.node},
                       {"bus_id", d.bus_id},
                       {"gfx", fmt::format("gfx{}{}{:x}", d.gfx_major, d.gfx_minor, d.gfx_stepping)},
                       {"sdma_engines", d.sdma},
                       {"sdma_xgmi_engines", d.xgmi},
                       {"first_xgmi_engine", d.sdma},
                       {"sdma_queues_per_engine", d.queues_per_engine},
                       {"pci_device_id", fmt::format("0x{:04x}", d.device_id)},
                       {"usable_engines", usable_list(d)},
                       {"usable_engines_note", d.usable.note},
                       {"host_atomics_64bit", d.atomics.available},
                       {"host_atomics_why", d.atomics.why}});
    engines.push_back(d.sdma + d.xgmi);
  }
  const Session& s = *st_->session;
#ifdef DMABENCH_KFD_FLAT_HEADER
  std::string header = "hsakmt.h (flat layout)";
#else
  std::string header = "hsakmt/hsakmt.h";
#endif
#ifdef DMABENCH_KFD_HAS_BY_ENG_ID
  header += ", with hsaKmtCreateQueueExt and HSA_QUEUE_SDMA_BY_ENG_ID (libhsakmt of ROCm >= 6.3)";
#else
  header += ", without HSA_QUEUE_SDMA_BY_ENG_ID (libhsakmt of ROCm <= 6.2)";
#endif
  return {{"platform", name()},
          {"hardware_times", true},
          {"kfd_version", fmt::format("{}.{}", s.version.KernelInterfaceMajorVersion, s.version.KernelInterfaceMinorVersion)},
          {"libhsakmt_header", header},
          {"libhsakmt_copy", s.shared_with_runtime ? "shared with the HSA runtime (hsaKmtOpenKFD: KERNEL_ALREADY_OPENED)"
                                                   : "this program's own (the HSA runtime has its private copy)"},
          {"queue_type", st_->by_eng_id ? "SDMA_BY_ENG_ID (hsaKmtCreateQueueExt)"
                                        : "SDMA (PCIe engines) / SDMA_XGMI (xGMI engines); engine assumed from KFD's "
                                          "allocation order"},
          {"engines_per_device", engines},
          {"devices", devices}};
}

// ---- construction ---------------------------------------------------------------------------------------
// The io links of libhsakmt node `node` (libhsakmt's own node numbering on both ends).
std::vector<amd::IoLink> kmt_links(HSAuint32 node, HSAuint32 count) {
  std::vector<amd::IoLink> out;
  if (count == 0) return out;
  std::vector<HsaIoLinkProperties> links(count);
  DMABENCH_KMT_CHECK(hsaKmtGetNodeIoLinkProperties(node, count, links.data()));
  for (const HsaIoLinkProperties& l : links)
    out.push_back(amd::IoLink{static_cast<int>(l.NodeFrom), static_cast<int>(l.NodeTo), static_cast<std::uint32_t>(l.IoLinkType),
                              l.Flags.LinkProperty});
  return out;
}

// KFD's GPU nodes (NumFComputeCores > 0), as Device records without their HIP ordinal. PCIe atomics are read from
// the link to the first CPU node, ROCr's cpu_agents()[0] (amd::host_atomics).
std::vector<Device> kfd_gpus(const Session& s) {
  std::vector<Device> gpus;
  int first_cpu = -1;
  for (HSAuint32 node = 0; node < s.system.NumNodes && first_cpu < 0; ++node) {
    HsaNodeProperties p{};
    DMABENCH_KMT_CHECK(hsaKmtGetNodeProperties(node, &p));
    if (p.NumCPUCores > 0) first_cpu = static_cast<int>(node);
  }
  for (HSAuint32 node = 0; node < s.system.NumNodes; ++node) {
    HsaNodeProperties p{};
    DMABENCH_KMT_CHECK(hsaKmtGetNodeProperties(node, &p));
    if (p.NumFComputeCores == 0) continue;
    Device d;
    d.node = node;
    amd::KfdNode location;
    location.domain = p.Domain;
    location.location_id = p.LocationId;
    d.bus_id = location.bus_id();
    d.sdma = static_cast<int>(p.NumSdmaEngines);
    d.xgmi = static_cast<int>(p.NumSdmaXgmiEngines);
    d.queues_per_engine = static_cast<int>(p.NumSdmaQueuesPerEngine);
    d.gfx_major = p.EngineId.ui32.Major;
    d.gfx_minor = p.EngineId.ui32.Minor;
    d.gfx_stepping = p.EngineId.ui32.Stepping;
    d.device_id = p.DeviceId;
    d.usable = amd::usable_engines(d.device_id, d.sdma, d.xgmi);
    d.atomics = amd::host_atomics(kmt_links(node, p.NumIOLinks), first_cpu);
    gpus.push_back(d);
  }
  return gpus;
}

// The KFD node of each HIP device, matched by PCI domain:bus:device (HIP's bus id has no function;
// HIP_VISIBLE_DEVICES may hide or renumber GPUs), or why one has none.
Maybe<std::vector<Device>> match_devices(const std::vector<Device>& gpus, int hip_devices) {
  auto without_function = [](const std::string& id) { return id.substr(0, id.rfind('.')); };
  std::vector<Device> out;
  for (int ordinal = 0; ordinal < hip_devices; ++ordinal) {
    const std::string bus = properties(ordinal).bus_id;
    auto it = std::find_if(gpus.begin(), gpus.end(),
                           [&](const Device& g) { return without_function(g.bus_id) == without_function(bus); });
    if (it == gpus.end()) {
      std::string known;
      for (const auto& g : gpus) known += fmt::format("{}{} (node {})", known.empty() ? "" : ", ", g.bus_id, g.node);
      return Maybe<std::vector<Device>>::no(fmt::format("HIP device {} at PCI {} has no KFD GPU node (KFD's GPUs: {})",
                                                        ordinal, bus, known.empty() ? "none" : known));
    }
    out.push_back(*it);
    out.back().ordinal = ordinal;
  }
  return out;
}

}  // namespace

Maybe<std::unique_ptr<amd::sdma::Platform>> make_kfd_platform() {
  using Result = Maybe<std::unique_ptr<amd::sdma::Platform>>;
  try {
    const auto hip_devices = device_count();  // HIP first: the HSA runtime opens KFD before this file does
    if (!hip_devices) return Result::no(fmt::format("no HIP device: {}", hip_devices.why_not()));
    auto s = session();
    if (!s) return Result::no(s.why_not());
    auto st = std::make_shared<State>();
    st->session = *s;
    const auto gpus = kfd_gpus(*st->session);
    if (gpus.empty()) return Result::no("KFD reports no GPU node (no node with NumFComputeCores > 0)");
    auto devices = match_devices(gpus, *hip_devices);
    if (!devices) return Result::no(devices.why_not());
    st->devices = std::move(*devices);
    const HsaVersionInfo& v = st->session->version;
#ifdef DMABENCH_KFD_HAS_BY_ENG_ID
    // KFD ioctl 1.17 added SDMA queues on a named engine; an older KFD gets SDMA / SDMA_XGMI queues
    st->by_eng_id = v.KernelInterfaceMajorVersion > 1 ||
                    (v.KernelInterfaceMajorVersion == 1 && v.KernelInterfaceMinorVersion >= 17);
#else
    (void)v;
#endif
    return std::unique_ptr<amd::sdma::Platform>(std::make_unique<KfdPlatform>(std::move(st)));
  } catch (const std::exception& e) {
    return Result::no(e.what());
  }
}

}  // namespace dmabench::gpu
