// CUDA implementation of the GPU layer's synchronisation mechanisms: host-mapped flags, events,
// stream memory operations (driver API, reached through the runtime's entry points so the program
// does not link libcuda), graph capture and batched copies.
#include <cstring>
#include <mutex>
#include <utility>

#include <cuda.h>
#include <fmt/format.h>

#include "engines/gpu/check.hpp"
#include "engines/gpu/gpu.hpp"

namespace dmabench::gpu {
namespace {

cudaStream_t cuda_stream(const Stream& s) { return static_cast<cudaStream_t>(s.native()); }

using WaitFn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using WriteFn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using ErrorStringFn = CUresult (*)(CUresult, const char**);

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
  throw std::runtime_error(fmt::format("{} at {}:{}: CUresult {}: {}", call, file, line, static_cast<int>(r), text));
}

#define DMABENCH_CU_CHECK(call)                                                     \
  do {                                                                              \
    CUresult dmabench_r_ = (call);                                                  \
    if (dmabench_r_ != CUDA_SUCCESS) throw_cu(dmabench_r_, #call, __FILE__, __LINE__); \
  } while (0)

}  // namespace

// ---- HostMapped --------------------------------------------------------------------------------
HostMapped::HostMapped(std::size_t bytes) {
  DMABENCH_CUDA_CHECK(cudaHostAlloc(&ptr_, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
  std::memset(ptr_, 0, bytes);
}
HostMapped::~HostMapped() {
  if (ptr_) cudaFreeHost(ptr_);
}

// ---- Event -------------------------------------------------------------------------------------
Event::Event(int device) : device_(device) {
  DMABENCH_CUDA_CHECK(cudaSetDevice(device));
  cudaEvent_t e = nullptr;
  DMABENCH_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  handle_ = e;
}
Event::~Event() {
  if (handle_) {
    cudaSetDevice(device_);
    cudaEventDestroy(static_cast<cudaEvent_t>(handle_));
  }
}
Event::Event(Event&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)), device_(o.device_) {}
void Event::record(const Stream& stream) const {
  DMABENCH_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(handle_), cuda_stream(stream)));
}
void Event::synchronize() const { DMABENCH_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(handle_))); }

void stream_wait_event(const Stream& waiter, const Event& event) {
  DMABENCH_CUDA_CHECK(cudaStreamWaitEvent(cuda_stream(waiter), static_cast<cudaEvent_t>(event.native()), 0));
}

// ---- stream memory operations ------------------------------------------------------------------
bool stream_memops_supported(int device, std::string* why_not) {
  if (!memops().why_not.empty()) {
    if (why_not) *why_not = memops().why_not;
    return false;
  }
  (void)device;  // 32-bit GEQ waits and writes are core stream memory operations on every device since CUDA 12
  return true;
}

void stream_wait_value(const Stream& stream, const void* addr, std::uint32_t value) {
  if (!memops().wait) throw std::runtime_error("stream wait-value: " + memops().why_not);
  DMABENCH_CU_CHECK(memops().wait(reinterpret_cast<CUstream>(cuda_stream(stream)),
                                  reinterpret_cast<CUdeviceptr>(addr), value, CU_STREAM_WAIT_VALUE_GEQ));
}

void stream_write_value(const Stream& stream, void* addr, std::uint32_t value) {
  if (!memops().write) throw std::runtime_error("stream write-value: " + memops().why_not);
  DMABENCH_CU_CHECK(memops().write(reinterpret_cast<CUstream>(cuda_stream(stream)),
                                   reinterpret_cast<CUdeviceptr>(addr), value, CU_STREAM_WRITE_VALUE_DEFAULT));
}

// ---- graphs ------------------------------------------------------------------------------------
void begin_capture(const Stream& origin) {
  DMABENCH_CUDA_CHECK(cudaStreamBeginCapture(cuda_stream(origin), cudaStreamCaptureModeRelaxed));
}

Graph end_capture(const Stream& origin) {
  cudaGraph_t g = nullptr;
  DMABENCH_CUDA_CHECK(cudaStreamEndCapture(cuda_stream(origin), &g));
  Graph out;
  out.graph_ = g;
  cudaGraphExec_t e = nullptr;
  DMABENCH_CUDA_CHECK(cudaGraphInstantiate(&e, g, 0));
  out.exec_ = e;
  return out;
}

Graph::~Graph() {
  if (exec_) cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(exec_));
  if (graph_) cudaGraphDestroy(static_cast<cudaGraph_t>(graph_));
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
  DMABENCH_CUDA_CHECK(cudaGraphLaunch(static_cast<cudaGraphExec_t>(exec_), cuda_stream(stream)));
}

// ---- batched copies ----------------------------------------------------------------------------
bool copy_batch_supported(std::string* why_not) {
#if CUDART_VERSION >= 12080
  int runtime = 0;
  DMABENCH_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  int driver = 0;
  DMABENCH_CUDA_CHECK(cudaDriverGetVersion(&driver));
  if (driver < 12080) {
    if (why_not) *why_not = fmt::format("cudaMemcpyBatchAsync needs a CUDA 12.8 driver; this one supports {}", driver);
    return false;
  }
  return true;
#else
  if (why_not) *why_not = "cudaMemcpyBatchAsync needs CUDA 12.8; this build's runtime is older";
  return false;
#endif
}

void copy_batch_async(const std::vector<CopyJob>& jobs, int device, const Stream& stream, bool prefer_overlap_with_compute) {
#if CUDART_VERSION >= 12080
  if (jobs.empty()) return;
  std::vector<void*> dsts(jobs.size());
  std::vector<const void*> srcs(jobs.size());
  std::vector<std::size_t> sizes(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    dsts[i] = jobs[i].dst;
    srcs[i] = jobs[i].src;
    sizes[i] = jobs[i].bytes;
  }
  cudaMemcpyAttributes attr{};
  attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  attr.srcLocHint.type = cudaMemLocationTypeDevice;
  attr.srcLocHint.id = device;
  attr.dstLocHint.type = cudaMemLocationTypeDevice;
  attr.dstLocHint.id = device;
  attr.flags = prefer_overlap_with_compute ? cudaMemcpyFlagPreferOverlapWithCompute : cudaMemcpyFlagDefault;
  std::size_t attr_index = 0;
  DMABENCH_CUDA_CHECK(cudaMemcpyBatchAsync(dsts.data(), srcs.data(), sizes.data(), jobs.size(), &attr, &attr_index, 1,
                                           cuda_stream(stream)));
#else
  (void)jobs;
  (void)device;
  (void)stream;
  (void)prefer_overlap_with_compute;
  throw std::runtime_error("cudaMemcpyBatchAsync needs CUDA 12.8");
#endif
}

}  // namespace dmabench::gpu
