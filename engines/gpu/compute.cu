// CUDA implementation of the compute-workload pieces of the GPU layer: timed events and cuBLAS GEMMs.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#ifdef DMABENCH_HAVE_CUBLAS
#include <cublas_v2.h>
#endif

#include "engines/gpu/check.hpp"
#include "engines/gpu/compute.hpp"

namespace dmabench::gpu {
namespace {

cudaStream_t native(const Stream& s) { return static_cast<cudaStream_t>(s.native()); }

}  // namespace

StreamTimer::StreamTimer(int device) : device_(device) {
  DMABENCH_CUDA_CHECK(cudaSetDevice(device));
  cudaEvent_t a = nullptr, b = nullptr;
  DMABENCH_CUDA_CHECK(cudaEventCreate(&a));
  start_ = a;
  DMABENCH_CUDA_CHECK(cudaEventCreate(&b));
  stop_ = b;
}

StreamTimer::~StreamTimer() {
  cudaSetDevice(device_);
  if (start_) cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  if (stop_) cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
}

void StreamTimer::start(const Stream& stream) {
  DMABENCH_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(start_), native(stream)));
}

void StreamTimer::stop(const Stream& stream) {
  DMABENCH_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(stop_), native(stream)));
}

bool StreamTimer::done() const {
  const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(stop_));
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    return false;
  }
  DMABENCH_CUDA_CHECK(err);
  return true;
}

double StreamTimer::elapsed_ms() const {
  DMABENCH_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(stop_)));
  float ms = 0;
  DMABENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(stop_)));
  return ms;
}

#ifdef DMABENCH_HAVE_CUBLAS

namespace {

#define DMABENCH_CUBLAS_CHECK(call)                                                                       \
  do {                                                                                                    \
    cublasStatus_t dmabench_st_ = (call);                                                                 \
    if (dmabench_st_ != CUBLAS_STATUS_SUCCESS)                                                            \
      throw std::runtime_error(std::string(#call) + " at " + __FILE__ + ":" + std::to_string(__LINE__) + \
                               ": " + cublasGetStatusName(dmabench_st_) + ": " +                          \
                               cublasGetStatusString(dmabench_st_));                                      \
  } while (0)

// Values in [-1, 1) from a per-element hash: realistic operands (no NaN/Inf bit patterns).
template <typename T>
__global__ void fill_unit_kernel(T* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const float v = static_cast<float>(h & 0xffffu) / 32768.0f - 1.0f;
    if constexpr (std::is_same_v<T, __nv_bfloat16>)
      p[i] = __float2bfloat16(v);
    else
      p[i] = __float2half(v);
  }
}

}  // namespace

struct Gemm::Impl {
  int device = 0, m = 0, n = 0, k = 0;
  cudaDataType_t type = CUDA_R_16BF;
  cublasHandle_t handle = nullptr;
  Memory a, b, c;
};

bool gemm_supported(std::string* why_not) {
  (void)why_not;
  return true;
}

Gemm::Gemm(int device, int m, int n, int k, const std::string& dtype) : impl_(std::make_unique<Impl>()) {
  if (dtype != "bf16" && dtype != "fp16")
    throw std::invalid_argument("gemm dtype '" + dtype + "' is not supported; accepted: bf16, fp16");
  Impl& g = *impl_;
  g.device = device;
  g.m = m;
  g.n = n;
  g.k = k;
  g.type = dtype == "bf16" ? CUDA_R_16BF : CUDA_R_16F;
  DMABENCH_CUDA_CHECK(cudaSetDevice(device));
  DMABENCH_CUBLAS_CHECK(cublasCreate(&g.handle));
  const std::size_t e = 2;  // bytes per element
  g.a = allocate(device, static_cast<std::size_t>(m) * k * e);
  g.b = allocate(device, static_cast<std::size_t>(k) * n * e);
  g.c = allocate(device, static_cast<std::size_t>(m) * n * e);
  auto fill = [&](void* p, std::size_t count, std::uint32_t seed) {
    const int blocks = static_cast<int>(std::min<std::size_t>((count + 255) / 256, 4096));
    if (dtype == "bf16")
      fill_unit_kernel<<<blocks, 256>>>(static_cast<__nv_bfloat16*>(p), count, seed);
    else
      fill_unit_kernel<<<blocks, 256>>>(static_cast<__half*>(p), count, seed);
    DMABENCH_CUDA_CHECK(cudaGetLastError());
  };
  fill(g.a.get(), static_cast<std::size_t>(m) * k, 0x9e3779b9u);
  fill(g.b.get(), static_cast<std::size_t>(k) * n, 0x7f4a7c15u);
  DMABENCH_CUDA_CHECK(cudaMemset(g.c.get(), 0, static_cast<std::size_t>(m) * n * e));
  DMABENCH_CUDA_CHECK(cudaDeviceSynchronize());
}

Gemm::~Gemm() {
  if (impl_ && impl_->handle) {
    cudaSetDevice(impl_->device);
    cublasDestroy(impl_->handle);
  }
}

void Gemm::launch(const Stream& stream) const {
  const Impl& g = *impl_;
  const float alpha = 1.0f, beta = 0.0f;
  DMABENCH_CUDA_CHECK(cudaSetDevice(g.device));
  DMABENCH_CUBLAS_CHECK(cublasSetStream(g.handle, native(stream)));
  DMABENCH_CUBLAS_CHECK(cublasGemmEx(g.handle, CUBLAS_OP_N, CUBLAS_OP_N, g.m, g.n, g.k, &alpha, g.a.get(), g.type, g.m,
                                     g.b.get(), g.type, g.k, &beta, g.c.get(), g.type, g.m, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT));
}

#else  // no cuBLAS

struct Gemm::Impl {};

bool gemm_supported(std::string* why_not) {
  if (why_not) *why_not = "this build has no cuBLAS (not found at configure time)";
  return false;
}

Gemm::Gemm(int, int, int, int, const std::string&) { throw std::runtime_error("this build has no cuBLAS"); }
Gemm::~Gemm() = default;
void Gemm::launch(const Stream&) const {}

#endif

}  // namespace dmabench::gpu
