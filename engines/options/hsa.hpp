#pragma once
// The options of hsa (AMD: HSA copies on the SDMA engines): its table and the typed options
// engines/hsa.cpp runs with. Compiled in every build, so that the registry describes hsa where it is
// not built too.
#include <vector>

#include "engines/options/option.hpp"
#include "amd/engine_map.hpp"

namespace dmabench {

enum class HsaPacket { linear, broadcast, swap };

struct HsaOptions {
  amd::Selection selection;  // engines
  bool pcpy;                  // schedule pcpy (false: b2b)
  bool host_flag;             // trigger host-flag (false: enqueue)
  HsaPacket packet;

  // From validated options (every option of the table present); throws std::logic_error otherwise.
  static HsaOptions from(const Options& options);
};

std::vector<OptionSpec> hsa_option_specs();

}  // namespace dmabench
