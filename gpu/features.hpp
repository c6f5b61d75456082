#pragma once
// The build-feature table: what each vendor feature needs and whether this build has it (for
// --features and skip reasons). Vendor-neutral and free of vendor headers: the compile-time facts
// come in as a BuildFacts, so the text is testable in every build.
#include <string>
#include <vector>

namespace dmabench::gpu {

struct Feature {
  std::string name;    // e.g. "hsa engines=preferred"
  std::string needs;   // e.g. "ROCm >= 5.7 (hsa_amd_memory_get_preferred_copy_engine)"
  bool built = false;  // this build has it
  std::string note;    // why not, or how it is done
};
struct BuildFacts {  // what configure found (compile-time macros), so the text is testable
  bool hip = false, hsa = false, rccl = false;
  bool hip_nocu = false, hip_batch = false, hip_wall_clock_rate = false;
  bool hsa_copy_on_engine = false, hsa_batch_copy = false, hsa_sdma_info = false;
  std::string hip_version, hsa_interface;  // "5.2", "1.0"
};
BuildFacts this_build();
std::vector<Feature> amd_features(const BuildFacts& b);
// "needs X; this build has Y" for a feature this build lacks, or "" when it has it.
std::string missing(const BuildFacts& b, const std::string& feature);

}  // namespace dmabench::gpu
