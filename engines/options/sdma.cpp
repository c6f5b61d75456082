// The option table of sdma and its typed reading (engines/options/sdma.hpp).
#include "engines/options/sdma.hpp"

#include "amd/engine_map.hpp"
#include "amd/sdma/packets.hpp"
#include "engines/options/option_table.hpp"

namespace dmabench {
namespace {

constexpr Named<SdmaSchedule> kSchedules[] = {{"pcpy", SdmaSchedule::pcpy}, {"b2b", SdmaSchedule::b2b}};
constexpr Named<SdmaPacketKind> kPackets[] = {
    {"linear", SdmaPacketKind::linear}, {"broadcast", SdmaPacketKind::broadcast}, {"swap", SdmaPacketKind::swap}};
constexpr Named<SdmaTrigger> kTriggers[] = {
    {"enqueue", SdmaTrigger::enqueue}, {"prelaunch", SdmaTrigger::prelaunch}, {"gpu-flag", SdmaTrigger::gpu_flag}};
constexpr Named<bool> kTriggerWords[] = {{"shared", false}, {"per-command", true}};
constexpr Named<SdmaSync> kSyncs[] = {{"auto", SdmaSync::auto_}, {"atomic", SdmaSync::atomic}, {"fence", SdmaSync::fence}};
constexpr Named<SdmaSubmit> kSubmits[] = {{"host", SdmaSubmit::host}, {"gpu", SdmaSubmit::gpu}};
constexpr Named<SdmaEngines> kEngines[] = {{"recommended", SdmaEngines::recommended}, {"round-robin", SdmaEngines::round_robin}};
constexpr Named<std::uint64_t> kSwapAlignments[] = {{"64", 64}, {"none", 1}};

WhyNot check_map(const nlohmann::json& v) { return v.is_string() ? amd::map_option_problem(v.get<std::string>()) : std::nullopt; }

}  // namespace

std::vector<OptionSpec> sdma_option_specs() {
  return {
      OptionSpec{.name = "schedule",
                 .help = "pcpy: one command (data packets, then one completion) per copy; b2b: `ways` copies back to back "
                         "per command with a single completion",
                 .default_value = "pcpy",
                 .choices = names_of(kSchedules)},
      OptionSpec{.name = "ways",
                 .help = "b2b: copies per command (the artifact's B2B_WAYS)",
                 .default_value = 7,
                 .choices = {},
                 .positive_integer = true,
                 .max_integer = 4096},
      OptionSpec{.name = "packet",
                 .help = "linear: COPY_LINEAR per copy; broadcast: one 2-destination COPY_LINEAR for two copies of the same "
                         "source (allgather); swap: one SWAP packet exchanges two blocks in place (alltoall in place)",
                 .default_value = "linear",
                 .choices = names_of(kPackets)},
      OptionSpec{.name = "trigger",
                 .help = "enqueue: packets written and doorbells rung when the operation starts; prelaunch: everything "
                         "posted ahead (untimed) behind a POLL_REGMEM per command that one host store releases; gpu-flag: "
                         "the same polls released by a store from the GPU (GPU-initiated signaling)",
                 .default_value = "enqueue",
                 .choices = names_of(kTriggers)},
      OptionSpec{.name = "trigger_words",
                 .help = "prelaunch / gpu-flag: shared (one trigger word per operation, one store) or per-command (one "
                         "word per command, the artifact's MULTI_SIGNAL=1)",
                 .default_value = "shared",
                 .choices = names_of(kTriggerWords)},
      OptionSpec{.name = "sync",
                 .help = "completion per command: atomic (ATOMIC ADD64 -1 on a 64-bit word in system memory, the artifact's "
                         "SYNC_TYPE=2; needs PCIe 64-bit atomics on the GPU's link to the CPU, else the case is skipped), "
                         "fence (FENCE writes 0, SYNC_TYPE=0), or auto: atomic where the issuing GPU has those atomics and "
                         "fence where it has not, as ROCr chooses its own SDMA completion (--features says which applies)",
                 .default_value = "auto",
                 .choices = names_of(kSyncs)},
      OptionSpec{.name = "submit",
                 .help = "host: the host writes the packets and rings the doorbells; gpu: a GPU kernel does (GPU-initiated "
                         "submission; with trigger=enqueue only)",
                 .default_value = "host",
                 .choices = names_of(kSubmits)},
      OptionSpec{.name = "engines",
                 .help = "the SDMA engine of each command: recommended (the driver's per-link recommended engine), "
                         "round-robin (a GPU's commands over its xGMI engines in turn), map:FILE (src,engine,dst lines, the "
                         "hsa engine's format); a GPU's copy to itself uses its first xGMI engine unless the map names one; copies "
                         "from or to host memory use the GPU's host-facing (PCIe) engines under every value",
                 .default_value = "recommended",
                 .choices = names_of(kEngines),
                 .prefix = "map:",
                 .prefix_help = "map:FILE",
                 .check = check_map},
      OptionSpec{.name = "max_packet_bytes",
                 .help = "largest copy / broadcast / swap packet; larger copies are split. Default 4 MiB (the Linux driver's "
                         "copy_max_bytes on SDMA 4.4.2); at most 1073741823 (0x3FFFFFFF), ROCr's largest linear copy on "
                         "gfx94x (the artifact's 1 GiB is one byte more, and unconfirmed on gfx942). Broadcast packets are "
                         "split at ROCr's 4194272 (0x3FFFE0) and swap packets at 0x3FFFFFE0 whatever this says",
                 .default_value = 4194304,
                 .choices = {},
                 .positive_integer = true,
                 .max_integer = static_cast<long long>(amd::sdma::kMaxCopyBytesGfx94)},
      OptionSpec{.name = "swap_alignment",
                 .help = "swap: \"64\" (ROCr's rule on gfx94x/95x: blocks and offsets 64-byte aligned; other sizes are "
                         "skipped) or \"none\" (block sizes unchecked, as the artifact does; addresses must still be 64-byte "
                         "aligned, since the SWAP packet reserves their bits 5:0, so a block at another address is skipped)",
                 .default_value = "64",
                 .choices = names_of(kSwapAlignments)},
  };
}

SdmaOptions SdmaOptions::from(const Options& o) {
  SdmaOptions s{};
  s.schedule = option_named(o, "sdma", "schedule", kSchedules);
  s.ways = option_count(o, "sdma", "ways", "");
  s.packet = option_named(o, "sdma", "packet", kPackets);
  s.trigger = option_named(o, "sdma", "trigger", kTriggers);
  s.word_per_command = option_named(o, "sdma", "trigger_words", kTriggerWords);
  s.sync = option_named(o, "sdma", "sync", kSyncs);
  s.submit = option_named(o, "sdma", "submit", kSubmits);
  const nlohmann::json& engines = option_value(o, "sdma", "engines");
  if (engines.is_string() && engines.get<std::string>().rfind("map:", 0) == 0 && engines.get<std::string>().size() > 4) {
    s.engines = SdmaEngines::map;
    s.map_file = engines.get<std::string>().substr(4);
  } else {
    s.engines = option_named(o, "sdma", "engines", kEngines);
  }
  s.max_packet_bytes = static_cast<std::uint64_t>(option_count(o, "sdma", "max_packet_bytes", ""));
  s.swap_alignment = option_named(o, "sdma", "swap_alignment", kSwapAlignments);
  return s;
}

}  // namespace dmabench
