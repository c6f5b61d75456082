#pragma once
// One checking macro per API family. A failing call throws std::runtime_error carrying the call
// text, file:line and the vendor's error name and string; the harness records it as the case's
// `failed` reason and the sweep continues.
#include <stdexcept>
#include <string>

#include <cuda_runtime.h>

namespace dmabench::gpu::detail {

[[noreturn]] inline void throw_cuda(cudaError_t err, const char* call, const char* file, int line) {
  throw std::runtime_error(std::string(call) + " at " + file + ":" + std::to_string(line) + ": " +
                           cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

}  // namespace dmabench::gpu::detail

#define DMABENCH_CUDA_CHECK(call)                                                         \
  do {                                                                                    \
    cudaError_t dmabench_err_ = (call);                                                   \
    if (dmabench_err_ != cudaSuccess) {                                                   \
      (void)cudaGetLastError(); /* clear a non-sticky error so later calls are clean */   \
      ::dmabench::gpu::detail::throw_cuda(dmabench_err_, #call, __FILE__, __LINE__);      \
    }                                                                                     \
  } while (0)
