#pragma once
// The options of sm (the GPU-core copy kernel): its table and the typed options engines/sm.cpp runs
// with. Compiled in every build, so that the registry describes sm where it is not built too.
#include <vector>

#include "engines/options/option.hpp"

namespace dmabench {

struct SmOptions {
  static constexpr int kAllSms = -1;
  int blocks;  // thread blocks per launch; 0: auto
  int sms;     // SM budget: thread blocks of a one-dimensional grid; 0: none (auto); kAllSms: every multiprocessor
  bool coalesce;  // adjacent blocks (source and destination both continuing the previous one) as one job

  // From validated options (every option of the table present); throws std::logic_error otherwise.
  static SmOptions from(const Options& options);
};

std::vector<OptionSpec> sm_option_specs();

}  // namespace dmabench
