#pragma once
// The options of nccl (NCCL / RCCL): its table and the typed options engines/nccl.cpp runs with.
// Compiled in every build, so that the registry describes nccl where it is not built too.
#include <vector>

#include "engines/options/option.hpp"

namespace dmabench {

struct NcclOptions {
  bool graph;     // the operation captured once into a graph per GPU
  bool cta_zero;  // cta_policy zero: NCCL's copy-engine collectives

  // From validated options (every option of the table present); throws std::logic_error otherwise.
  static NcclOptions from(const Options& options);
};

std::vector<OptionSpec> nccl_option_specs();

}  // namespace dmabench
