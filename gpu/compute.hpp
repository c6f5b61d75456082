#pragma once
// The GPU layer's part of the compute workloads that run beside communication (bench/beside/):
// device-timed stream marks and a vendor BLAS GEMM. Vendor-neutral declarations; the
// implementation (gpu/compute.cpp) is the only code that includes the BLAS header.
#include <memory>
#include <string>

#include "gpu/gpu.hpp"

namespace dmabench::gpu {

// Two timing marks on one stream, timed by the device (events with timing enabled).
class StreamTimer {
 public:
  explicit StreamTimer(int device);
  ~StreamTimer();
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;
  void start(const Stream& stream);
  void stop(const Stream& stream);
  // Whether the device has passed the stop mark (non-blocking).
  bool done() const;
  // Waits for the stop mark; milliseconds between the marks on the device.
  double elapsed_ms() const;

 private:
  void* start_ = nullptr;
  void* stop_ = nullptr;
  int device_ = -1;
};

// Why this build has no GEMM (a vendor BLAS), or nullopt; which BLAS call it is.
WhyNot gemm_unsupported();
std::string gemm_implementation();

// C[m x n] = A[m x k] * B[k x n] in bf16 or fp16 with fp32 accumulation, column-major, on one
// device, through the vendor BLAS (cuBLAS or rocBLAS). Operands are allocated and filled with values in [-1, 1].
class Gemm {
 public:
  // dtype: "bf16" or "fp16"
  Gemm(int device, int m, int n, int k, const std::string& dtype);
  ~Gemm();
  Gemm(const Gemm&) = delete;
  Gemm& operator=(const Gemm&) = delete;
  void launch(const Stream& stream) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dmabench::gpu
