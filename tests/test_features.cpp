// The build-feature table of both vendors (gpu/features.cpp), which needs no GPU: what every feature
// needs, the skip reason of a feature a build lacks, and this build's facts agreeing with the
// definitions the rest of the program sees.
#include <string>

#include <gtest/gtest.h>

#include "gpu/features.hpp"

using namespace dmabench;

namespace {

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool has(const WhyNot& why, const std::string& part) { return why && has(*why, part); }

}  // namespace

TEST(Features, BothVendorsEveryNameUniqueAsAPrefix) {
  const auto tables = gpu::feature_tables(gpu::BuildFacts{});
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables[0].vendor, "NVIDIA");
  EXPECT_EQ(tables[0].backend, "cuda");
  EXPECT_EQ(tables[1].vendor, "AMD");
  EXPECT_EQ(tables[1].backend, "hip");
  std::vector<std::string> names;
  for (const auto& t : tables)
    for (const auto& f : t.features) {
      EXPECT_FALSE(f.built) << f.name;  // a build with nothing has nothing
      EXPECT_FALSE(f.needs.empty()) << f.name;
      EXPECT_FALSE(f.note.empty()) << f.name;
      names.push_back(f.name);
    }
  for (const auto& a : names)  // missing() finds a feature by the start of its name
    for (const auto& b : names)
      if (&a != &b) EXPECT_NE(b.rfind(a, 0), 0u) << "'" << a << "' starts '" << b << "'";
  EXPECT_TRUE(has(gpu::missing(gpu::BuildFacts{}, "ce-batch"), "ambiguous")) << gpu::missing(gpu::BuildFacts{}, "ce-batch").value_or("");
  EXPECT_TRUE(has(gpu::missing(gpu::BuildFacts{}, "warp drive"), "unknown feature"));
}

TEST(Features, ThisBuildAgreesWithItsDefinitions) {
  const gpu::BuildFacts b = gpu::this_build();
#ifdef DMABENCH_HAVE_CUDA
  EXPECT_TRUE(b.cuda);
  EXPECT_FALSE(b.cuda_version.empty());
  EXPECT_EQ(gpu::missing(b, "cuda backend"), std::nullopt);
#else
  EXPECT_FALSE(b.cuda);
#endif
#ifdef DMABENCH_HAVE_HIP
  EXPECT_TRUE(b.hip);
  EXPECT_EQ(gpu::missing(b, "hip backend"), std::nullopt);
#else
  EXPECT_FALSE(b.hip);
#endif
#ifdef DMABENCH_HAVE_HSA
  EXPECT_TRUE(b.hsa);
#else
  EXPECT_FALSE(b.hsa);
#endif
#ifdef DMABENCH_HAVE_KFD
  EXPECT_TRUE(b.kfd);
  EXPECT_EQ(gpu::missing(b, "sdma engine on KFD queues"), std::nullopt);
#else
  EXPECT_FALSE(b.kfd);
#endif
#ifdef DMABENCH_HAVE_RCCL
  EXPECT_TRUE(b.rccl);
  EXPECT_FALSE(b.nccl);
#elif defined(DMABENCH_HAVE_NCCL)
  EXPECT_TRUE(b.nccl);
  EXPECT_FALSE(b.rccl);
#else
  EXPECT_FALSE(b.nccl || b.rccl);
#endif
}

TEST(NvidiaFeatures, EveryFeatureSaysWhatItNeeds) {
  gpu::BuildFacts cuda13;  // CUDA 13.0 with NCCL 2.28
  cuda13.cuda = cuda13.cuda_batch = cuda13.cupti = cuda13.cublas = cuda13.nccl = cuda13.nccl_ce_collectives = true;
  cuda13.nvml_h = true;
  cuda13.cuda_version = "13.0";
  cuda13.nccl_version = "2.28.9";
  cuda13.nccl_alltoall = "ncclAlltoAll";
  for (const auto& f : gpu::nvidia_features(cuda13)) {
    EXPECT_TRUE(f.built) << f.name;
    EXPECT_FALSE(f.needs.empty()) << f.name;
  }
  EXPECT_EQ(gpu::missing(cuda13, "ce-batch (cudaMemcpyBatchAsync)"), std::nullopt);
  EXPECT_EQ(gpu::missing(cuda13, "nccl cta_policy zero"), std::nullopt);

  gpu::BuildFacts cuda126;  // CUDA 12.6 with NCCL 2.21, without CUPTI
  cuda126.cuda = cuda126.nccl = cuda126.cublas = true;
  cuda126.cuda_version = "12.6";
  cuda126.nccl_version = "2.21.5";
  const std::string batch = gpu::missing(cuda126, "ce-batch (cuda").value_or("");
  EXPECT_TRUE(has(batch, "needs CUDA >= 12.8")) << batch;
  EXPECT_TRUE(has(batch, "CUDA 12.6 has no cudaMemcpyBatchAsync")) << batch;
  const std::string a2a = gpu::missing(cuda126, "nccl alltoall on NVIDIA").value_or("");
  EXPECT_TRUE(has(a2a, "NCCL >= 2.28")) << a2a;
  EXPECT_TRUE(has(a2a, "NCCL 2.21.5 has no all-to-all call")) << a2a;
  EXPECT_TRUE(has(gpu::missing(cuda126, "nccl cta_policy zero"), "cta_policy zero needs NCCL >= 2.28"));
  EXPECT_TRUE(has(gpu::missing(cuda126, "latency breakdown on NVIDIA"), "CUPTI was not found"));
  EXPECT_TRUE(has(gpu::missing(gpu::BuildFacts{}, "cuda backend"), "no CUDA"));
  EXPECT_TRUE(has(gpu::missing(gpu::BuildFacts{}, "power source nvml"), "nvml.h was not found"));
}

TEST(AmdFeatures, EveryFeatureSaysWhatItNeeds) {
  gpu::BuildFacts rocm52;  // Debian 12's ROCm 5.2.3
  rocm52.hip = rocm52.hsa = true;
  rocm52.hip_version = "5.2";
  rocm52.hsa_interface = "1.0";
  for (const auto& f : gpu::amd_features(rocm52)) {
    EXPECT_FALSE(f.needs.empty()) << f.name;
    EXPECT_FALSE(f.note.empty()) << f.name;
  }
  EXPECT_EQ(gpu::missing(rocm52, "hsa engine, engines=runtime"), std::nullopt);
  const std::string on_engine = gpu::missing(rocm52, "hsa engines=preferred").value_or("");
  EXPECT_NE(on_engine.find("needs ROCm >= 5.7"), std::string::npos) << on_engine;
  EXPECT_NE(on_engine.find("HSA AMD interface 1.0"), std::string::npos) << on_engine;
  EXPECT_NE(gpu::missing(rocm52, "ce-batch (hip").value_or("").find("HIP >= 7.1"), std::string::npos);
  EXPECT_NE(gpu::missing(rocm52, "ce SDMA-only").value_or("").find("hipMemcpyDefault"), std::string::npos);
  EXPECT_NE(gpu::missing(rocm52, "nccl engine on AMD").value_or("").find("RCCL"), std::string::npos);
  EXPECT_NE(gpu::missing(rocm52, "gemm workload on AMD").value_or("").find("rocBLAS was not found"), std::string::npos);

  gpu::BuildFacts rocm7 = rocm52;  // ROCm 7.2 with RCCL
  rocm7.hsa_copy_on_engine = rocm7.hip_nocu = rocm7.hip_wall_clock_rate = rocm7.hip_batch = rocm7.rccl = true;
  rocm7.nccl_alltoall = "ncclAllToAll";
  EXPECT_EQ(gpu::missing(rocm7, "hsa engines=preferred"), std::nullopt);
  EXPECT_EQ(gpu::missing(rocm7, "ce-batch (hipMemcpyBatchAsync)"), std::nullopt);
  EXPECT_EQ(gpu::missing(rocm7, "ce SDMA-only"), std::nullopt);
  EXPECT_EQ(gpu::missing(rocm7, "trigger gpu-flag"), std::nullopt);
  EXPECT_EQ(gpu::missing(rocm7, "nccl alltoall on AMD"), std::nullopt);
  // RCCL has no copy-engine collectives; the reason names it
  const std::string zero = gpu::missing(rocm7, "nccl cta_policy zero").value_or("");
  EXPECT_TRUE(has(zero, "cta_policy zero needs NCCL >= 2.28") && has(zero, "RCCL")) << zero;
  EXPECT_NE(gpu::missing(gpu::BuildFacts{}, "hip backend").value_or("").find("no HIP"), std::string::npos);
}

TEST(AmdFeatures, SdmaOnKfdQueuesNeedsTheThunk) {
  gpu::BuildFacts rocm52;  // Debian 12: libhsakmt 5.2.3, no HSA_QUEUE_SDMA_BY_ENG_ID
  rocm52.hip = rocm52.hsa = rocm52.kfd = true;
  rocm52.hip_version = "5.2";
  EXPECT_EQ(gpu::missing(rocm52, "sdma engine on KFD queues"), std::nullopt);
  const std::string by_id = gpu::missing(rocm52, "sdma engines=").value_or("");
  EXPECT_TRUE(has(by_id, "ROCm >= 6.3") && has(by_id, "allocation order")) << by_id;
  EXPECT_EQ(gpu::missing(rocm52, "sdma submit=gpu"), std::nullopt);  // a kernel writes ring, wptr and doorbell

  gpu::BuildFacts rocm63 = rocm52;  // ROCm >= 6.3's libhsakmt
  rocm63.kfd_by_eng_id = true;
  EXPECT_EQ(gpu::missing(rocm63, "sdma engines="), std::nullopt);

  gpu::BuildFacts no_thunk = rocm52;
  no_thunk.kfd = false;
  EXPECT_TRUE(has(gpu::missing(no_thunk, "sdma engine on KFD"), "libhsakmt was not found"));
  EXPECT_TRUE(has(gpu::missing(no_thunk, "sdma engines="), "no KFD queues"));
  EXPECT_TRUE(has(gpu::missing(no_thunk, "sdma submit=gpu"), "no KFD queues"));
  EXPECT_TRUE(has(gpu::missing(gpu::BuildFacts{}, "sdma engine on KFD"), "no HIP"));
}
