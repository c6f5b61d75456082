#pragma once
// Factories of the backends and engines this build compiles; engines/registry.cpp is their only caller.
#include <memory>
#include <string_view>

#include <string>
#include <vector>

#include "engines/backend.hpp"
#include "amd/sdma/platform.hpp"
#include "engines/engine.hpp"

namespace dmabench {

std::unique_ptr<Engine> make_host_engine();
std::unique_ptr<Backend> make_host_backend();
// sdma on `backend`: the software SDMA engine on "host", KFD queues on "hip" (builds with libhsakmt).
Maybe<std::unique_ptr<Engine>> make_sdma_engine(std::string_view backend);
// sdma on a given platform (tests: a platform that plants a bad packet).
std::unique_ptr<Engine> make_sdma_engine_on(std::unique_ptr<amd::sdma::Platform> platform);
// The platform sdma runs on for `backend`, or why there is none (make_sdma_engine's platform).
Maybe<std::unique_ptr<amd::sdma::Platform>> make_sdma_platform(std::string_view backend);
// What --features says about a platform, for its first `max_devices` devices, two lines each: whether the GPU has
// PCIe 64-bit atomics to system memory and hence what sync=auto (the default) completes with, and its usable SDMA
// engines (the count KFD reports less the fused-off ones), with the reason for any left out.
std::vector<std::string> sdma_platform_facts(const amd::sdma::Platform& platform, int max_devices);
#ifdef DMABENCH_HAVE_GPU
Maybe<std::unique_ptr<Backend>> make_gpu_backend();  // cuda or hip, as built
std::unique_ptr<Engine> make_ce_engine();
std::unique_ptr<Engine> make_ce_batch_engine();
std::unique_ptr<Engine> make_sm_engine();
#endif
#ifdef DMABENCH_HAVE_HSA
std::unique_ptr<Engine> make_hsa_engine();
#endif
#ifdef DMABENCH_HAVE_NCCL
std::unique_ptr<Engine> make_nccl_engine();
#endif

}  // namespace dmabench
