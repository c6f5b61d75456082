// The compute-workload pieces of the GPU layer: device-timed stream marks (CUDA and HIP through
// vendor.hpp) and the GEMM (cuBLAS on NVIDIA, rocBLAS on AMD where found).
#include "gpu/compute.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/call_error.hpp"
#include "gpu/vendor.hpp"
#if defined(DMABENCH_HAVE_CUBLAS)
#include <cublas_v2.h>
#elif defined(DMABENCH_HAVE_ROCBLAS)
#include <rocblas/rocblas.h>
#endif

namespace dmabench::gpu {
namespace {

detail::NativeStream native(const Stream& s) { return static_cast<detail::NativeStream>(s.native()); }
detail::NativeEvent event(void* e) { return static_cast<detail::NativeEvent>(e); }

}  // namespace

StreamTimer::StreamTimer(int device) : device_(device) {
  DMABENCH_GPU_CHECK(GPU(SetDevice)(device));
  detail::NativeEvent a = nullptr, b = nullptr;
  DMABENCH_GPU_CHECK(GPU(EventCreate)(&a));
  start_ = a;
  DMABENCH_GPU_CHECK(GPU(EventCreate)(&b));
  stop_ = b;
}

StreamTimer::~StreamTimer() {
  (void)GPU(SetDevice)(device_);
  if (start_) (void)GPU(EventDestroy)(event(start_));
  if (stop_) (void)GPU(EventDestroy)(event(stop_));
}

void StreamTimer::start(const Stream& stream) { DMABENCH_GPU_CHECK(GPU(EventRecord)(event(start_), native(stream))); }
void StreamTimer::stop(const Stream& stream) { DMABENCH_GPU_CHECK(GPU(EventRecord)(event(stop_), native(stream))); }

bool StreamTimer::done() const {
  const detail::Error err = GPU(EventQuery)(event(stop_));
  if (err == GPU(ErrorNotReady)) {
    (void)GPU(GetLastError)();
    return false;
  }
  DMABENCH_GPU_CHECK(err);
  return true;
}

double StreamTimer::elapsed_ms() const {
  DMABENCH_GPU_CHECK(GPU(EventSynchronize)(event(stop_)));
  float ms = 0;
  DMABENCH_GPU_CHECK(GPU(EventElapsedTime)(&ms, event(start_), event(stop_)));
  return ms;
}

#if defined(DMABENCH_HAVE_CUBLAS) || defined(DMABENCH_HAVE_ROCBLAS)

namespace {

// 16-bit encodings of a float in [-1, 1), rounded to nearest even (fp16: magnitudes below 2^-14 are
// flushed to zero; no NaN/Inf can arise).
std::uint16_t to_bf16(float v) {
  std::uint32_t u;
  std::memcpy(&u, &v, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}
std::uint16_t to_fp16(float v) {
  if (v == 0.0f) return 0;
  const std::uint16_t sign = v < 0 ? 0x8000 : 0;
  int e = 0;
  const float m = std::frexp(std::fabs(v), &e);  // |v| = m * 2^e, m in [0.5, 1)
  const int exp = e - 1 + 15;                     // biased exponent of 1.f * 2^(e-1)
  if (exp <= 0) return sign;                      // below fp16's normal range: flush to zero
  const auto frac = static_cast<std::uint32_t>(std::nearbyint((m * 2.0f - 1.0f) * 1024.0f));  // ties to even
  if (frac == 1024) return static_cast<std::uint16_t>(sign | ((exp + 1) << 10));
  return static_cast<std::uint16_t>(sign | (exp << 10) | frac);
}

// Operand values in [-1, 1) from a per-element hash, written from the host once per workload.
void fill_operand(void* device_ptr, std::size_t count, std::uint32_t seed, bool bf16) {
  std::vector<std::uint16_t> host(count);
  for (std::size_t i = 0; i < count; ++i) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const float v = static_cast<float>(h & 0xffffu) / 32768.0f - 1.0f;
    host[i] = bf16 ? to_bf16(v) : to_fp16(v);
  }
  DMABENCH_GPU_CHECK(GPU(Memcpy)(device_ptr, host.data(), count * 2, GPU(MemcpyHostToDevice)));
}

// ---- the vendor BLAS: a handle, a stream binding, one GEMM call --------------------------------------
#ifdef DMABENCH_HAVE_CUBLAS
#define DMABENCH_BLAS_CHECK(call)                                                                          \
  do {                                                                                                    \
    cublasStatus_t dmabench_st_ = (call);                                                                 \
    if (dmabench_st_ != CUBLAS_STATUS_SUCCESS)                                                            \
      throw_call_error("cuBLAS", #call, __FILE__, __LINE__, dmabench_st_,                                 \
                       std::string(cublasGetStatusName(dmabench_st_)) + ": " +                            \
                           cublasGetStatusString(dmabench_st_));                                          \
  } while (0)
using BlasHandle = cublasHandle_t;
constexpr const char* kBlasName = "cuBLAS cublasGemmEx";
void blas_create(BlasHandle* h) { DMABENCH_BLAS_CHECK(cublasCreate(h)); }
void blas_destroy(BlasHandle h) { cublasDestroy(h); }
void blas_gemm(BlasHandle h, detail::NativeStream s, int m, int n, int k, bool bf16, const void* a, const void* b, void* c) {
  const float alpha = 1.0f, beta = 0.0f;
  const cudaDataType_t t = bf16 ? CUDA_R_16BF : CUDA_R_16F;
  DMABENCH_BLAS_CHECK(cublasSetStream(h, s));
  DMABENCH_BLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, a, t, m, b, t, k, &beta, c, t, m,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}
#else  // rocBLAS
#define DMABENCH_BLAS_CHECK(call)                                                                          \
  do {                                                                                                    \
    rocblas_status dmabench_st_ = (call);                                                                 \
    if (dmabench_st_ != rocblas_status_success)                                                           \
      throw_call_error("rocBLAS", #call, __FILE__, __LINE__, dmabench_st_,                                \
                       rocblas_status_to_string(dmabench_st_));                                           \
  } while (0)
using BlasHandle = rocblas_handle;
constexpr const char* kBlasName = "rocBLAS rocblas_gemm_ex";
void blas_create(BlasHandle* h) { DMABENCH_BLAS_CHECK(rocblas_create_handle(h)); }
void blas_destroy(BlasHandle h) { rocblas_destroy_handle(h); }
void blas_gemm(BlasHandle h, detail::NativeStream s, int m, int n, int k, bool bf16, const void* a, const void* b, void* c) {
  const float alpha = 1.0f, beta = 0.0f;
  const rocblas_datatype t = bf16 ? rocblas_datatype_bf16_r : rocblas_datatype_f16_r;
  DMABENCH_BLAS_CHECK(rocblas_set_stream(h, s));
  DMABENCH_BLAS_CHECK(rocblas_gemm_ex(h, rocblas_operation_none, rocblas_operation_none, m, n, k, &alpha, a, t, m, b, t, k,
                                      &beta, c, t, m, c, t, m, rocblas_datatype_f32_r, rocblas_gemm_algo_standard, 0, 0));
}
#endif

}  // namespace

struct Gemm::Impl {
  int device = 0, m = 0, n = 0, k = 0;
  bool bf16 = true;
  BlasHandle handle{};
  bool have_handle = false;
  Memory a, b, c;
};

WhyNot gemm_unsupported() { return std::nullopt; }
std::string gemm_implementation() { return std::string(kBlasName) + ", fp32 accumulate"; }

Gemm::Gemm(int device, int m, int n, int k, const std::string& dtype) : impl_(std::make_unique<Impl>()) {
  if (dtype != "bf16" && dtype != "fp16")
    throw std::invalid_argument("gemm dtype '" + dtype + "' is not supported; accepted: bf16, fp16");
  Impl& g = *impl_;
  g.device = device;
  g.m = m;
  g.n = n;
  g.k = k;
  g.bf16 = dtype == "bf16";
  DMABENCH_GPU_CHECK(GPU(SetDevice)(device));
  blas_create(&g.handle);
  g.have_handle = true;
  const auto mk = static_cast<std::size_t>(m) * k, kn = static_cast<std::size_t>(k) * n, mn = static_cast<std::size_t>(m) * n;
  g.a = allocate(device, mk * 2);
  g.b = allocate(device, kn * 2);
  g.c = allocate(device, mn * 2);
  fill_operand(g.a.get(), mk, 0x9e3779b9u, g.bf16);
  fill_operand(g.b.get(), kn, 0x7f4a7c15u, g.bf16);
  DMABENCH_GPU_CHECK(GPU(Memset)(g.c.get(), 0, mn * 2));
  DMABENCH_GPU_CHECK(GPU(DeviceSynchronize)());
}

Gemm::~Gemm() {
  if (impl_ && impl_->have_handle) {
    (void)GPU(SetDevice)(impl_->device);
    blas_destroy(impl_->handle);
  }
}

void Gemm::launch(const Stream& stream) const {
  const Impl& g = *impl_;
  DMABENCH_GPU_CHECK(GPU(SetDevice)(g.device));
  blas_gemm(g.handle, native(stream), g.m, g.n, g.k, g.bf16, g.a.get(), g.b.get(), g.c.get());
}

#else  // no BLAS in this build

struct Gemm::Impl {};

WhyNot gemm_unsupported() {
  return std::string("this build has no GEMM: ") +
         (std::string(detail::kBackendName) == "hip" ? "rocBLAS was not found at configure time (find_package(rocblas))"
                                                     : "cuBLAS was not found at configure time");
}
std::string gemm_implementation() { return "none"; }

Gemm::Gemm(int, int, int, int, const std::string&) { throw std::runtime_error("this build has no GEMM"); }
Gemm::~Gemm() = default;
void Gemm::launch(const Stream&) const {}

#endif

}  // namespace dmabench::gpu
