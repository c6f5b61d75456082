// The GPU layer's synchronisation mechanisms, one source for CUDA and HIP (vendor.hpp): host-mapped
// flags, events, stream memory operations, graph capture and batched copies. Where the runtimes
// differ: NVIDIA reaches the stream memory operations through the runtime's driver entry points
// (so the program does not link libcuda); HIP has hipStreamWaitValue32 / hipStreamWriteValue32.
#include <cstdint>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "gpu/gpu.hpp"
#include "gpu/vendor.hpp"
#include "gpu/call_error.hpp"
#include "gpu/features.hpp"
#if !defined(DMABENCH_GPU_HIP)
#include <cuda.h>
#endif

namespace dmabench::gpu {
namespace {

GPU(Stream_t) native_stream(const Stream& s) { return static_cast<GPU(Stream_t)>(s.native()); }

#if !defined(DMABENCH_GPU_HIP)
// typed from cuda.h (cuStreamWaitValue32 names the _v2 entry point the driver returns for 12000)
using WaitFn = decltype(&cuStreamWaitValue32);
using WriteFn = decltype(&cuStreamWriteValue32);
using ErrorStringFn = decltype(&cuGetErrorString);

struct DriverMemops {
  WaitFn wait = nullptr;
  WriteFn write = nullptr;
  ErrorStringFn error_string = nullptr;
  std::string why_not;
};

const DriverMemops& memops() {
  static DriverMemops m;
  static std::once_flag once;
  std::call_once(once, [] {
    auto get = [](const char* symbol, void** fn) {
      cudaDriverEntryPointQueryResult q{};
      cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, fn, 12000, cudaEnableDefault, &q);
      if (err != cudaSuccess || q != cudaDriverEntryPointSuccess || *fn == nullptr) {
        (void)cudaGetLastError();
        *fn = nullptr;
        return fmt::format("driver entry point {} not found ({})", symbol, cudaGetErrorString(err));
      }
      return std::string();
    };
    std::string why = get("cuStreamWaitValue32", reinterpret_cast<void**>(&m.wait));
    if (why.empty()) why = get("cuStreamWriteValue32", reinterpret_cast<void**>(&m.write));
    get("cuGetErrorString", reinterpret_cast<void**>(&m.error_string));
    m.why_not = why;
  });
  return m;
}

[[noreturn]] void throw_cu(CUresult r, const char* call, const char* file, int line) {
  const char* text = "unknown";
  if (memops().error_string) memops().error_string(r, &text);
  throw_call_error("CUDA driver", call, file, line, static_cast<long long>(r), text);
}

#define DMABENCH_CU_CHECK(call)                                                     \
  do {                                                                              \
    CUresult dmabench_r_ = (call);                                                  \
    if (dmabench_r_ != CUDA_SUCCESS) throw_cu(dmabench_r_, #call, __FILE__, __LINE__); \
  } while (0)
#endif

}  // namespace

// ---- HostMapped --------------------------------------------------------------------------------
HostMapped::HostMapped(std::size_t bytes) {
#if defined(DMABENCH_GPU_HIP)
  DMABENCH_GPU_CHECK(hipHostMalloc(&ptr_, bytes, hipHostMallocMapped | hipHostMallocPortable));
#else
  DMABENCH_GPU_CHECK(cudaHostAlloc(&ptr_, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
#endif
  std::memset(ptr_, 0, bytes);
}
HostMapped::~HostMapped() {
  #if defined(DMABENCH_GPU_HIP)
  if (ptr_) (void)hipHostFree(ptr_);
#else
  if (ptr_) (void)cudaFreeHost(ptr_);
#endif
}

// ---- Event -------------------------------------------------------------------------------------
Event::Event(int device, bool timing) : device_(device) {
  DMABENCH_GPU_CHECK(GPU(SetDevice)(device));
  GPU(Event_t) e = nullptr;
  DMABENCH_GPU_CHECK(GPU(EventCreateWithFlags)(&e, timing ? GPU(EventDefault) : GPU(EventDisableTiming)));
  handle_ = e;
}
Event::~Event() {
  if (handle_) {
    (void)GPU(SetDevice)(device_);
    (void)GPU(EventDestroy)(static_cast<GPU(Event_t)>(handle_));
  }
}
Event::Event(Event&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)), device_(o.device_) {}
void Event::record(const Stream& stream) const {
  DMABENCH_GPU_CHECK(GPU(EventRecord)(static_cast<GPU(Event_t)>(handle_), native_stream(stream)));
}
void Event::synchronize() const { DMABENCH_GPU_CHECK(GPU(EventSynchronize)(static_cast<GPU(Event_t)>(handle_))); }

void stream_wait_event(const Stream& waiter, const Event& event) {
  DMABENCH_GPU_CHECK(GPU(StreamWaitEvent)(native_stream(waiter), static_cast<GPU(Event_t)>(event.native()), 0));
}

// ---- stream memory operations ------------------------------------------------------------------
#if defined(DMABENCH_GPU_HIP)
WhyNot stream_memops_unsupported(int device) {
  int v = 0;
  DMABENCH_GPU_CHECK(hipDeviceGetAttribute(&v, hipDeviceAttributeCanUseStreamWaitValue, device));
  if (v == 0) return fmt::format("hipDeviceAttributeCanUseStreamWaitValue is 0 on GPU {}", device);
  return std::nullopt;
}

// hipStreamWaitValueGte compares plainly (not wrap-safe): generations start at 1 and would need
// 2^32 operations in one case to wrap.
void stream_wait_value(const Stream& stream, const void* addr, std::uint32_t value) {
  DMABENCH_GPU_CHECK(hipStreamWaitValue32(native_stream(stream), const_cast<void*>(addr), value, hipStreamWaitValueGte, 0xffffffffu));
}

void stream_write_value(const Stream& stream, void* addr, std::uint32_t value) {
  DMABENCH_GPU_CHECK(hipStreamWriteValue32(native_stream(stream), addr, value, 0));
}
#else
WhyNot stream_memops_unsupported(int device) {
  if (!memops().why_not.empty()) return memops().why_not;
  (void)device;  // 32-bit GEQ waits and writes are core stream memory operations on every device since CUDA 12
  return std::nullopt;
}

void stream_wait_value(const Stream& stream, const void* addr, std::uint32_t value) {
  if (!memops().wait) throw std::runtime_error("stream wait-value: " + memops().why_not);
  DMABENCH_CU_CHECK(memops().wait(reinterpret_cast<CUstream>(native_stream(stream)),
                                  reinterpret_cast<CUdeviceptr>(addr), value, CU_STREAM_WAIT_VALUE_GEQ));
}

void stream_write_value(const Stream& stream, void* addr, std::uint32_t value) {
  if (!memops().write) throw std::runtime_error("stream write-value: " + memops().why_not);
  DMABENCH_CU_CHECK(memops().write(reinterpret_cast<CUstream>(native_stream(stream)),
                                   reinterpret_cast<CUdeviceptr>(addr), value, CU_STREAM_WRITE_VALUE_DEFAULT));
}
#endif

// ---- graphs ------------------------------------------------------------------------------------
void begin_capture(const Stream& origin) {
  DMABENCH_GPU_CHECK(GPU(StreamBeginCapture)(native_stream(origin), GPU(StreamCaptureModeRelaxed)));
}

Graph end_capture(const Stream& origin) {
  GPU(Graph_t) g = nullptr;
  DMABENCH_GPU_CHECK(GPU(StreamEndCapture)(native_stream(origin), &g));
  Graph out;
  out.graph_ = g;
  GPU(GraphExec_t) e = nullptr;
  DMABENCH_GPU_CHECK(GPU(GraphInstantiateWithFlags)(&e, g, 0));
  out.exec_ = e;
  return out;
}

Graph::~Graph() {
  if (exec_) (void)GPU(GraphExecDestroy)(static_cast<GPU(GraphExec_t)>(exec_));
  if (graph_) (void)GPU(GraphDestroy)(static_cast<GPU(Graph_t)>(graph_));
}
Graph::Graph(Graph&& o) noexcept : graph_(std::exchange(o.graph_, nullptr)), exec_(std::exchange(o.exec_, nullptr)) {}
Graph& Graph::operator=(Graph&& o) noexcept {
  if (this != &o) {
    Graph old(std::move(*this));
    graph_ = std::exchange(o.graph_, nullptr);
    exec_ = std::exchange(o.exec_, nullptr);
  }
  return *this;
}
void Graph::launch(const Stream& stream) const {
  DMABENCH_GPU_CHECK(GPU(GraphLaunch)(static_cast<GPU(GraphExec_t)>(exec_), native_stream(stream)));
}

// ---- batched copies ----------------------------------------------------------------------------
#if defined(DMABENCH_GPU_HIP) && defined(DMABENCH_HIP_HAS_BATCH)
// hipMemcpyBatchAsync (HIP >= 7.1; cmake/hip.cmake checks the call with these attributes). The
// library that declares it is the runtime, so a build that has it runs it.
WhyNot copy_batch_unsupported() { return std::nullopt; }

void copy_batch_async(const CopyBatch& batch, int device, const Stream& stream, bool prefer_overlap_with_compute) {
  if (batch.size() == 0) return;
  auto& b = const_cast<CopyBatch&>(batch);  // HIP declares the arrays without const; it only reads them
  // One attribute for all copies: sources read in stream order (after the trigger / earlier work on
  // the stream), with or without the overlap preference. No location hints: HIP finds the memory.
  hipMemcpyAttributes attr{};
  attr.srcAccessOrder = hipMemcpySrcAccessOrderStream;
  attr.flags = prefer_overlap_with_compute ? hipMemcpyFlagPreferOverlapWithCompute : hipMemcpyFlagDefault;
  std::size_t attr_index = 0;
  std::size_t fail_index = SIZE_MAX;
  const hipError_t err = hipMemcpyBatchAsync(b.dsts.data(), b.srcs.data(), b.sizes.data(), b.size(), &attr, &attr_index,
                                             1, &fail_index, native_stream(stream));
  if (err != hipSuccess) {
    (void)hipGetLastError();
    throw_call_error("HIP",
                     fmt::format("hipMemcpyBatchAsync of {} copies issued by GPU {} (overlap flag {}){}", b.size(), device,
                                 prefer_overlap_with_compute,
                                 fail_index < b.size() ? fmt::format(", copy {} of the batch failing", fail_index) : ""),
                     __FILE__, __LINE__, static_cast<long long>(err),
                     fmt::format("{}: {}", hipGetErrorName(err), hipGetErrorString(err)));
  }
}
#elif defined(DMABENCH_GPU_HIP)
WhyNot copy_batch_unsupported() { return gpu::missing(gpu::this_build(), "ce-batch (hipMemcpyBatchAsync)"); }

void copy_batch_async(const CopyBatch&, int, const Stream&, bool) {
  throw std::runtime_error(gpu::missing(gpu::this_build(), "ce-batch (hipMemcpyBatchAsync)").value());
}
#else
// cudaMemcpyBatchAsync: CUDA >= 12.8 headers (DMABENCH_CUDA_HAS_BATCH, decided in CMakeLists.txt where the
// feature table reads it too), and a driver that supports them.
WhyNot copy_batch_unsupported() {
#if defined(DMABENCH_CUDA_HAS_BATCH)
  int runtime = 0;
  DMABENCH_GPU_CHECK(cudaRuntimeGetVersion(&runtime));
  int driver = 0;
  DMABENCH_GPU_CHECK(cudaDriverGetVersion(&driver));
  if (driver < 12080) return fmt::format("cudaMemcpyBatchAsync needs a CUDA 12.8 driver; this one supports {}", driver);
  return std::nullopt;
#else
  return gpu::missing(gpu::this_build(), "ce-batch (cudaMemcpyBatchAsync)");
#endif
}

void copy_batch_async(const CopyBatch& batch, int device, const Stream& stream, bool prefer_overlap_with_compute) {
#if defined(DMABENCH_CUDA_HAS_BATCH)
  if (batch.size() == 0) return;
  // Plain void** and size_t*: CUDA 12.8 declares the arrays without const, 12.9 and 13 with it; these
  // convert to either. The runtime only reads them.
  auto& b = const_cast<CopyBatch&>(batch);
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;  // no location hints: gpu.hpp says why
  attr.flags = prefer_overlap_with_compute ? cudaMemcpyFlagPreferOverlapWithCompute : cudaMemcpyFlagDefault;
  std::size_t attr_index = 0;
#if CUDART_VERSION >= 13000
  (void)device;  // named only in CUDA 12's error message below
  DMABENCH_GPU_CHECK(cudaMemcpyBatchAsync(b.dsts.data(), b.srcs.data(), b.sizes.data(), b.size(), &attr, &attr_index, 1,
                                           native_stream(stream)));
#else  // CUDA 12.8 and 12.9 also return the index of the copy that failed
  std::size_t failed = SIZE_MAX;
  const cudaError_t err = cudaMemcpyBatchAsync(b.dsts.data(), b.srcs.data(), b.sizes.data(), b.size(), &attr, &attr_index,
                                               1, &failed, native_stream(stream));
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    detail::throw_gpu(err, fmt::format("cudaMemcpyBatchAsync of {} copies issued by GPU {}, copy {} of the batch failing",
                                       b.size(), device, failed).c_str(),
                      __FILE__, __LINE__);
  }
#endif
#else
  (void)batch;
  (void)device;
  (void)stream;
  (void)prefer_overlap_with_compute;
  throw std::runtime_error(gpu::missing(gpu::this_build(), "ce-batch (cudaMemcpyBatchAsync)").value());
#endif
}
#endif  // DMABENCH_GPU_HIP

}  // namespace dmabench::gpu
