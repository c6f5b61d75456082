// The option table of sm and its typed reading (engines/options/sm.hpp).
#include "engines/options/sm.hpp"

#include "engines/options/option_table.hpp"

namespace dmabench {

std::vector<OptionSpec> sm_option_specs() {
  return {OptionSpec{.name = "blocks",
                     .help = "thread blocks per launch, shared by the launch's transfers (auto: 2 per multiprocessor)",
                     .default_value = "auto",
                     .choices = {"auto"},
                     .positive_integer = true},
          OptionSpec{.name = "sms",
                     .help = "SM budget: the copy held to this many thread blocks, so at most this many multiprocessors "
                             "(all: one per multiprocessor; auto: no budget, the grid the blocks option gives)",
                     .default_value = "auto",
                     .choices = {"auto", "all"},
                     .positive_integer = true,
                     .max_integer = 65535},
          OptionSpec{.name = "coalesce",
                     .help = "block layouts: false = one job per block; true = runs of adjacent blocks whose source and "
                             "destination both continue the previous block's are one job each (as ce's coalesce)",
                     .default_value = false,
                     .choices = {false, true}}};
}

SmOptions SmOptions::from(const Options& o) {
  const nlohmann::json& sms = option_value(o, "sm", "sms");
  return SmOptions{.blocks = option_count(o, "sm", "blocks", "auto"),
                   .sms = sms.is_string() && sms.get<std::string>() == "all" ? SmOptions::kAllSms
                                                                              : option_count(o, "sm", "sms", "auto"),
                   .coalesce = option_flag(o, "sm", "coalesce")};
}

}  // namespace dmabench
