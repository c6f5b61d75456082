#pragma once
// SDMA packets as DMA-Latte writes them (gfx9 / SDMA 4.x layouts; ../shared/SDMA-FACTS.md §1, from
// the Linux driver's vega10_sdma_pkt_open.h, ROCr's sdma_registers.h and the artifact): typed
// fields in, little-endian dwords out, and the reverse for the software engine and packet dumps.
// No vendor header: compiled and unit-tested in every build.
//
// Every encoder checks its field limits and throws PacketError naming the packet, the field and
// the limit; splitting a large copy into packets is the caller's job (copy_chunks below).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace dmabench::amd::sdma {

using Dwords = std::vector<std::uint32_t>;

struct PacketError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// ---- opcodes (DW0 bits 7:0) and sub-opcodes (DW0 bits 15:8) -------------------------------------
enum class Op : std::uint8_t {
  nop = 0, copy = 1, write = 2, fence = 5, trap = 6, poll_regmem = 8, atomic = 10, const_fill = 11, timestamp = 13,
};
inline constexpr std::uint8_t kSubCopyLinear = 0;      // broadcast = linear with DW0 bit 27
inline constexpr std::uint8_t kSubCopySwap = 9;        // ROCr's SDMA_PKT_COPY_LINEAR_SWAP; gfx94x/95x only
inline constexpr std::uint8_t kSubTimestampSet = 0;
inline constexpr std::uint8_t kSubTimestampGet = 1;
inline constexpr std::uint8_t kSubTimestampGetGlobal = 2;
inline constexpr unsigned kBroadcastBit = 27;          // COPY_LINEAR DW0
inline constexpr std::uint8_t kAtomicAdd64 = 47;       // ATOMIC DW0 bits 31:25

// Size limits of the count fields (bytes per packet).
inline constexpr std::uint64_t kMaxCount30Bytes = std::uint64_t{1} << 30;  // 30-bit count_ext (artifact, ROCr swap)
inline constexpr std::uint64_t kMaxCount22Bytes = std::uint64_t{1} << 22;  // 22-bit count (Linux header)
inline constexpr std::uint64_t kKernelMaxCopyBytes = 0x400000;             // sdma_v4_4_2 copy_max_bytes
inline constexpr std::uint64_t kBroadcastResidue = 32;  // dst1 % 32 == dst2 % 32 (ROCr kDstAlignMask_)
inline constexpr std::uint64_t kSwapAlignment = 64;     // ROCr: gfx94x/95x swap addresses 64-byte aligned
inline constexpr std::uint64_t kMaxSwapBytes = 0x3FFFFFE0;
// The largest packets the sources issue on gfx942. COPY_LINEAR: ROCr's GpuAgent::CreateBlitSdma overrides its
// linear copy size to 0x3FFFFFFF bytes for gfx9 minor >= 4 (ROCm/rocm-systems projects/rocr-runtime
// runtime/hsa-runtime/core/runtime/amd_gpu_agent.cpp, copy_size_overrides). Broadcast: ROCr's
// SDMA_PKT_COPY_LINEAR_BROADCAST::kMaxSize_ 0x3FFFE0 (sdma_registers.h); the kernel has no broadcast.
inline constexpr std::uint64_t kMaxCopyBytesGfx94 = 0x3FFFFFFF;
inline constexpr std::uint64_t kMaxBroadcastBytes = 0x3FFFE0;

// POLL_REGMEM compare functions (gem5 pollRegMemFunc): (value & mask) FUNC reference.
enum class PollFunc : std::uint8_t { always = 0, less = 1, less_equal = 2, equal = 3, not_equal = 4, greater_equal = 5, greater = 6 };
// Whether (value & mask) FUNC reference holds.
bool poll_satisfied(PollFunc func, std::uint32_t value, std::uint32_t mask, std::uint32_t reference);

// ---- the packets --------------------------------------------------------------------------------
// bytes: the number of bytes moved (the count field holds bytes - 1); 1 <= bytes <= max below.
struct CopyLinear {      // 7 dwords; bytes <= 2^30 (30-bit count)
  std::uint64_t src = 0, dst = 0, bytes = 0;
};
struct CopyBroadcast {   // 9 dwords; bytes <= 2^30; dst1 % 32 == dst2 % 32
  std::uint64_t src = 0, dst1 = 0, dst2 = 0, bytes = 0;
};
// Swap: 7 dwords; bytes <= 2^30 - 32 (ROCr kMaxSize_ 0x3FFFFFE0). ROCr's layout reserves address bits 5:0
// (DW3, DW5) and requires 64-byte alignment on gfx94x/95x; the artifact writes full low address dwords
// without checking. The encoder refuses an address with bits 5:0 set (they would land in reserved bits);
// the size is not checked here (the sdma engine's `swap_alignment` option does).
struct Swap {
  std::uint64_t a = 0, b = 0, bytes = 0;
};
struct PollRegMem {      // 6 dwords; mem_poll=1 (memory) unless `memory` is false; addr 4-byte aligned
  std::uint64_t addr = 0;
  std::uint32_t reference = 0, mask = 0xFFFFFFFFu;
  PollFunc func = PollFunc::equal;
  std::uint16_t interval = 4;        // DW5 bits 15:0
  std::uint16_t retry_count = 0xFFF; // DW5 bits 27:16 (12 bits; 0xFFF = forever)
  bool memory = true;                // DW0 bit 31
  bool hdp_flush = false;            // DW0 bit 26
};
struct AtomicAdd64 {     // 8 dwords; addr 8-byte aligned; value added (two's complement: ~0 decrements)
  std::uint64_t addr = 0, value = 0;
};
struct Fence {           // 4 dwords; addr 4-byte aligned
  std::uint64_t addr = 0;
  std::uint32_t data = 0;
};
struct Trap {            // 2 dwords; context < 2^28
  std::uint32_t context = 0;
};
struct TimestampGlobal { // 3 dwords; addr 8-byte aligned (producers use 32)
  std::uint64_t addr = 0;
};
struct ConstFill {       // 5 dwords; dword mode (fillsize 2): dst and bytes 4-aligned; bytes <= 2^30
  std::uint64_t dst = 0, bytes = 0;
  std::uint32_t data = 0;
  bool dwords = true;
};
struct Nop {             // 1 + skip dwords (skip < 2^14 in the header; encoded skipped dwords are zero, decode ignores them)
  std::uint32_t skip = 0;
};

using Packet = std::variant<CopyLinear, CopyBroadcast, Swap, PollRegMem, AtomicAdd64, Fence, Trap, TimestampGlobal,
                            ConstFill, Nop>;

// Appends the packet's dwords to `out`; throws PacketError when a field is out of its limits.
void encode(const Packet& packet, Dwords& out);
Dwords encode(const Packet& packet);
// The packet's size in dwords.
std::size_t dword_count(const Packet& packet);
// Short name ("COPY_LINEAR", "BROADCAST", "SWAP", "POLL_REGMEM", "ATOMIC_ADD64", "FENCE", "TRAP",
// "TIMESTAMP_GLOBAL", "CONST_FILL", "NOP").
const char* packet_name(const Packet& packet);

// ---- decoding (the software engine, packet dumps) ------------------------------------------------
struct Decoded {
  Packet packet;
  std::size_t dwords = 0;  // its size
};
// Decodes the packet starting at p[0], with `available` dwords readable from p. Throws PacketError
// ("unknown opcode 0x.. sub-op 0x..", "truncated ...", an atomic opcode other than ADD64, a timestamp
// sub-op other than GET_GLOBAL) for anything the software engine does not implement, including any bit
// the encoders never set (endian swap, tmz, loop, reserved bits) and fields out of the encoders' limits.
Decoded decode(const std::uint32_t* p, std::size_t available);

// ---- splitting ----------------------------------------------------------------------------------
// [offset, bytes] chunks of at most `max_bytes` covering `bytes`, in order (none for 0 bytes).
// Throws PacketError for max_bytes 0.
struct Chunk {
  std::uint64_t offset = 0, bytes = 0;
};
std::vector<Chunk> copy_chunks(std::uint64_t bytes, std::uint64_t max_bytes);

}  // namespace dmabench::amd::sdma
