#pragma once
// The one format of a failed vendor call. Every API family has its own check macro in gpu/
// (DMABENCH_GPU_CHECK for the CUDA / HIP runtime, DMABENCH_CU_CHECK for the CUDA driver,
// DMABENCH_HSA_CHECK, DMABENCH_NCCL_CHECK for NCCL / RCCL, DMABENCH_CUPTI_CHECK, DMABENCH_BLAS_CHECK
// for cuBLAS / rocBLAS); each throws through this function, so every vendor error reads the same:
//   <call> at <file>:<line>: <api> error <code>: <what>
// e.g. "cudaMalloc(&p, bytes) at gpu/runtime.cpp:131: CUDA error 2: cudaErrorMemoryAllocation: out of memory".
// Vendor-neutral (no vendor header): compiled and tested in every build.
#include <string_view>

namespace dmabench::gpu {

// Throws std::runtime_error with the message above. `api` names the library ("CUDA", "HIP", "HSA",
// "NCCL", ...), `call` is the call's text, `code` the library's status value and `what` its error
// name and / or string.
[[noreturn]] void throw_call_error(std::string_view api, std::string_view call, std::string_view file, int line,
                                   long long code, std::string_view what);

}  // namespace dmabench::gpu
