// The option table of hsa and its typed reading (engines/options/hsa.hpp).
#include "engines/options/hsa.hpp"

#include "engines/options/option_table.hpp"

namespace dmabench {
namespace {

constexpr Named<bool> kSchedules[] = {{"pcpy", true}, {"b2b", false}};         // pcpy
constexpr Named<bool> kTriggers[] = {{"enqueue", false}, {"host-flag", true}};  // host_flag
constexpr Named<HsaPacket> kPackets[] = {
    {"linear", HsaPacket::linear}, {"broadcast", HsaPacket::broadcast}, {"swap", HsaPacket::swap}};

// The problem with a map:FILE file, or nullopt.
WhyNot check_engine_map(const nlohmann::json& v) { return v.is_string() ? amd::map_option_problem(v.get<std::string>()) : std::nullopt; }

}  // namespace

std::vector<OptionSpec> hsa_option_specs() {
  return {
      OptionSpec{.name = "engines",
                 .help = "which SDMA engine copies: runtime (hsa_amd_memory_async_copy, the runtime picks), preferred "
                         "(hsa_amd_memory_get_preferred_copy_engine per source/destination pair), round-robin (a GPU's "
                         "copies over its SDMA engines in turn), map:FILE (src,engine,dst lines); all but runtime go "
                         "through hsa_amd_memory_async_copy_on_engine; copies from or to host memory stay on the GPU's "
                         "host-facing engines (round-robin over them; otherwise the runtime's own host blits)",
                 .default_value = "runtime",
                 .choices = {"runtime", "preferred", "round-robin"},
                 .prefix = "map:",
                 .prefix_help = "map:FILE",
                 .check = check_engine_map},
      OptionSpec{.name = "schedule",
                 .help = "pcpy: every copy its own completion signal; b2b: a GPU's copies share one completion signal "
                         "(each copy decrements it)",
                 .default_value = "b2b",
                 .choices = names_of(kSchedules)},
      OptionSpec{.name = "trigger",
                 .help = "enqueue: copies posted when the operation starts; host-flag: posted ahead (untimed) behind a "
                         "dependency signal the host releases with one store",
                 .default_value = "enqueue",
                 .choices = names_of(kTriggers)},
      OptionSpec{.name = "packet",
                 .help = "linear: one copy per transfer; broadcast: one command writes two destinations; swap: a "
                         "pairwise exchange in one command (both through hsa_amd_memory_async_batch_copy)",
                 .default_value = "linear",
                 .choices = names_of(kPackets)},
  };
}

HsaOptions HsaOptions::from(const Options& o) {
  const nlohmann::json& engines = option_value(o, "hsa", "engines");
  const auto selection = engines.is_string() ? amd::parse_selection(engines.get<std::string>()) : std::nullopt;
  if (!selection) bad_option("hsa", "engines", fmt::format("is {}, not an engine selection", engines.dump()));
  return HsaOptions{.selection = *selection,
                    .pcpy = option_named(o, "hsa", "schedule", kSchedules),
                    .host_flag = option_named(o, "hsa", "trigger", kTriggers),
                    .packet = option_named(o, "hsa", "packet", kPackets)};
}

}  // namespace dmabench
