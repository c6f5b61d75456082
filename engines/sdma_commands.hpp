#pragma once
// How the sdma engine turns a plan into SDMA commands, one layout per DMA-Latte variant
// (SDMA-FACTS.md §3.1-3.2). A command is what one queue runs between two completions: its data
// packets, then one sync packet (added at submission, with the operation's completion word), and
// with a pre-launch trigger one POLL_REGMEM before them. Every copy is issued by the issuing rank's
// engine (a push). Pure: no queue, no memory; the engine resolves buffer addresses through `Where`.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "amd/sdma/packets.hpp"
#include "core/why_not.hpp"
#include "core/plan.hpp"
#include "engines/options/sdma.hpp"

namespace dmabench::sdma_commands {

// One unit of data movement: a copy (1 transfer), a broadcast (2 transfers of one source) or a swap
// (a transfer and its mirror), issued by `rank`, on SDMA engine `engine` of the rank's device.
struct Unit {
  enum Kind { copy, broadcast, swap } kind = copy;
  int rank = 0, engine = 0;
  std::vector<Transfer> transfers;  // 1 or 2
};

// What the engine choice needs to know about the machine (amd::sdma::Platform, by device id).
struct EngineChoice {
  std::function<int(int src_device, int dst_device)> recommended;  // -1: none
  std::function<int(int device)> engine_count, first_xgmi;
  std::function<std::string(int device)> gfx_target = {};  // "gfx942", or "" when unknown
  // Why an engine cannot take a queue (beyond the count, fused off), or nullopt; unset: engine_count bounds it.
  std::function<WhyNot(int device, int engine)> unusable = {};
};

// The units of one operation in the variant's order, or why the variant cannot run this plan.
Maybe<std::vector<Unit>> plan_units(const Plan& plan, const SdmaOptions& options, const EngineChoice& choice);

// Commands: pcpy gives one command per unit; b2b groups a rank's units `ways` at a time (a group runs
// on the engine of its first unit).
struct Command {
  int rank = 0, engine = 0;
  std::vector<Unit> units;
};
std::vector<Command> schedule(const std::vector<Unit>& units, const SdmaOptions& options);

// Buffer addresses of one buffer set: (rank, offset) in the rank's source / destination.
struct Where {
  std::function<std::uint64_t(int rank, std::uint64_t offset)> src, dst;
};
// The data packets of a command, every copy split into packets of at most options.max_packet_bytes.
std::vector<amd::sdma::Packet> data_packets(const Command& command, const SdmaOptions& options, const Where& where);

}  // namespace dmabench::sdma_commands
