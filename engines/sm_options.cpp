// The option table of sm and its typed reading (engines/sm_options.hpp).
#include "engines/sm_options.hpp"

#include "engines/option_table.hpp"

namespace dmabench {

std::vector<OptionSpec> sm_option_specs() {
  return {OptionSpec{.name = "blocks",
                     .help = "thread blocks per launch, shared by the launch's transfers (auto: 2 per multiprocessor)",
                     .default_value = "auto",
                     .choices = {"auto"},
                     .positive_integer = true}};
}

SmOptions SmOptions::from(const Options& o) { return SmOptions{.blocks = option_count(o, "sm", "blocks", "auto")}; }

}  // namespace dmabench
