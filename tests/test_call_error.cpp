// The one format of a failed vendor call (gpu/call_error.cpp), which every API family's check macro
// in gpu/ throws through; no GPU needed.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "gpu/call_error.hpp"

using namespace dmabench;

namespace {

std::string message_of(std::string_view api, std::string_view call, long long code, std::string_view what) {
  try {
    gpu::throw_call_error(api, call, "gpu/runtime.cpp", 131, code, what);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

}  // namespace

TEST(CallError, EveryVendorErrorHasTheSameFormat) {
  EXPECT_EQ(message_of("CUDA", "cudaMalloc(&p, bytes)", 2, "cudaErrorMemoryAllocation: out of memory"),
            "cudaMalloc(&p, bytes) at gpu/runtime.cpp:131: CUDA error 2: cudaErrorMemoryAllocation: out of memory");
  EXPECT_EQ(message_of("HSA", "hsa_init()", 0x1008, "HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
            "hsa_init() at gpu/runtime.cpp:131: HSA error 4104: HSA_STATUS_ERROR_OUT_OF_RESOURCES");
  EXPECT_EQ(message_of("NCCL", "ncclGroupEnd()", 3, "internal error"),
            "ncclGroupEnd() at gpu/runtime.cpp:131: NCCL error 3: internal error");
  EXPECT_EQ(message_of("CUDA driver", "cuStreamWaitValue32(s, a, v, f)", -1, "unknown"),
            "cuStreamWaitValue32(s, a, v, f) at gpu/runtime.cpp:131: CUDA driver error -1: unknown");
}
