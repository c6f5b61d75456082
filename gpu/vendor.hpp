#pragma once
// The one place that picks the vendor runtime for the shared GPU layer (gpu/ only; nothing
// outside gpu/ may include this). The HIP runtime mirrors the CUDA runtime's names with a
// `hip` prefix, so shared code spells a runtime name once, through GPU(): GPU(Malloc) is cudaMalloc
// on NVIDIA and hipMalloc on AMD, GPU(Stream_t) is cudaStream_t / hipStream_t, GPU(Success) is
// cudaSuccess / hipSuccess. Where the two runtimes differ (host allocation, stream memory
// operations, graph instantiation, clocks, versions), the code branches on DMABENCH_GPU_HIP.
//
// Build: DMABENCH_GPU_HIP=1 in HIP builds (CMake sets it); otherwise the CUDA runtime is used.
#include <string>

#include "gpu/call_error.hpp"

#if defined(DMABENCH_GPU_HIP)
#include <hip/hip_runtime.h>
#define GPU(name) hip##name
#define DMABENCH_GPU_RUNTIME "HIP"
#else
#include <cuda_runtime.h>
#define GPU(name) cuda##name
#define DMABENCH_GPU_RUNTIME "CUDA"
#endif

namespace dmabench::gpu::detail {

using Error = GPU(Error_t);
using NativeStream = GPU(Stream_t);
using NativeEvent = GPU(Event_t);
#if defined(DMABENCH_GPU_HIP)
using DeviceProp = hipDeviceProp_t;
#else
using DeviceProp = cudaDeviceProp;
#endif

// The backend name this vendor's runtime drives.
#if defined(DMABENCH_GPU_HIP)
inline constexpr const char* kBackendName = "hip";
#else
inline constexpr const char* kBackendName = "cuda";
#endif

[[noreturn]] inline void throw_gpu(Error err, const char* call, const char* file, int line) {
  throw_call_error(DMABENCH_GPU_RUNTIME, call, file, line, static_cast<long long>(err),
                   std::string(GPU(GetErrorName)(err)) + ": " + GPU(GetErrorString)(err));
}

}  // namespace dmabench::gpu::detail

// The call's text with GPU(...) already expanded ("cudaMalloc(...)", not "GPU(Malloc)(...)").
#define DMABENCH_GPU_STR2(x) #x
#define DMABENCH_GPU_STR(x) DMABENCH_GPU_STR2(x)

// Checks a runtime call (CUDA or HIP): throws (gpu/call_error.hpp) with the call text, file:line and
// the runtime's error name and string, after clearing a non-sticky error so later calls are clean.
#define DMABENCH_GPU_CHECK(call)                                                           \
  do {                                                                                     \
    ::dmabench::gpu::detail::Error dmabench_err_ = (call);                                 \
    if (dmabench_err_ != GPU(Success)) {                                                   \
      (void)GPU(GetLastError)();                                                           \
      ::dmabench::gpu::detail::throw_gpu(dmabench_err_, DMABENCH_GPU_STR(call), __FILE__, __LINE__);        \
    }                                                                                      \
  } while (0)
