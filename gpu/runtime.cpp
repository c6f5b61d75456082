// The GPU layer's devices, buffers and streams: one source for the CUDA and HIP runtimes (vendor.hpp).
#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "gpu/gpu.hpp"
#include "gpu/vendor.hpp"
#include "amd/topology.hpp"
#include "gpu/features.hpp"

namespace dmabench::gpu {

// What a failing device count means here, in the words a user acts on (the runtime's own words follow it): the
// runtime's "driver version is insufficient" is also what it says where no driver is loaded at all.
std::string no_gpu_reason(GPU(Error_t) err) {
#if defined(DMABENCH_GPU_HIP)
  const bool driver = std::ifstream("/sys/module/amdgpu/version").good() || std::ifstream("/dev/kfd").good();
  const char* vendor = "AMD (amdgpu)";
  const bool too_old = err == hipErrorInsufficientDriver;
#else
  const bool driver = std::ifstream("/proc/driver/nvidia/version").good();
  const char* vendor = "NVIDIA";
  const bool too_old = err == cudaErrorInsufficientDriver;
#endif
  const std::string said = fmt::format("{}GetDeviceCount: {}: {}", detail::kBackendName, GPU(GetErrorName)(err), GPU(GetErrorString)(err));
  if (!driver)
    return fmt::format("no {} driver is loaded on this machine, so there is no GPU to run on (use --backend host, or install "
                       "the driver; {})", vendor, said);
  if (too_old)
    return fmt::format("the {} driver here is older than this build's runtime needs: update the driver ({})", vendor, said);
  return fmt::format("no GPU is visible to this process (check the devices it may use, e.g. CUDA_VISIBLE_DEVICES / "
                     "HIP_VISIBLE_DEVICES, or a container's device list; {})", said);
}

Maybe<int> device_count() {
  int n = 0;
  GPU(Error_t) err = GPU(GetDeviceCount)(&n);
  if (err != GPU(Success)) {
    (void)GPU(GetLastError)();
    return Maybe<int>::no(no_gpu_reason(err));
  }
  if (n == 0) return Maybe<int>::no(fmt::format("{}GetDeviceCount found no {} device", detail::kBackendName, DMABENCH_GPU_RUNTIME));
  return n;
}

DeviceProps properties(int device) {
  detail::DeviceProp p{};
  DMABENCH_GPU_CHECK(GPU(GetDeviceProperties)(&p, device));
  DeviceProps d;
  d.ordinal = device;
  d.name = p.name;
  d.bus_id = fmt::format("{:04x}:{:02x}:{:02x}.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  d.memory_bytes = p.totalGlobalMem;
  d.multiprocessors = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
#if defined(DMABENCH_GPU_HIP)
  d.arch = p.gcnArchName;
  // SDMA engines from the kernel driver's topology (HIP's device properties have no engine count).
  if (auto node = amd::kfd_node_for_bus(amd::read_kfd_nodes(), d.bus_id)) {
    d.sdma_engines = node->sdma_engines;
    d.sdma_xgmi_engines = node->sdma_xgmi_engines;
    if (node->sdma_engines >= 0) d.copy_engines = node->sdma_engines + std::max(0, node->sdma_xgmi_engines);
  }
#else
  d.copy_engines = p.asyncEngineCount;
  d.arch = fmt::format("sm_{}{}", p.major, p.minor);
#endif
  return d;
}

PeerLink peer_link(int from, int to) {
  PeerLink l;
  if (from == to) {
    l.access = true;
    return l;
  }
  int v = 0;
  DMABENCH_GPU_CHECK(GPU(DeviceCanAccessPeer)(&v, from, to));
  l.access = v != 0;
  if (l.access) {
    DMABENCH_GPU_CHECK(GPU(DeviceGetP2PAttribute)(&v, GPU(DevP2PAttrPerformanceRank), from, to));
    l.performance_rank = v;
    DMABENCH_GPU_CHECK(GPU(DeviceGetP2PAttribute)(&v, GPU(DevP2PAttrNativeAtomicSupported), from, to));
    l.native_atomics = v != 0;
  }
  return l;
}

void enable_peer_access(const std::vector<int>& devices) {
  for (int a : devices)
    for (int b : devices) {
      if (a == b || !peer_link(a, b).access) continue;
      DMABENCH_GPU_CHECK(GPU(SetDevice)(a));
      GPU(Error_t) err = GPU(DeviceEnablePeerAccess)(b, 0);
      if (err == GPU(ErrorPeerAccessAlreadyEnabled)) {
        (void)GPU(GetLastError)();
        continue;
      }
      DMABENCH_GPU_CHECK(err);
    }
}

std::size_t free_memory(int device) {
  DMABENCH_GPU_CHECK(GPU(SetDevice)(device));
  std::size_t free_b = 0, total_b = 0;
  DMABENCH_GPU_CHECK(GPU(MemGetInfo)(&free_b, &total_b));
  return free_b;
}

Versions versions() {
  Versions v;
  int r = 0;
  DMABENCH_GPU_CHECK(GPU(RuntimeGetVersion)(&r));
#if defined(DMABENCH_GPU_HIP)
  // HIP encodes major * 10000000 + minor * 100000 + patch
  v.runtime = fmt::format("{}.{}.{}", r / 10000000, (r / 100000) % 100, r % 100000);
  DMABENCH_GPU_CHECK(GPU(DriverGetVersion)(&r));
  v.driver_api = std::to_string(r);
  std::ifstream f("/sys/module/amdgpu/version");  // absent with the in-tree amdgpu driver
  std::getline(f, v.kernel_driver);
#else
  v.runtime = fmt::format("{}.{}", r / 1000, (r % 1000) / 10);
  DMABENCH_GPU_CHECK(GPU(DriverGetVersion)(&r));
  v.driver_api = fmt::format("{}.{}", r / 1000, (r % 1000) / 10);
  std::ifstream f("/proc/driver/nvidia/version");
  std::stringstream text;
  text << f.rdbuf();
  std::smatch m;
  std::string s = text.str();
  if (std::regex_search(s, m, std::regex(R"(\s(\d+\.\d+(\.\d+)?)\s)"))) v.kernel_driver = m[1];
#endif
  return v;
}

WhyNot gpu_clock_unsupported(int device) {
#if defined(DMABENCH_GPU_HIP) && !defined(DMABENCH_HIP_HAS_WALL_CLOCK_RATE)
  (void)device;
  return gpu::missing(gpu::this_build(), "trigger gpu-flag");
#else
  (void)gpu_clock_ns_per_tick(device);
  return std::nullopt;
#endif
}

double gpu_clock_ns_per_tick(int device) {
#if defined(DMABENCH_GPU_HIP) && defined(DMABENCH_HIP_HAS_WALL_CLOCK_RATE)
  int khz = 0;
  DMABENCH_GPU_CHECK(hipDeviceGetAttribute(&khz, hipDeviceAttributeWallClockRate, device));
  if (khz <= 0) throw std::runtime_error(fmt::format("hipDeviceAttributeWallClockRate of GPU {} is {} kHz", device, khz));
  return 1e6 / khz;
#elif defined(DMABENCH_GPU_HIP)
  (void)device;
  throw std::runtime_error(gpu::missing(gpu::this_build(), "trigger gpu-flag").value());
#else
  (void)device;
  return 1.0;  // %globaltimer counts nanoseconds
#endif
}

void set_device(int device) { DMABENCH_GPU_CHECK(GPU(SetDevice)(device)); }

void synchronize_device(int device) {
  DMABENCH_GPU_CHECK(GPU(SetDevice)(device));
  DMABENCH_GPU_CHECK(GPU(DeviceSynchronize)());
}

// ---- DeviceBuffer -----------------------------------------------------------------------------
DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : bytes_(bytes), device_(device) {
  if (bytes == 0) return;
  DMABENCH_GPU_CHECK(GPU(SetDevice)(device));
  DMABENCH_GPU_CHECK(GPU(Malloc)(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) {
    (void)GPU(SetDevice)(device_);  // best effort in a destructor: never throw
    (void)GPU(Free)(ptr_);
  }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), device_(o.device_) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    DeviceBuffer old(std::move(*this));
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    device_ = o.device_;
  }
  return *this;
}

Memory allocate(int device, std::size_t bytes) {
  if (bytes == 0) return Memory(nullptr, [](void*) {});
  DMABENCH_GPU_CHECK(GPU(SetDevice)(device));
  void* p = nullptr;
  DMABENCH_GPU_CHECK(GPU(Malloc)(&p, bytes));
  return Memory(p, [device](void* q) {
    (void)GPU(SetDevice)(device);
    (void)GPU(Free)(q);
  });
}

Memory allocate_host(HostKind kind, std::size_t bytes, int node, hostmem::BufferInfo& info) {
  if (bytes == 0) return Memory(nullptr, [](void*) {});
  const auto since = [](std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  Memory m;
  if (kind == HostKind::pinned || kind == HostKind::mapped) {
    // the runtime faults the pages in itself, under the calling thread's memory policy
    const auto t0 = std::chrono::steady_clock::now();
    void* p = nullptr;
    {
      hostmem::ScopedPolicy policy(node);
#if defined(DMABENCH_GPU_HIP)
      DMABENCH_GPU_CHECK(hipHostMalloc(&p, bytes, kind == HostKind::mapped ? hipHostMallocMapped | hipHostMallocPortable
                                                                           : hipHostMallocPortable));
#else
      DMABENCH_GPU_CHECK(cudaHostAlloc(&p, bytes, kind == HostKind::mapped ? cudaHostAllocMapped | cudaHostAllocPortable
                                                                           : cudaHostAllocPortable));
#endif
    }
#if defined(DMABENCH_GPU_HIP)
    m = Memory(p, [](void* q) { (void)hipHostFree(q); });  // hipFreeHost is deprecated (an error with -Werror)
#else
    m = Memory(p, [](void* q) { (void)cudaFreeHost(q); });
#endif
    if (kind == HostKind::mapped) {
      void* dev = nullptr;
      DMABENCH_GPU_CHECK(GPU(HostGetDevicePointer)(&dev, p, 0));
      if (dev != p)
        throw std::runtime_error("mapped host memory has a device address other than its host address (no unified addressing)");
    }
    info.alloc_s = since(t0);
#if defined(DMABENCH_GPU_HIP)
    info.method = kind == HostKind::mapped ? "hipHostMalloc(Mapped|Portable)" : "hipHostMalloc(Portable)";
#else
    info.method = kind == HostKind::mapped ? "cudaHostAlloc(Mapped|Portable)" : "cudaHostAlloc(Portable)";
#endif
    if (node >= 0) info.method += " under MPOL_BIND";
    info.placement = hostmem::verify(p, bytes, node >= 0 ? node : hostmem::nodes().front());
    return m;
  }
  m = hostmem::map_pages(bytes, node, false, info);  // placed and touched: pageable memory
  if (kind == HostKind::pageable) return m;
  const auto t1 = std::chrono::steady_clock::now();
  DMABENCH_GPU_CHECK(GPU(HostRegister)(m.get(), bytes, GPU(HostRegisterPortable)));
  info.register_s = since(t1);
#if defined(DMABENCH_GPU_HIP)
  info.method += "+hipHostRegister(Portable)";
#else
  info.method += "+cudaHostRegister(Portable)";
#endif
  void* p = m.release();
  auto unmap = m.get_deleter();
  return Memory(p, [unmap](void* q) {
    (void)GPU(HostUnregister)(q);
    unmap(q);
  });
}

int device_by_bus_id(const std::string& bus_id) {
  int device = -1;
  if (bus_id.empty() || GPU(DeviceGetByPCIBusId)(&device, bus_id.c_str()) != GPU(Success)) {
    (void)GPU(GetLastError)();  // not visible here: not an error of the next call
    return -1;
  }
  return device;
}

// ---- interprocess memory ----------------------------------------------------------------------
std::string ipc_handle(const void* base) {
  if (!base) return {};
  GPU(IpcMemHandle_t) h;
  DMABENCH_GPU_CHECK(GPU(IpcGetMemHandle)(&h, const_cast<void*>(base)));
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

Memory ipc_open(int device, const std::string& handle) {
  if (handle.empty()) return Memory(nullptr, [](void*) {});
  GPU(IpcMemHandle_t) h;
  if (handle.size() != sizeof h)
    throw std::runtime_error("ipc_open: a handle of " + std::to_string(handle.size()) + " bytes, expected " +
                             std::to_string(sizeof h));
  std::memcpy(&h, handle.data(), sizeof h);
  DMABENCH_GPU_CHECK(GPU(SetDevice)(device));
  void* p = nullptr;
  DMABENCH_GPU_CHECK(GPU(IpcOpenMemHandle)(&p, h, GPU(IpcMemLazyEnablePeerAccess)));
  return Memory(p, [device](void* q) {
    (void)GPU(SetDevice)(device);
    (void)GPU(IpcCloseMemHandle)(q);
  });
}

// ---- Stream ------------------------------------------------------------------------------------
Stream::Stream(int device) : device_(device) {
  DMABENCH_GPU_CHECK(GPU(SetDevice)(device));
  GPU(Stream_t) s = nullptr;
  DMABENCH_GPU_CHECK(GPU(StreamCreateWithFlags)(&s, GPU(StreamNonBlocking)));
  handle_ = s;
}

Stream::~Stream() {
  if (handle_) {
    (void)GPU(SetDevice)(device_);
    (void)GPU(StreamDestroy)(static_cast<GPU(Stream_t)>(handle_));
  }
}

Stream::Stream(Stream&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)), device_(o.device_) {}

Stream& Stream::operator=(Stream&& o) noexcept {
  if (this != &o) {
    Stream old(std::move(*this));
    handle_ = std::exchange(o.handle_, nullptr);
    device_ = o.device_;
  }
  return *this;
}

void Stream::synchronize() const { DMABENCH_GPU_CHECK(GPU(StreamSynchronize)(static_cast<GPU(Stream_t)>(handle_))); }

// NVIDIA: cudaMemcpyDefault takes the copy engines for device memory. AMD: the SDMA-only kind where
// the HIP headers have it (else the runtime may copy with a blit kernel on the compute units).
#if defined(DMABENCH_GPU_HIP) && defined(DMABENCH_HIP_HAS_NOCU)
constexpr GPU(MemcpyKind) kCopyKind = hipMemcpyDeviceToDeviceNoCU;
#else
constexpr GPU(MemcpyKind) kCopyKind = GPU(MemcpyDefault);
#endif

std::string copy_kind() {
#if defined(DMABENCH_GPU_HIP) && defined(DMABENCH_HIP_HAS_NOCU)
  return "hipMemcpyDeviceToDeviceNoCU";
#elif defined(DMABENCH_GPU_HIP)
  return "hipMemcpyDefault";
#else
  return "cudaMemcpyDefault";
#endif
}

std::string_view backend_name() { return detail::kBackendName; }

void copy_async(void* dst, const void* src, std::size_t bytes, const Stream& stream) {
  DMABENCH_GPU_CHECK(GPU(MemcpyAsync)(dst, src, bytes, kCopyKind, static_cast<GPU(Stream_t)>(stream.native())));
}

std::uint8_t read_byte(const void* device_ptr, std::size_t offset) {
  std::uint8_t v = 0;
  DMABENCH_GPU_CHECK(GPU(Memcpy)(&v, static_cast<const std::uint8_t*>(device_ptr) + offset, 1, GPU(MemcpyDefault)));
  return v;
}

void copy_to_host(void* host, const void* device_ptr, std::size_t bytes) {
  DMABENCH_GPU_CHECK(GPU(Memcpy)(host, device_ptr, bytes, GPU(MemcpyDefault)));
}

void fill_words(std::uint32_t* device_ptr, std::size_t count, std::uint32_t value) {
  std::vector<std::uint32_t> v(count, value);
  DMABENCH_GPU_CHECK(GPU(Memcpy)(device_ptr, v.data(), count * sizeof(std::uint32_t), GPU(MemcpyDefault)));
}

void write_byte(void* device_ptr, std::size_t offset, std::uint8_t value) {
  DMABENCH_GPU_CHECK(GPU(Memcpy)(static_cast<std::uint8_t*>(device_ptr) + offset, &value, 1, GPU(MemcpyDefault)));
}

}  // namespace dmabench::gpu
