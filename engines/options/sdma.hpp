#pragma once
// The options of sdma (AMD SDMA queues driven with raw packets, as DMA-Latte does; the software SDMA
// engine on the host backend): its table and the typed options engines/sdma.cpp runs with. Compiled
// in every build.
#include <cstdint>
#include <string>
#include <vector>

#include "engines/options/option.hpp"

namespace dmabench {

enum class SdmaSchedule { pcpy, b2b };
enum class SdmaPacketKind { linear, broadcast, swap };
enum class SdmaTrigger { enqueue, prelaunch, gpu_flag };
enum class SdmaSync { atomic, fence, auto_ };  // auto_: atomic where the GPU has PCIe 64-bit atomics, else fence
enum class SdmaSubmit { host, gpu };
enum class SdmaEngines { recommended, round_robin, map };

struct SdmaOptions {
  SdmaSchedule schedule;
  int ways;                       // b2b: copy packets per command
  SdmaPacketKind packet;
  SdmaTrigger trigger;
  bool word_per_command;          // prelaunch / gpu-flag: one trigger word per command (else one per operation)
  SdmaSync sync;
  SdmaSubmit submit;
  SdmaEngines engines;
  std::string map_file;           // SdmaEngines::map
  std::uint64_t max_packet_bytes; // bytes per copy / broadcast / swap packet
  std::uint64_t swap_alignment;   // swap blocks and offsets must be multiples of it (1: sizes unchecked; addresses
                                  // stay 64-byte aligned, their bits 5:0 are reserved in the SWAP packet)

  // From validated options (every option of the table present); throws std::logic_error otherwise.
  static SdmaOptions from(const Options& options);
};

std::vector<OptionSpec> sdma_option_specs();

}  // namespace dmabench
