// The build-feature table (gpu/features.cpp), which needs no GPU: what every feature needs, and the
// skip reason of a feature a build lacks.
#include <string>

#include <gtest/gtest.h>

#include "gpu/features.hpp"

using namespace dmabench;

TEST(AmdFeatures, EveryFeatureSaysWhatItNeeds) {
  gpu::BuildFacts rocm52;  // Debian 12's ROCm 5.2.3
  rocm52.hip = rocm52.hsa = true;
  rocm52.hip_version = "5.2";
  rocm52.hsa_interface = "1.0";
  for (const auto& f : gpu::amd_features(rocm52)) {
    EXPECT_FALSE(f.needs.empty()) << f.name;
    EXPECT_FALSE(f.note.empty()) << f.name;
  }
  EXPECT_EQ(gpu::missing(rocm52, "hsa engine, engines=runtime"), "");
  const std::string on_engine = gpu::missing(rocm52, "hsa engines=preferred");
  EXPECT_NE(on_engine.find("needs ROCm >= 5.7"), std::string::npos) << on_engine;
  EXPECT_NE(on_engine.find("HSA AMD interface 1.0"), std::string::npos) << on_engine;
  EXPECT_NE(gpu::missing(rocm52, "ce-batch").find("HIP >= 7.1"), std::string::npos);
  EXPECT_NE(gpu::missing(rocm52, "ce SDMA-only").find("hipMemcpyDefault"), std::string::npos);
  EXPECT_NE(gpu::missing(rocm52, "nccl engine on AMD").find("RCCL"), std::string::npos);

  gpu::BuildFacts rocm7 = rocm52;
  rocm7.hsa_copy_on_engine = rocm7.hip_nocu = rocm7.hip_wall_clock_rate = rocm7.hip_batch = true;
  EXPECT_EQ(gpu::missing(rocm7, "hsa engines=preferred"), "");
  EXPECT_EQ(gpu::missing(rocm7, "ce-batch"), "");
  EXPECT_EQ(gpu::missing(rocm7, "ce SDMA-only"), "");
  EXPECT_EQ(gpu::missing(rocm7, "trigger gpu-flag"), "");
  EXPECT_NE(gpu::missing(gpu::BuildFacts{}, "hip backend").find("no HIP"), std::string::npos);
}
