#include "gpu/features.hpp"

#include <fmt/format.h>

namespace dmabench::gpu {

BuildFacts this_build() {
  BuildFacts b;
#ifdef DMABENCH_HAVE_HIP
  b.hip = true;
#endif
#ifdef DMABENCH_HAVE_HSA
  b.hsa = true;
#endif
#ifdef DMABENCH_HAVE_RCCL
  b.rccl = true;
#endif
#ifdef DMABENCH_HIP_HAS_NOCU
  b.hip_nocu = true;
#endif
#ifdef DMABENCH_HIP_HAS_BATCH
  b.hip_batch = true;
#endif
#ifdef DMABENCH_HIP_HAS_WALL_CLOCK_RATE
  b.hip_wall_clock_rate = true;
#endif
#ifdef DMABENCH_HSA_HAS_COPY_ON_ENGINE
  b.hsa_copy_on_engine = true;
#endif
#ifdef DMABENCH_HSA_HAS_BATCH_COPY
  b.hsa_batch_copy = true;
#endif
#ifdef DMABENCH_HSA_HAS_SDMA_INFO
  b.hsa_sdma_info = true;
#endif
#ifdef DMABENCH_HIP_VERSION_STRING
  b.hip_version = DMABENCH_HIP_VERSION_STRING;
#endif
#ifdef DMABENCH_HSA_INTERFACE_STRING
  b.hsa_interface = DMABENCH_HSA_INTERFACE_STRING;
#endif
  return b;
}

std::vector<Feature> amd_features(const BuildFacts& b) {
  const std::string hip = b.hip ? "HIP " + b.hip_version : "no HIP";
  const std::string hsa = b.hsa ? "HSA AMD interface " + b.hsa_interface : "no HSA";
  auto f = [](std::string name, std::string needs, bool built, std::string yes, std::string no) {
    return Feature{std::move(name), std::move(needs), built, built ? std::move(yes) : std::move(no)};
  };
  return {
      f("hip backend: ce, sm, trigger host-flag, completion event/flag-spin/gpu-poll, graph",
        "ROCm >= 5.2 (HIP with hipStreamWaitValue32 / hipStreamWriteValue32)", b.hip, hip,
        "this build has no HIP (configure where hipcc and the HIP CMake package are found, or -DDMABENCH_HIP=ON)"),
      f("ce SDMA-only copy kind (hipMemcpyDeviceToDeviceNoCU)", "ROCm >= 6.2 (headers declare hipMemcpyDeviceToDeviceNoCU)",
        b.hip && b.hip_nocu, "ce copies with hipMemcpyDeviceToDeviceNoCU",
        fmt::format("{}: ce uses hipMemcpyDefault (the runtime may pick a blit kernel instead of SDMA)", hip)),
      f("ce-batch (hipMemcpyBatchAsync)", "HIP >= 7.1 (headers declare hipMemcpyBatchAsync with hipMemcpyAttributes)",
        b.hip && b.hip_batch, "hipMemcpyBatchAsync, source access order stream, overlap flag per overlap_hint",
        fmt::format("{} has no hipMemcpyBatchAsync", hip)),
      f("trigger gpu-flag (GPU clock: s_memrealtime at hipDeviceAttributeWallClockRate)",
        "ROCm >= 5.5 (hipDeviceAttributeWallClockRate)", b.hip && b.hip_wall_clock_rate, "",
        fmt::format("{} has no hipDeviceAttributeWallClockRate to convert GPU clock ticks", hip)),
      f("nccl engine on AMD (RCCL)", "RCCL (find_package(rccl))", b.rccl, "RCCL",
        "RCCL was not found at configure time (find_package(rccl); Debian 12 has no RCCL, ROCm 7 packages have librccl-dev)"),
      f("hsa engine, engines=runtime (hsa_amd_memory_async_copy), pre-launch behind a dependency signal, "
        "completion by spinning on the HSA signal, breakdown from hsa_amd_profiling_get_async_copy_time",
        "ROCm >= 5.2 (HSA AMD interface 1.0)", b.hip && b.hsa, hsa, "this build has no HSA runtime (hsa-runtime64)"),
      f("hsa engines=preferred|round-robin|map:FILE (hsa_amd_memory_async_copy_on_engine, "
        "hsa_amd_memory_get_preferred_copy_engine)",
        "ROCm >= 5.7", b.hip && b.hsa && b.hsa_copy_on_engine, hsa,
        fmt::format("{}: the headers have no hsa_amd_memory_async_copy_on_engine", hsa)),
      f("hsa packet=broadcast|swap (hsa_amd_memory_async_batch_copy)", "an HSA header that declares hsa_amd_memory_async_batch_copy (ROCm 7.2's does not)",
        false, "",
        b.hsa_batch_copy ? "the headers declare hsa_amd_memory_async_batch_copy, but dmabench's path for it is not written yet"
                         : fmt::format("{}: the headers have no hsa_amd_memory_async_batch_copy", hsa)),
      f("SDMA engine counts from the runtime (HSA_AMD_AGENT_INFO_NUM_SDMA_ENG / _XGMI_ENG)", "ROCm >= 5.7",
        b.hip && b.hsa && b.hsa_sdma_info, "from the HSA agent",
        "read from /sys/class/kfd/kfd/topology/nodes/*/properties (num_sdma_engines, num_sdma_xgmi_engines) instead"),
  };
}

std::string missing(const BuildFacts& b, const std::string& feature) {
  for (const auto& f : amd_features(b))
    if (f.name.rfind(feature, 0) == 0) return f.built ? "" : fmt::format("{} needs {}; {}", feature, f.needs, f.note);
  return fmt::format("{}: unknown feature", feature);
}

}  // namespace dmabench::gpu
