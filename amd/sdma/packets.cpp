// SDMA packet encoders and decoder (layouts: ../shared/SDMA-FACTS.md §1.0–1.10).
//
// Decoding is strict: after reading a packet's fields it re-encodes them and rejects the packet
// when any dword differs, so a packet decodes only if the encoders could have written it (bits the
// software engine does not implement — endian swap, tmz, loop, reserved bits — are errors). Two
// exceptions: a NOP's skipped dwords may hold anything, and a dword-mode CONST_FILL count is read
// as the hardware does (floor(count / 4) + 1 dwords, §1.9), which accepts ROCr's (dwords-1)*4 form.
#include "amd/sdma/packets.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace dmabench::amd::sdma {
namespace {

constexpr std::uint32_t kCount30Mask = 0x3FFFFFFFu;
constexpr std::uint32_t kMaxRetryCount = 0xFFF;
constexpr std::uint32_t kMaxTrapContext = (1u << 28) - 1;
constexpr std::uint32_t kMaxNopSkip = (1u << 14) - 1;
constexpr std::uint32_t kFillSizeByte = 0;
constexpr std::uint32_t kFillSizeDword = 2;

// ---- messages -------------------------------------------------------------------------------------
std::string hex64(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}
std::string hex32(std::uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08" PRIx32, v);
  return buf;
}

[[noreturn]] void fail(const char* packet, const std::string& what) {
  throw PacketError(std::string(packet) + ": " + what);
}

void check_range(const char* packet, const char* field, std::uint64_t value, std::uint64_t lo, std::uint64_t hi) {
  if (value < lo || value > hi)
    fail(packet, std::string(field) + " " + std::to_string(value) + " out of range (" + std::to_string(lo) + " .. " +
                     std::to_string(hi) + ")");
}
void check_bytes(const char* packet, std::uint64_t bytes, std::uint64_t max) {
  check_range(packet, "bytes", bytes, 1, max);
}
void check_aligned(const char* packet, const char* field, std::uint64_t addr, std::uint64_t alignment) {
  if (addr % alignment != 0)
    fail(packet, std::string(field) + " " + hex64(addr) + " is not " + std::to_string(alignment) + "-byte aligned");
}

// ---- dword helpers --------------------------------------------------------------------------------
constexpr std::uint32_t header(Op op, std::uint32_t sub_op = 0, std::uint32_t high_bits = 0) {
  return static_cast<std::uint32_t>(op) | (sub_op << 8) | high_bits;
}
constexpr std::uint32_t lo(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
constexpr std::uint32_t hi(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }
constexpr std::uint64_t join(std::uint32_t low, std::uint32_t high) { return (std::uint64_t{high} << 32) | low; }

// ---- per-packet names, sizes and encoders (each validates before it appends) ----------------------
const char* name_of(const CopyLinear&) { return "COPY_LINEAR"; }
const char* name_of(const CopyBroadcast&) { return "BROADCAST"; }
const char* name_of(const Swap&) { return "SWAP"; }
const char* name_of(const PollRegMem&) { return "POLL_REGMEM"; }
const char* name_of(const AtomicAdd64&) { return "ATOMIC_ADD64"; }
const char* name_of(const Fence&) { return "FENCE"; }
const char* name_of(const Trap&) { return "TRAP"; }
const char* name_of(const TimestampGlobal&) { return "TIMESTAMP_GLOBAL"; }
const char* name_of(const ConstFill&) { return "CONST_FILL"; }
const char* name_of(const Nop&) { return "NOP"; }

std::size_t size_of(const CopyLinear&) { return 7; }
std::size_t size_of(const CopyBroadcast&) { return 9; }
std::size_t size_of(const Swap&) { return 7; }
std::size_t size_of(const PollRegMem&) { return 6; }
std::size_t size_of(const AtomicAdd64&) { return 8; }
std::size_t size_of(const Fence&) { return 4; }
std::size_t size_of(const Trap&) { return 2; }
std::size_t size_of(const TimestampGlobal&) { return 3; }
std::size_t size_of(const ConstFill&) { return 5; }
std::size_t size_of(const Nop& n) { return std::size_t{1} + n.skip; }

void put(const CopyLinear& c, Dwords& out) {
  check_bytes("COPY_LINEAR", c.bytes, kMaxCount30Bytes);
  out.insert(out.end(),
             {header(Op::copy, kSubCopyLinear), lo(c.bytes - 1), 0, lo(c.src), hi(c.src), lo(c.dst), hi(c.dst)});
}

void put(const CopyBroadcast& c, Dwords& out) {
  check_bytes("BROADCAST", c.bytes, kMaxCount30Bytes);
  if (c.dst1 % kBroadcastResidue != c.dst2 % kBroadcastResidue)
    fail("BROADCAST", "dst1 " + hex64(c.dst1) + " and dst2 " + hex64(c.dst2) + " differ mod " +
                          std::to_string(kBroadcastResidue) + " (" + std::to_string(c.dst1 % kBroadcastResidue) +
                          " vs " + std::to_string(c.dst2 % kBroadcastResidue) + ")");
  out.insert(out.end(), {header(Op::copy, kSubCopyLinear, 1u << kBroadcastBit), lo(c.bytes - 1), 0, lo(c.src),
                         hi(c.src), lo(c.dst1), hi(c.dst1), lo(c.dst2), hi(c.dst2)});
}

// ROCr's SDMA_PKT_COPY_LINEAR_SWAP (sdma_registers.h) holds address bits 31:6 in DW3 and DW5 and reserves bits
// 5:0: an address with any of them set would put bits in a reserved field, so the encoder refuses it.
void put(const Swap& s, Dwords& out) {
  check_bytes("SWAP", s.bytes, kMaxSwapBytes);
  if ((s.a | s.b) % kSwapAlignment != 0)
    fail("SWAP", "address " + hex64(s.a % kSwapAlignment ? s.a : s.b) +
                     " is not 64-byte aligned (DW3/DW5 bits 5:0 are reserved in ROCr's SWAP packet)");
  out.insert(out.end(), {header(Op::copy, kSubCopySwap), lo(s.bytes - 1), 0, lo(s.a), hi(s.a), lo(s.b), hi(s.b)});
}

void put(const PollRegMem& p, Dwords& out) {
  check_aligned("POLL_REGMEM", "addr", p.addr, 4);
  check_range("POLL_REGMEM", "func", static_cast<unsigned>(p.func), 0, static_cast<unsigned>(PollFunc::greater));
  check_range("POLL_REGMEM", "retry_count", p.retry_count, 0, kMaxRetryCount);
  const std::uint32_t high = (std::uint32_t{p.hdp_flush} << 26) | (static_cast<std::uint32_t>(p.func) << 28) |
                             (std::uint32_t{p.memory} << 31);
  out.insert(out.end(), {header(Op::poll_regmem, 0, high), lo(p.addr), hi(p.addr), p.reference, p.mask,
                         std::uint32_t{p.interval} | (std::uint32_t{p.retry_count} << 16)});
}

void put(const AtomicAdd64& a, Dwords& out) {
  check_aligned("ATOMIC_ADD64", "addr", a.addr, 8);
  const std::uint32_t high = std::uint32_t{kAtomicAdd64} << 25;  // loop bit 16 = 0
  out.insert(out.end(), {header(Op::atomic, 0, high), lo(a.addr), hi(a.addr), lo(a.value), hi(a.value), 0, 0, 0});
}

void put(const Fence& f, Dwords& out) {
  check_aligned("FENCE", "addr", f.addr, 4);
  out.insert(out.end(), {header(Op::fence), lo(f.addr), hi(f.addr), f.data});
}

void put(const Trap& t, Dwords& out) {
  check_range("TRAP", "context", t.context, 0, kMaxTrapContext);
  out.insert(out.end(), {header(Op::trap), t.context});
}

void put(const TimestampGlobal& t, Dwords& out) {
  check_aligned("TIMESTAMP_GLOBAL", "addr", t.addr, 8);
  out.insert(out.end(), {header(Op::timestamp, kSubTimestampGetGlobal), lo(t.addr) & ~7u, hi(t.addr)});
}

void put(const ConstFill& f, Dwords& out) {
  check_bytes("CONST_FILL", f.bytes, kMaxCount30Bytes);
  if (f.dwords) {
    check_aligned("CONST_FILL", "dword-mode dst", f.dst, 4);
    if (f.bytes % 4 != 0) fail("CONST_FILL", "dword-mode bytes " + std::to_string(f.bytes) + " is not a multiple of 4");
  }
  const std::uint32_t high = (f.dwords ? kFillSizeDword : kFillSizeByte) << 30;
  out.insert(out.end(), {header(Op::const_fill, 0, high), lo(f.dst), hi(f.dst), f.data, lo(f.bytes - 1)});
}

void put(const Nop& n, Dwords& out) {
  check_range("NOP", "skip", n.skip, 0, kMaxNopSkip);
  out.push_back(header(Op::nop, 0, n.skip << 16));
  out.insert(out.end(), n.skip, 0u);
}

// ---- decoding -------------------------------------------------------------------------------------
[[noreturn]] void unknown(std::uint32_t op, std::uint32_t sub_op) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "unknown opcode 0x%02" PRIx32 " sub-op 0x%02" PRIx32, op, sub_op);
  throw PacketError(buf);
}

void need(const char* packet, std::size_t dwords, std::size_t available) {
  if (available < dwords)
    throw PacketError(std::string("truncated: ") + packet + " needs " + std::to_string(dwords) + " dwords, " +
                      std::to_string(available) + " available");
}

std::uint64_t count30_bytes(std::uint32_t count) { return std::uint64_t{count & kCount30Mask} + 1; }

Decoded decode_copy(const std::uint32_t* p, std::size_t available, std::uint32_t sub_op) {
  if (sub_op == kSubCopySwap) {
    need("SWAP", 7, available);
    return {Swap{join(p[3], p[4]), join(p[5], p[6]), count30_bytes(p[1])}, 7};
  }
  if (sub_op != kSubCopyLinear) unknown(static_cast<std::uint32_t>(Op::copy), sub_op);
  if (p[0] & (1u << kBroadcastBit)) {
    need("BROADCAST", 9, available);
    return {CopyBroadcast{join(p[3], p[4]), join(p[5], p[6]), join(p[7], p[8]), count30_bytes(p[1])}, 9};
  }
  need("COPY_LINEAR", 7, available);
  return {CopyLinear{join(p[3], p[4]), join(p[5], p[6]), count30_bytes(p[1])}, 7};
}

Decoded decode_poll(const std::uint32_t* p, std::size_t available) {
  need("POLL_REGMEM", 6, available);
  const std::uint32_t func = (p[0] >> 28) & 7;
  if (func > static_cast<std::uint32_t>(PollFunc::greater))
    fail("POLL_REGMEM", "func " + std::to_string(func) + " is not a compare function (0 .. 6)");
  PollRegMem r;
  r.addr = join(p[1], p[2]);
  r.reference = p[3];
  r.mask = p[4];
  r.func = static_cast<PollFunc>(func);
  r.interval = static_cast<std::uint16_t>(p[5] & 0xFFFF);
  r.retry_count = static_cast<std::uint16_t>((p[5] >> 16) & kMaxRetryCount);
  r.memory = (p[0] >> 31) & 1;
  r.hdp_flush = (p[0] >> 26) & 1;
  return {r, 6};
}

Decoded decode_atomic(const std::uint32_t* p, std::size_t available) {
  need("ATOMIC", 8, available);
  const std::uint32_t atomic_op = (p[0] >> 25) & 0x7F;
  if (atomic_op != kAtomicAdd64)
    fail("ATOMIC",
         "atomic opcode " + std::to_string(atomic_op) + " is not ADD64 (" + std::to_string(kAtomicAdd64) + ")");
  return {AtomicAdd64{join(p[1], p[2]), join(p[3], p[4])}, 8};
}

Decoded decode_fill(const std::uint32_t* p, std::size_t available) {
  need("CONST_FILL", 5, available);
  const std::uint32_t fillsize = p[0] >> 30;
  if (fillsize != kFillSizeByte && fillsize != kFillSizeDword)
    fail("CONST_FILL", "fillsize " + std::to_string(fillsize) + " is neither 0 (byte) nor 2 (dword)");
  const std::uint64_t count = p[4] & kCount30Mask;
  const bool dwords = fillsize == kFillSizeDword;
  const std::uint64_t bytes = dwords ? (count / 4 + 1) * 4 : count + 1;  // dword mode: floor(count/4)+1 dwords
  return {ConstFill{join(p[1], p[2]), bytes, p[3], dwords}, 5};
}

Decoded decode_fields(const std::uint32_t* p, std::size_t available) {
  const std::uint32_t op = p[0] & 0xFF, sub_op = (p[0] >> 8) & 0xFF;
  if (op == static_cast<std::uint32_t>(Op::copy)) return decode_copy(p, available, sub_op);
  if (op == static_cast<std::uint32_t>(Op::timestamp)) {
    if (sub_op != kSubTimestampGetGlobal)
      fail("TIMESTAMP", "sub-op " + std::to_string(sub_op) + " is not GET_GLOBAL (" +
                            std::to_string(kSubTimestampGetGlobal) + ")");
    need("TIMESTAMP_GLOBAL", 3, available);
    return {TimestampGlobal{join(p[1] & ~7u, p[2])}, 3};
  }
  if (sub_op != 0) unknown(op, sub_op);
  switch (static_cast<Op>(op)) {
    case Op::nop: {
      const std::uint32_t skip = (p[0] >> 16) & kMaxNopSkip;
      need("NOP", std::size_t{1} + skip, available);
      return {Nop{skip}, std::size_t{1} + skip};
    }
    case Op::fence:
      need("FENCE", 4, available);
      return {Fence{join(p[1], p[2]), p[3]}, 4};
    case Op::trap:
      need("TRAP", 2, available);
      return {Trap{p[1]}, 2};
    case Op::poll_regmem: return decode_poll(p, available);
    case Op::atomic: return decode_atomic(p, available);
    case Op::const_fill: return decode_fill(p, available);
    default: unknown(op, sub_op);
  }
}

// Rejects the packet unless re-encoding its fields gives back the input dwords (see the top).
void check_canonical(const Decoded& d, const std::uint32_t* p) {
  const Dwords canonical = encode(d.packet);  // throws for fields out of their limits
  const bool is_nop = std::holds_alternative<Nop>(d.packet);
  const auto* fill = std::get_if<ConstFill>(&d.packet);
  const std::size_t compared = is_nop ? 1 : canonical.size();
  for (std::size_t i = 0; i < compared; ++i) {
    const std::uint32_t input = (fill && fill->dwords && i == 4) ? (p[i] | 3u) : p[i];
    if (input != canonical[i])
      fail(packet_name(d.packet), "dword " + std::to_string(i) + " = " + hex32(p[i]) + " has unsupported bits " +
                                      hex32(input ^ canonical[i]));
  }
}

}  // namespace

// ---- public ---------------------------------------------------------------------------------------
bool poll_satisfied(PollFunc func, std::uint32_t value, std::uint32_t mask, std::uint32_t reference) {
  const std::uint32_t v = value & mask;
  switch (func) {
    case PollFunc::always: return true;
    case PollFunc::less: return v < reference;
    case PollFunc::less_equal: return v <= reference;
    case PollFunc::equal: return v == reference;
    case PollFunc::not_equal: return v != reference;
    case PollFunc::greater_equal: return v >= reference;
    case PollFunc::greater: return v > reference;
  }
  fail("POLL_REGMEM", "func " + std::to_string(static_cast<unsigned>(func)) + " is not a compare function (0 .. 6)");
}

void encode(const Packet& packet, Dwords& out) {
  std::visit([&out](const auto& p) { put(p, out); }, packet);
}

Dwords encode(const Packet& packet) {
  Dwords out;  // no reserve: a NOP's size is unchecked until put() validates it
  encode(packet, out);
  return out;
}

std::size_t dword_count(const Packet& packet) {
  return std::visit([](const auto& p) { return size_of(p); }, packet);
}

const char* packet_name(const Packet& packet) {
  return std::visit([](const auto& p) { return name_of(p); }, packet);
}

Decoded decode(const std::uint32_t* p, std::size_t available) {
  need("packet header", 1, available);
  Decoded d = decode_fields(p, available);
  check_canonical(d, p);
  return d;
}

std::vector<Chunk> copy_chunks(std::uint64_t bytes, std::uint64_t max_bytes) {
  if (max_bytes == 0) throw PacketError("copy_chunks: max_bytes 0 out of range (1 .. 18446744073709551615)");
  std::vector<Chunk> chunks;
  chunks.reserve(static_cast<std::size_t>(bytes / max_bytes + 1));
  for (std::uint64_t offset = 0; offset < bytes;) {
    const std::uint64_t n = std::min(max_bytes, bytes - offset);
    chunks.push_back({offset, n});
    offset += n;
  }
  return chunks;
}

}  // namespace dmabench::amd::sdma
