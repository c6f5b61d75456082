#pragma once
// The build-feature table of both vendors: what each feature needs and whether this build has it
// (for --features and skip reasons). Vendor-neutral and free of vendor headers: configure's findings
// come in as a BuildFacts (this_build() reads the compile definitions), so the text is testable in
// every build.
#include <string>
#include <vector>

#include "core/why_not.hpp"

namespace dmabench::gpu {

struct Feature {
  std::string name;    // e.g. "hsa engines=preferred|round-robin|map:FILE (...)"; no name is a prefix of another
  std::string needs;   // e.g. "ROCm >= 5.7"
  bool built = false;  // this build has it
  std::string note;    // why not, or how it is done
};

struct FeatureTable {
  std::string vendor;   // "NVIDIA", "AMD"
  std::string backend;  // "cuda", "hip"
  std::vector<Feature> features;
};

struct BuildFacts {  // what configure found (compile-time definitions), so the text is testable
  // NVIDIA (cuda backend)
  bool cuda = false;
  bool cuda_batch = false;           // cudaMemcpyBatchAsync (CUDA >= 12.8 headers)
  bool cupti = false, cublas = false;
  bool nccl = false;                 // NVIDIA's NCCL (RCCL is `rccl`)
  bool nccl_ce_collectives = false;  // NCCL >= 2.28: NCCL_CTA_POLICY_ZERO, symmetric windows
  bool nvml_h = false;               // nvml.h for the nvml power source
  std::string cuda_version, nccl_version;  // "13.0", "2.28.9"
  // NCCL or RCCL: the all-to-all call the header declares ("ncclAlltoAll", "ncclAllToAll"), "" none
  std::string nccl_alltoall;
  // AMD (hip backend)
  bool hip = false, hsa = false, rccl = false, rocblas = false;
  bool hip_nocu = false, hip_batch = false, hip_wall_clock_rate = false;
  bool hsa_copy_on_engine = false, hsa_batch_copy = false, hsa_sdma_info = false;
  bool rocm_smi_h = false, rsmi_power_get = false;  // rocm_smi.h (and rsmi_dev_power_get) for the rocm-smi power source
  bool kfd = false;            // libhsakmt's headers: the sdma engine on KFD queues (gpu/kfd.cpp)
  bool kfd_by_eng_id = false;  // hsaKmtCreateQueueExt and HSA_QUEUE_SDMA_BY_ENG_ID (libhsakmt of ROCm >= 6.3)
  std::string hip_version, hsa_interface;  // "5.2", "1.0"
};
BuildFacts this_build();

std::vector<Feature> nvidia_features(const BuildFacts& b);
std::vector<Feature> amd_features(const BuildFacts& b);
// Both tables, NVIDIA's then AMD's.
std::vector<FeatureTable> feature_tables(const BuildFacts& b);
// "<feature> needs X; <why not>" for a feature this build lacks, or nullopt when it has it.
// `feature` is the start of one feature's name (of either table); an unknown or ambiguous start
// says so.
WhyNot missing(const BuildFacts& b, const std::string& feature);

}  // namespace dmabench::gpu
