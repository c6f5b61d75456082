// CUDA implementation of the GPU layer's devices, buffers and streams.
#include <fstream>
#include <regex>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "engines/gpu/check.hpp"
#include "engines/gpu/gpu.hpp"

namespace dmabench::gpu {

int device_count(std::string* why_not) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    if (why_not) *why_not = fmt::format("cudaGetDeviceCount: {}: {}", cudaGetErrorName(err), cudaGetErrorString(err));
    return 0;
  }
  if (n == 0 && why_not) *why_not = "cudaGetDeviceCount found no CUDA device";
  return n;
}

DeviceProps properties(int device) {
  cudaDeviceProp p{};
  DMABENCH_CUDA_CHECK(cudaGetDeviceProperties(&p, device));
  DeviceProps d;
  d.ordinal = device;
  d.name = p.name;
  d.bus_id = fmt::format("{:04x}:{:02x}:{:02x}.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  d.memory_bytes = p.totalGlobalMem;
  d.copy_engines = p.asyncEngineCount;
  d.multiprocessors = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  return d;
}

PeerLink peer_link(int from, int to) {
  PeerLink l;
  if (from == to) {
    l.access = true;
    return l;
  }
  int v = 0;
  DMABENCH_CUDA_CHECK(cudaDeviceCanAccessPeer(&v, from, to));
  l.access = v != 0;
  if (l.access) {
    DMABENCH_CUDA_CHECK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrPerformanceRank, from, to));
    l.performance_rank = v;
    DMABENCH_CUDA_CHECK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported, from, to));
    l.native_atomics = v != 0;
  }
  return l;
}

void enable_peer_access(const std::vector<int>& devices) {
  for (int a : devices)
    for (int b : devices) {
      if (a == b || !peer_link(a, b).access) continue;
      DMABENCH_CUDA_CHECK(cudaSetDevice(a));
      cudaError_t err = cudaDeviceEnablePeerAccess(b, 0);
      if (err == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();
        continue;
      }
      DMABENCH_CUDA_CHECK(err);
    }
}

std::size_t free_memory(int device) {
  DMABENCH_CUDA_CHECK(cudaSetDevice(device));
  std::size_t free_b = 0, total_b = 0;
  DMABENCH_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

Versions versions() {
  Versions v;
  int r = 0;
  DMABENCH_CUDA_CHECK(cudaRuntimeGetVersion(&r));
  v.runtime = fmt::format("{}.{}", r / 1000, (r % 1000) / 10);
  DMABENCH_CUDA_CHECK(cudaDriverGetVersion(&r));
  v.driver_api = fmt::format("{}.{}", r / 1000, (r % 1000) / 10);
  std::ifstream f("/proc/driver/nvidia/version");
  std::stringstream text;
  text << f.rdbuf();
  std::smatch m;
  std::string s = text.str();
  if (std::regex_search(s, m, std::regex(R"(\s(\d+\.\d+(\.\d+)?)\s)"))) v.kernel_driver = m[1];
  return v;
}

void set_device(int device) { DMABENCH_CUDA_CHECK(cudaSetDevice(device)); }

// ---- DeviceBuffer -----------------------------------------------------------------------------
DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : bytes_(bytes), device_(device) {
  if (bytes == 0) return;
  DMABENCH_CUDA_CHECK(cudaSetDevice(device));
  DMABENCH_CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_) {
    cudaSetDevice(device_);  // best effort in a destructor: never throw
    cudaFree(ptr_);
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
  DMABENCH_CUDA_CHECK(cudaSetDevice(device));
  void* p = nullptr;
  DMABENCH_CUDA_CHECK(cudaMalloc(&p, bytes));
  return Memory(p, [device](void* q) {
    cudaSetDevice(device);
    cudaFree(q);
  });
}

// ---- Stream ------------------------------------------------------------------------------------
Stream::Stream(int device) : device_(device) {
  DMABENCH_CUDA_CHECK(cudaSetDevice(device));
  cudaStream_t s = nullptr;
  DMABENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  handle_ = s;
}

Stream::~Stream() {
  if (handle_) {
    cudaSetDevice(device_);
    cudaStreamDestroy(static_cast<cudaStream_t>(handle_));
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

void Stream::synchronize() const { DMABENCH_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(handle_))); }

void copy_async(void* dst, const void* src, std::size_t bytes, const Stream& stream) {
  DMABENCH_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream.native())));
}

std::uint8_t read_byte(const void* device_ptr, std::size_t offset) {
  std::uint8_t v = 0;
  DMABENCH_CUDA_CHECK(cudaMemcpy(&v, static_cast<const std::uint8_t*>(device_ptr) + offset, 1, cudaMemcpyDefault));
  return v;
}

void copy_to_host(void* host, const void* device_ptr, std::size_t bytes) {
  DMABENCH_CUDA_CHECK(cudaMemcpy(host, device_ptr, bytes, cudaMemcpyDefault));
}

void fill_words(std::uint32_t* device_ptr, std::size_t count, std::uint32_t value) {
  std::vector<std::uint32_t> v(count, value);
  DMABENCH_CUDA_CHECK(cudaMemcpy(device_ptr, v.data(), count * sizeof(std::uint32_t), cudaMemcpyDefault));
}

void write_byte(void* device_ptr, std::size_t offset, std::uint8_t value) {
  DMABENCH_CUDA_CHECK(cudaMemcpy(static_cast<std::uint8_t*>(device_ptr) + offset, &value, 1, cudaMemcpyDefault));
}

}  // namespace dmabench::gpu
