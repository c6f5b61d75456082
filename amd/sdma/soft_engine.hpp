#pragma once
// The software SDMA engine: a Platform whose queues are CPU threads executing the packets of their
// rings with the semantics of SDMA-FACTS.md §5 — strictly in order per queue, queues concurrent;
// copies as memmove, FENCE and TIMESTAMP stores with release order, ATOMIC as a real 64-bit atomic
// add, POLL_REGMEM re-reading (value & mask) FUNC reference with acquire loads (interval in µs,
// retry_count 0xFFF forever), TRAP counted; an unknown or malformed packet stops the queue and is
// reported by Queue::fault() with its ring offset. TIMESTAMP and clock_counters() read one clock.
//
// Its times are CPU-thread times, not hardware times (Platform::hardware_times() is false).
// No vendor header: it runs in every build (the sdma engine on the host backend, and CI).
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "amd/sdma/platform.hpp"

namespace dmabench::amd::sdma {

struct SoftSettings {
  int devices = 64;                  // ranks the host backend may use
  int engines = 16;                  // per device, as MI300X in SPX mode: 2 PCIe + 14 xGMI
  int first_xgmi_engine = 2;
  double timestamp_hz = 100e6;       // the software GPU clock's rate (TIMESTAMP, clock_counters)
  // Fault injection for tests of the whole program: every queue's first submission gets an unknown
  // opcode (0x03, sub-op 0xff) in place of its first dword, so the case fails as it would on a bad
  // packet. make_soft_platform() sets it from the environment: DMABENCH_SOFT_SDMA_FAULT=unknown-opcode.
  bool plant_unknown_opcode = false;
  // Fake machines for tests: devices whose link to the CPU has no PCIe 64-bit atomics (their engines fault on an
  // ATOMIC, where hardware would leave the word unchanged), engines counted but fused off (bit e; no queue is
  // made on one), and per-device clocks (rate and counter offset) overriding timestamp_hz.
  std::vector<int> no_host_atomics;
  std::uint32_t fused_engines = 0;
  std::map<int, double> device_timestamp_hz;
  std::map<int, std::uint64_t> device_tick_offset;
};

std::unique_ptr<Platform> make_soft_platform(SoftSettings settings = {});

// The software engine's made-up recommended engine for src -> dst (a fixed spread over the even xGMI
// engines 2..14, like KFD's table for 8 MI300X GPUs, which it does not claim to reproduce).
int soft_recommended_engine(int src, int dst);

}  // namespace dmabench::amd::sdma
