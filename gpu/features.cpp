#include "gpu/features.hpp"

#include <fmt/format.h>

// The string of a definition's value (DMABENCH_NCCL_ALLTOALL=ncclAlltoAll -> "ncclAlltoAll").
#define DMABENCH_FEATURE_STR2(x) #x
#define DMABENCH_FEATURE_STR(x) DMABENCH_FEATURE_STR2(x)

namespace dmabench::gpu {
namespace {

Feature row(std::string name, std::string needs, bool built, std::string yes, std::string no) {
  return Feature{std::move(name), std::move(needs), built, built ? std::move(yes) : std::move(no)};
}

// The NVIDIA side of this_build().
void add_nvidia_facts([[maybe_unused]] BuildFacts& b) {
#ifdef DMABENCH_HAVE_CUDA
  b.cuda = true;
#endif
#ifdef DMABENCH_CUDA_HAS_BATCH
  b.cuda_batch = true;
#endif
#ifdef DMABENCH_HAVE_CUPTI
  b.cupti = true;
#endif
#ifdef DMABENCH_HAVE_CUBLAS
  b.cublas = true;
#endif
#if defined(DMABENCH_HAVE_NCCL) && !defined(DMABENCH_HAVE_RCCL)
  b.nccl = true;
#endif
#ifdef DMABENCH_NCCL_HAS_CE_COLLECTIVES
  b.nccl_ce_collectives = true;
#endif
#ifdef DMABENCH_HAVE_NVML_H
  b.nvml_h = true;
#endif
#ifdef DMABENCH_CUDA_VERSION_STRING
  b.cuda_version = DMABENCH_CUDA_VERSION_STRING;
#endif
#ifdef DMABENCH_NCCL_VERSION_STRING
  b.nccl_version = DMABENCH_NCCL_VERSION_STRING;
#endif
#ifdef DMABENCH_NCCL_ALLTOALL
  b.nccl_alltoall = DMABENCH_FEATURE_STR(DMABENCH_NCCL_ALLTOALL);
#endif
}

// The AMD side of this_build().
void add_amd_facts([[maybe_unused]] BuildFacts& b) {
#ifdef DMABENCH_HAVE_HIP
  b.hip = true;
#endif
#ifdef DMABENCH_HAVE_HSA
  b.hsa = true;
#endif
#ifdef DMABENCH_HAVE_RCCL
  b.rccl = true;
#endif
#ifdef DMABENCH_HAVE_ROCBLAS
  b.rocblas = true;
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
#ifdef DMABENCH_HAVE_ROCM_SMI_H
  b.rocm_smi_h = true;
#endif
#ifdef DMABENCH_RSMI_HAS_POWER_GET
  b.rsmi_power_get = true;
#endif
#ifdef DMABENCH_HAVE_KFD
  b.kfd = true;
#endif
#ifdef DMABENCH_KFD_HAS_BY_ENG_ID
  b.kfd_by_eng_id = true;
#endif
#ifdef DMABENCH_HIP_VERSION_STRING
  b.hip_version = DMABENCH_HIP_VERSION_STRING;
#endif
#ifdef DMABENCH_HSA_INTERFACE_STRING
  b.hsa_interface = DMABENCH_HSA_INTERFACE_STRING;
#endif
}

}  // namespace

// What configure found, from the definitions CMakeLists.txt and cmake/*.cmake give this file.
BuildFacts this_build() {
  BuildFacts b;
  add_nvidia_facts(b);
  add_amd_facts(b);
  return b;
}

std::vector<Feature> nvidia_features(const BuildFacts& b) {
  const std::string cuda = b.cuda ? "CUDA " + b.cuda_version : "no CUDA";
  const std::string nccl = b.nccl ? "NCCL " + b.nccl_version : b.rccl ? "RCCL" : "no NCCL";
  const std::string no_cuda = "this build has no CUDA";
  return {
      row("cuda backend: ce (cudaMemcpyAsync), sm, completion event, graph",
          "a CUDA compiler and toolkit at configure time (check_language(CUDA), find_package(CUDAToolkit))", b.cuda, cuda,
          "this build has no CUDA (configure where nvcc is found, or -DDMABENCH_CUDA=ON)"),
      row("stream memory operations on NVIDIA (cuStreamWaitValue32 / cuStreamWriteValue32): trigger host-flag|gpu-flag, "
          "completion flag-spin|gpu-poll",
          "a driver with the CUDA 12 entry points (cudaGetDriverEntryPointByVersion, looked up at run time)", b.cuda,
          "from the driver at run time (without them such cases are skipped, saying why); trigger gpu-flag is timed on "
          "%globaltimer",
          no_cuda),
      row("ce-batch (cudaMemcpyBatchAsync)", "CUDA >= 12.8 headers, and a CUDA >= 12.8 driver at run time",
          b.cuda && b.cuda_batch,
          "cudaMemcpyBatchAsync, source access order stream, overlap flag per overlap_hint, an event just before per "
          "event_before",
          b.cuda ? fmt::format("{} has no cudaMemcpyBatchAsync", cuda) : no_cuda),
      row("latency breakdown on NVIDIA (CUPTI copy records)", "CUPTI (CMake's CUDA::cupti)", b.cuda && b.cupti,
          "CUPTI activity records MEMCPY and MEMCPY2", b.cuda ? "CUPTI was not found at configure time" : no_cuda),
      row("nccl engine on NVIDIA (NCCL)", "NCCL (find_package(NCCL): nccl.h and libnccl; NCCL_ROOT)", b.nccl, nccl,
          b.cuda ? "NCCL was not found at configure time" : no_cuda),
      row("nccl alltoall on NVIDIA (ncclAlltoAll)", "NCCL >= 2.28 (the header declares ncclAlltoAll; cmake/nccl_api.cmake)",
          b.nccl && !b.nccl_alltoall.empty(), b.nccl_alltoall,
          b.nccl ? fmt::format("{} has no all-to-all call: alltoall cases are skipped", nccl) : "this build has no NCCL"),
      row("nccl cta_policy zero (NCCL_CTA_POLICY_ZERO, ncclMemAlloc buffers registered as symmetric windows)",
          "NCCL >= 2.28", b.nccl && b.nccl_ce_collectives, nccl,
          b.rccl   ? "this build has RCCL, which has neither NCCL_CTA_POLICY_ZERO nor symmetric windows"
          : b.nccl ? fmt::format("{} has neither NCCL_CTA_POLICY_ZERO nor symmetric windows", nccl)
                   : "this build has no NCCL"),
      row("gemm workload on NVIDIA (cuBLAS cublasGemmEx)", "cuBLAS (CMake's CUDA::cublas)", b.cuda && b.cublas,
          "bf16 / fp16 with fp32 accumulation",
          b.cuda ? "cuBLAS was not found at configure time: overlap cases with a gemm workload are skipped" : no_cuda),
      row("power source nvml (nvmlDeviceGetTotalEnergyConsumption)",
          "nvml.h at build time (the CUDA toolkit's include directory), libnvidia-ml.so.1 at run time", b.nvml_h,
          "libnvidia-ml.so.1 is loaded at run time (dlopen)", "nvml.h was not found at configure time"),
  };
}

namespace {

// The rows of amd_features() for the HIP runtime, RCCL and the HSA runtime.
std::vector<Feature> amd_runtime_features(const BuildFacts& b) {
  const std::string hip = b.hip ? "HIP " + b.hip_version : "no HIP";
  const std::string hsa = b.hsa ? "HSA AMD interface " + b.hsa_interface : "no HSA";
  return {
      row("hip backend: ce, sm, trigger host-flag, completion event/flag-spin/gpu-poll, graph",
          "ROCm >= 5.2 (HIP with hipStreamWaitValue32 / hipStreamWriteValue32)", b.hip, hip,
          "this build has no HIP (configure where hipcc and the HIP CMake package are found, or -DDMABENCH_HIP=ON)"),
      row("ce SDMA-only copy kind (hipMemcpyDeviceToDeviceNoCU)", "ROCm >= 6.2 (headers declare hipMemcpyDeviceToDeviceNoCU)",
          b.hip && b.hip_nocu, "ce copies with hipMemcpyDeviceToDeviceNoCU",
          fmt::format("{}: ce uses hipMemcpyDefault (the runtime may pick a blit kernel instead of SDMA)", hip)),
      row("ce-batch (hipMemcpyBatchAsync)", "HIP >= 7.1 (headers declare hipMemcpyBatchAsync with hipMemcpyAttributes)",
          b.hip && b.hip_batch,
          "hipMemcpyBatchAsync, source access order stream, overlap flag per overlap_hint, an event just before per "
          "event_before",
          fmt::format("{} has no hipMemcpyBatchAsync", hip)),
      row("trigger gpu-flag (GPU clock: s_memrealtime at hipDeviceAttributeWallClockRate)",
          "ROCm >= 5.5 (hipDeviceAttributeWallClockRate)", b.hip && b.hip_wall_clock_rate, "",
          fmt::format("{} has no hipDeviceAttributeWallClockRate to convert GPU clock ticks", hip)),
      row("nccl engine on AMD (RCCL)", "RCCL (find_package(rccl))", b.rccl, "RCCL",
          "RCCL was not found at configure time (find_package(rccl); Debian 12 has no RCCL, ROCm 7 packages have librccl-dev)"),
      row("nccl alltoall on AMD (ncclAllToAll)", "RCCL whose header declares ncclAllToAll (cmake/nccl_api.cmake)",
          b.rccl && !b.nccl_alltoall.empty(), b.nccl_alltoall,
          b.rccl ? "this RCCL header has no all-to-all call: alltoall cases are skipped" : "this build has no RCCL"),
      row("hsa engine, engines=runtime (hsa_amd_memory_async_copy), pre-launch behind a dependency signal, "
          "completion by spinning on the HSA signal, breakdown from hsa_amd_profiling_get_async_copy_time",
          "ROCm >= 5.2 (HSA AMD interface 1.0)", b.hip && b.hsa, hsa, "this build has no HSA runtime (hsa-runtime64)"),
      row("hsa engines=preferred|round-robin|map:FILE (hsa_amd_memory_async_copy_on_engine, "
          "hsa_amd_memory_get_preferred_copy_engine)",
          "ROCm >= 5.7", b.hip && b.hsa && b.hsa_copy_on_engine, hsa,
          fmt::format("{}: the headers have no hsa_amd_memory_async_copy_on_engine", hsa)),
      row("hsa packet=broadcast|swap (hsa_amd_memory_async_batch_copy)",
          "an HSA header that declares hsa_amd_memory_async_batch_copy (ROCm 7.2's does not)", false, "",
          b.hsa_batch_copy ? "the headers declare hsa_amd_memory_async_batch_copy, but dmabench's path for it is not written yet"
                           : fmt::format("{}: the headers have no hsa_amd_memory_async_batch_copy", hsa)),
      row("SDMA engine counts from the runtime (HSA_AMD_AGENT_INFO_NUM_SDMA_ENG / _XGMI_ENG)", "ROCm >= 5.7",
          b.hip && b.hsa && b.hsa_sdma_info, "from the HSA agent",
          "read from /sys/class/kfd/kfd/topology/nodes/*/properties (num_sdma_engines, num_sdma_xgmi_engines) instead"),
  };
}

// The rows of amd_features() for the KFD queues of the sdma engine, rocBLAS and rocm-smi.
std::vector<Feature> amd_kfd_features(const BuildFacts& b) {
  return {
      row("sdma engine on KFD queues (libhsakmt: SDMA / SDMA_XGMI queues, raw packets written by the host, hardware "
          "TIMESTAMP and hsaKmtGetClockCounters)",
          "libhsakmt's headers and library at configure time (find_package(hsakmt), or hsakmt.h and libhsakmt; Debian "
          "libhsakmt-dev, ROCm's hsakmt)",
          b.hip && b.kfd,
          b.kfd_by_eng_id ? "queues on the chosen engine (HSA_QUEUE_SDMA_BY_ENG_ID where KFD >= 1.17)"
                          : "SDMA / SDMA_XGMI queues; the engine is assumed from KFD's allocation order",
          b.hip ? "libhsakmt was not found at configure time: the sdma engine runs only on the host backend (the software "
                  "SDMA engine)"
                : "this build has no HIP"),
      row("sdma engines=recommended|round-robin|map:FILE on the engine chosen (hsaKmtCreateQueueExt, "
          "HSA_QUEUE_SDMA_BY_ENG_ID)",
          "ROCm >= 6.3's libhsakmt (hsaKmtCreateQueueExt, HSA_QUEUE_SDMA_BY_ENG_ID), KFD ioctl >= 1.17 at run time",
          b.hip && b.kfd && b.kfd_by_eng_id, "KFD places each queue on the engine asked for",
          b.kfd ? "this libhsakmt has no HSA_QUEUE_SDMA_BY_ENG_ID: queues are SDMA / SDMA_XGMI queues and their engine is "
                  "assumed from KFD's allocation order (the k-th queue of a kind lands on its k-th engine only while no "
                  "other queue of that kind exists on the GPU)"
                : "this build has no KFD queues (libhsakmt was not found at configure time)"),
      row("sdma submit=gpu / trigger=gpu-flag on KFD queues (a one-block kernel writes the ring, the wptr cell and the "
          "doorbell, or the trigger word, as ROCm's mori does)",
          "KFD queues (libhsakmt) and a discrete GPU whose doorbell page libhsakmt maps into the GPU's address space", b.hip && b.kfd,
          "never run on AMD hardware; on an APU or a kernel without doorbell-in-GPUVM the kernel's doorbell store faults",
          b.hip ? "this build has no KFD queues (libhsakmt was not found at configure time)" : "this build has no HIP"),
      row("gemm workload on AMD (rocBLAS rocblas_gemm_ex)", "rocBLAS (find_package(rocblas))", b.hip && b.rocblas,
          "bf16 / fp16 with fp32 accumulation",
          b.hip ? "rocBLAS was not found at configure time: overlap cases with a gemm workload are skipped"
                : "this build has no HIP"),
      row("power source rocm-smi (rsmi_dev_energy_count_get)",
          "rocm_smi.h at build time, librocm_smi64.so at run time (rsmi_dev_power_get for the trace: newer rocm-smi)",
          b.rocm_smi_h,
          b.rsmi_power_get ? "loaded at run time (dlopen); the trace reads rsmi_dev_power_get"
                           : "loaded at run time (dlopen); the trace reads rsmi_dev_power_ave_get (the header has no "
                             "rsmi_dev_power_get)",
          "rocm_smi.h was not found at configure time"),
  };
}

}  // namespace

std::vector<Feature> amd_features(const BuildFacts& b) {
  std::vector<Feature> rows = amd_runtime_features(b);
  for (Feature& f : amd_kfd_features(b)) rows.push_back(std::move(f));
  return rows;
}

std::vector<FeatureTable> feature_tables(const BuildFacts& b) {
  return {{"NVIDIA", "cuda", nvidia_features(b)}, {"AMD", "hip", amd_features(b)}};
}

WhyNot missing(const BuildFacts& b, const std::string& feature) {
  const Feature* match = nullptr;
  int matches = 0;
  const auto tables = feature_tables(b);
  for (const auto& t : tables)
    for (const auto& f : t.features)
      if (f.name.rfind(feature, 0) == 0) {
        match = &f;
        ++matches;
      }
  if (matches == 0) return fmt::format("{}: unknown feature", feature);
  if (matches > 1) return fmt::format("{}: ambiguous feature name ({} features start with it)", feature, matches);
  if (match->built) return std::nullopt;
  return fmt::format("{} needs {}; {}", feature, match->needs, match->note);
}

}  // namespace dmabench::gpu
