// HSA runtime calls of the `hsa` engine and the AMD copy tracer. Every call is checked: a failure
// throws (gpu/call_error.hpp) with the call, file:line, the status and hsa_status_string's text.
#include "gpu/hsa.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>

#include "amd/engine_map.hpp"
#include "amd/topology.hpp"
#include "gpu/call_error.hpp"
#include "gpu/copy_tracer.hpp"
#include "gpu/features.hpp"
#include "gpu/gpu.hpp"

namespace dmabench::gpu::hsa {
namespace {

[[noreturn]] void throw_hsa(hsa_status_t s, const char* call, const char* file, int line) {
  const char* text = nullptr;
  if (hsa_status_string(s, &text) != HSA_STATUS_SUCCESS || !text) text = "unknown HSA status";
  throw_call_error("HSA", call, file, line, static_cast<long long>(s), text);
}

#define DMABENCH_HSA_CHECK(call)                                                          \
  do {                                                                                    \
    hsa_status_t dmabench_s_ = (call);                                                    \
    if (dmabench_s_ != HSA_STATUS_SUCCESS) throw_hsa(dmabench_s_, #call, __FILE__, __LINE__); \
  } while (0)

struct GpuAgent {
  hsa_agent_t agent{};
  std::uint32_t domain = 0, bdfid = 0;
};

// HSA's GPU agents (hsa_init is reference counted: the HIP runtime in this process holds one too).
const std::vector<GpuAgent>& gpu_agents() {
  static std::vector<GpuAgent> agents;
  static std::once_flag once;
  std::call_once(once, [] {  // a throw leaves the flag unset: the next call retries from scratch
    agents.clear();
    DMABENCH_HSA_CHECK(hsa_init());
    DMABENCH_HSA_CHECK(hsa_iterate_agents(
        [](hsa_agent_t a, void* data) {
          hsa_device_type_t type{};
          if (hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type) != HSA_STATUS_SUCCESS) return HSA_STATUS_ERROR;
          if (type != HSA_DEVICE_TYPE_GPU) return HSA_STATUS_SUCCESS;
          GpuAgent g;
          g.agent = a;
          if (hsa_agent_get_info(a, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_BDFID), &g.bdfid) != HSA_STATUS_SUCCESS ||
              hsa_agent_get_info(a, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_DOMAIN), &g.domain) != HSA_STATUS_SUCCESS)
            return HSA_STATUS_ERROR;
          static_cast<std::vector<GpuAgent>*>(data)->push_back(g);
          return HSA_STATUS_SUCCESS;
        },
        &agents));
  });
  return agents;
}

// The HSA agent of a HIP device ordinal, matched by PCI location (HIP_VISIBLE_DEVICES may renumber).
hsa_agent_t agent_of(int device) {
  static std::mutex mu;
  static std::vector<std::pair<int, hsa_agent_t>> cache;
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& [d, a] : cache)
    if (d == device) return a;
  // domain:bus:device only: the HIP runtime's bus id does not carry the PCI function
  auto without_function = [](const std::string& id) { return id.substr(0, id.rfind('.')); };
  const std::string bus = properties(device).bus_id;
  for (const auto& g : gpu_agents()) {
    amd::KfdNode n;
    n.domain = g.domain;
    n.location_id = g.bdfid;
    if (without_function(n.bus_id()) == without_function(bus)) {
      cache.emplace_back(device, g.agent);
      return g.agent;
    }
  }
  throw std::runtime_error(fmt::format("no HSA GPU agent at PCI {} (HIP device {})", bus, device));
}

hsa_signal_t sig(const Signal& s) { return hsa_signal_t{s.handle()}; }

// The first CPU agent HSA lists.
hsa_agent_t first_cpu_agent() {
  gpu_agents();  // hsa_init
  hsa_agent_t found{};
  const hsa_status_t s = hsa_iterate_agents(
      [](hsa_agent_t a, void* data) {
        hsa_device_type_t type{};
        if (hsa_agent_get_info(a, HSA_AGENT_INFO_DEVICE, &type) != HSA_STATUS_SUCCESS) return HSA_STATUS_ERROR;
        if (type != HSA_DEVICE_TYPE_CPU) return HSA_STATUS_SUCCESS;
        *static_cast<hsa_agent_t*>(data) = a;
        return HSA_STATUS_INFO_BREAK;
      },
      &found);
  if (s != HSA_STATUS_INFO_BREAK) throw std::runtime_error("HSA lists no CPU agent");
  return found;
}

// ---- tracing ----------------------------------------------------------------------------------------
std::atomic<bool> g_tracing{false};
std::mutex g_mu;
std::vector<CopyInterval> g_records;
double g_offset_ns = 0;      // HSA system clock ns - steady_clock ns
double g_ns_per_tick = 1.0;  // HSA system timestamp

// The offset between HSA's system clock (the domain of async copy timestamps) and steady_clock:
// the tightest of 20 bracketed reads.
void calibrate() {
  std::uint64_t freq = 0;
  DMABENCH_HSA_CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &freq));
  if (freq == 0) throw std::runtime_error("HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY is 0");
  g_ns_per_tick = 1e9 / static_cast<double>(freq);
  double best_width = 1e300;
  for (int i = 0; i < 20; ++i) {
    const double a = steady_now_ns();
    std::uint64_t ticks = 0;
    DMABENCH_HSA_CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_TIMESTAMP, &ticks));
    const double b = steady_now_ns();
    if (b - a < best_width) {
      best_width = b - a;
      g_offset_ns = static_cast<double>(ticks) * g_ns_per_tick - (a + b) / 2;
    }
  }
}

class HsaTracer final : public CopyTracer {
 public:
  std::string source() const override {
    return "HSA copy timestamps (hsa_amd_profiling_get_async_copy_time), converted by the HSA runtime onto the system clock";
  }
  void start() override {
    gpu_agents();
    calibrate();
    DMABENCH_HSA_CHECK(hsa_amd_profiling_async_copy_enable(true));
    std::lock_guard<std::mutex> lock(g_mu);
    g_records.clear();
    g_tracing = true;
  }
  std::vector<CopyInterval> stop() override {
    g_tracing = false;
    DMABENCH_HSA_CHECK(hsa_amd_profiling_async_copy_enable(false));
    std::lock_guard<std::mutex> lock(g_mu);
    return std::exchange(g_records, {});
  }
  ~HsaTracer() override {
    if (g_tracing) {
      g_tracing = false;
      hsa_amd_profiling_async_copy_enable(false);
    }
  }
};

}  // namespace

// ---- signals ------------------------------------------------------------------------------------------
Signal::Signal(std::int64_t initial) {
  gpu_agents();
  hsa_signal_t s{};
  DMABENCH_HSA_CHECK(hsa_signal_create(initial, 0, nullptr, &s));
  handle_ = s.handle;
}
Signal::~Signal() {
  if (handle_) hsa_signal_destroy(hsa_signal_t{handle_});
}
void Signal::store(std::int64_t value) const { hsa_signal_store_screlease(hsa_signal_t{handle_}, value); }
void Signal::add(std::int64_t value) const { hsa_signal_add_screlease(hsa_signal_t{handle_}, value); }
std::int64_t Signal::load() const { return hsa_signal_load_scacquire(hsa_signal_t{handle_}); }
void Signal::spin_until_zero(double timeout_s) const {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (unsigned spin = 0;; ++spin) {
    const std::int64_t v = load();
    if (v == 0) return;
    if (v < 0) throw std::runtime_error(fmt::format("HSA completion signal is {} (a copy failed)", v));
    if ((spin & 0xffff) == 0 && std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error(fmt::format("HSA completion signal still {} after {} s", v, timeout_s));
  }
}

// ---- copies ---------------------------------------------------------------------------------------------
// Host memory's agent: the CPU agent hsa_amd_pointer_info names as its owner, as TransferBench takes a NUMA
// node's CPU agent (ROCm/TransferBench, src/header/TransferBench.hpp, GetHsaAgent) and HIP passes its CPU
// agent for host memory (ROCm/clr, rocclr/device/rocm/rocblit.cpp, DmaBlitManager::hsaCopy). ROCr then
// copies with the other side's GPU agent (Runtime::CopyMemory) on its host-to-device or device-to-host
// SDMA blit (GpuAgent::GetBlitObject). hsa_amd_memory_async_copy wants an agent that "must be able to
// directly access both the source and destination buffers" (hsa_ext_amd.h): memory the runtime allocated
// or locked, never pageable memory it does not know.
Maybe<HostMemory> host_memory(const void* p) {
  gpu_agents();  // hsa_init
  hsa_amd_pointer_info_t info{};
  info.size = sizeof(info);
  DMABENCH_HSA_CHECK(hsa_amd_pointer_info(p, &info, nullptr, nullptr, nullptr));
  if (info.type == HSA_EXT_POINTER_TYPE_UNKNOWN || !info.agentBaseAddress || !info.hostBaseAddress)
    return Maybe<HostMemory>::no("the HSA runtime does not know this host memory (hsa_amd_pointer_info: not allocated by "
                                 "the runtime nor locked), so no GPU agent can access it");
  hsa_agent_t owner = info.agentOwner;
  hsa_device_type_t type{};
  if (hsa_agent_get_info(owner, HSA_AGENT_INFO_DEVICE, &type) != HSA_STATUS_SUCCESS || type != HSA_DEVICE_TYPE_CPU)
    owner = first_cpu_agent();  // locked memory may name no CPU owner: any CPU agent marks the side as host memory
  const auto offset = static_cast<const char*>(p) - static_cast<const char*>(info.hostBaseAddress);
  return HostMemory{owner.handle, static_cast<char*>(info.agentBaseAddress) + offset};
}

int host_sdma_engine_count(int device) {
#ifdef DMABENCH_HSA_HAS_SDMA_INFO
  std::uint32_t host = 0;
  DMABENCH_HSA_CHECK(hsa_agent_get_info(agent_of(device), static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_NUM_SDMA_ENG), &host));
  return static_cast<int>(host);
#else
  return std::max(0, properties(device).sdma_engines);
#endif
}

void async_copy(const Copy& c, const Signal* dependency, const Signal& completion) {
  const hsa_agent_t dst = c.dst_cpu_agent ? hsa_agent_t{c.dst_cpu_agent} : agent_of(c.dst_device);
  const hsa_agent_t src = c.src_cpu_agent ? hsa_agent_t{c.src_cpu_agent} : agent_of(c.src_device);
  hsa_signal_t dep{};
  if (dependency) dep = sig(*dependency);
  const std::uint32_t ndep = dependency ? 1 : 0;
  if (c.engine < 0) {
    DMABENCH_HSA_CHECK(hsa_amd_memory_async_copy(c.dst, dst, c.src, src, c.bytes, ndep, dependency ? &dep : nullptr, sig(completion)));
    return;
  }
#ifdef DMABENCH_HSA_HAS_COPY_ON_ENGINE
  DMABENCH_HSA_CHECK(hsa_amd_memory_async_copy_on_engine(c.dst, dst, c.src, src, c.bytes, ndep, dependency ? &dep : nullptr,
                                                         sig(completion),
                                                         static_cast<hsa_amd_sdma_engine_id_t>(amd::engine_bit(c.engine)), true));
#else
  throw std::runtime_error(gpu::missing(gpu::this_build(), "hsa engines=preferred|round-robin|map:FILE").value());
#endif
}

WhyNot copy_on_engine_unsupported() {
#ifdef DMABENCH_HSA_HAS_COPY_ON_ENGINE
  return std::nullopt;
#else
  return gpu::missing(gpu::this_build(), "hsa engines=preferred|round-robin|map:FILE");
#endif
}

std::uint32_t preferred_engines(int src_device, int dst_device) {
#ifdef DMABENCH_HSA_HAS_COPY_ON_ENGINE
  std::uint32_t mask = 0;
  DMABENCH_HSA_CHECK(hsa_amd_memory_get_preferred_copy_engine(agent_of(dst_device), agent_of(src_device), &mask));
  return mask;
#else
  (void)src_device;
  (void)dst_device;
  throw std::runtime_error(gpu::missing(gpu::this_build(), "hsa engines=preferred|round-robin|map:FILE").value());
#endif
}

int sdma_engine_count(int device) {
#ifdef DMABENCH_HSA_HAS_SDMA_INFO
  std::uint32_t host = 0, xgmi = 0;
  const hsa_agent_t a = agent_of(device);
  DMABENCH_HSA_CHECK(hsa_agent_get_info(a, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_NUM_SDMA_ENG), &host));
  DMABENCH_HSA_CHECK(hsa_agent_get_info(a, static_cast<hsa_agent_info_t>(HSA_AMD_AGENT_INFO_NUM_SDMA_XGMI_ENG), &xgmi));
  return static_cast<int>(host + xgmi);
#else
  return std::max(0, properties(device).copy_engines);
#endif
}

// ---- tracing --------------------------------------------------------------------------------------------
bool tracing() { return g_tracing.load(std::memory_order_relaxed); }

void record_copy(const Signal& completion, std::uint64_t bytes) {
  if (!tracing()) return;
  hsa_amd_profiling_async_copy_time_t t{};
  DMABENCH_HSA_CHECK(hsa_amd_profiling_get_async_copy_time(sig(completion), &t));
  // Async copy timestamps are in HSA's system domain already (unlike dispatch timestamps, which
  // need hsa_amd_profiling_convert_tick_to_system_domain); to steady_clock through the offset.
  CopyInterval c;
  c.start_ns = static_cast<double>(t.start) * g_ns_per_tick - g_offset_ns;
  c.end_ns = static_cast<double>(t.end) * g_ns_per_tick - g_offset_ns;
  c.bytes = bytes;
  std::lock_guard<std::mutex> lock(g_mu);
  g_records.push_back(c);
}

Maybe<std::unique_ptr<CopyTracer>> make_tracer() {
  try {
    gpu_agents();
  } catch (const std::exception& e) {
    return Maybe<std::unique_ptr<CopyTracer>>::no(e.what());
  }
  return std::make_unique<HsaTracer>();
}

}  // namespace dmabench::gpu::hsa
