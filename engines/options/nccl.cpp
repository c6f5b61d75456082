// The option table of nccl and its typed reading (engines/options/nccl.hpp).
#include "engines/options/nccl.hpp"

#include "engines/options/option_table.hpp"

namespace dmabench {
namespace {

constexpr Named<bool> kCtaPolicies[] = {{"default", false}, {"zero", true}};  // cta_zero

}  // namespace

std::vector<OptionSpec> nccl_option_specs() {
  return {OptionSpec{.name = "graph",
                     .help = "the operation captured once into a CUDA / HIP graph per GPU, launched per operation",
                     .default_value = false,
                     .choices = {false, true}},
          OptionSpec{.name = "cta_policy",
                     .help = "zero: NCCL_CTA_POLICY_ZERO with ncclMemAlloc buffers registered as symmetric windows "
                             "(NCCL >= 2.28's copy-engine collectives; allgather and alltoall)",
                     .default_value = "default",
                     .choices = names_of(kCtaPolicies)}};
}

NcclOptions NcclOptions::from(const Options& o) {
  return NcclOptions{.graph = option_flag(o, "nccl", "graph"), .cta_zero = option_named(o, "nccl", "cta_policy", kCtaPolicies)};
}

}  // namespace dmabench
