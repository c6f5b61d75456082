// SDMA packets (amd/sdma/packets.hpp): every encoding against dword literals worked out by hand
// from ../shared/SDMA-FACTS.md §1 (never computed with the code under test), the field limits,
// decoding (round trips, unknown and truncated packets, strictness), poll compare functions and
// copy splitting.
#include <string>

#include <gtest/gtest.h>

#include "amd/sdma/packets.hpp"

using namespace dmabench::amd::sdma;

namespace {

// Addresses with distinct high and low halves.
constexpr std::uint64_t kA = 0x0000123456789AC0;      // lo 0x56789AC0, hi 0x00001234 (64-aligned)
constexpr std::uint64_t kB = 0x00007FEDCBA98764;      // lo 0xCBA98764, hi 0x00007FED (residue 4 mod 32)
constexpr std::uint64_t kC = 0x0000654321FEDCA4;      // lo 0x21FEDCA4, hi 0x00006543 (residue 4 mod 32)
constexpr std::uint64_t kD = 0x0000654321FEDCC0;      // lo 0x21FEDCC0, hi 0x00006543 (64-aligned)
constexpr std::uint64_t kSignal = 0x0000123456789AC8; // lo 0x56789AC8 (8-aligned, not 16)

// Succeeds when f throws PacketError whose message contains `text`.
template <class F>
::testing::AssertionResult throws_with(F&& f, const std::string& text) {
  try {
    f();
  } catch (const PacketError& e) {
    const std::string message = e.what();
    if (message.find(text) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message \"" << message << "\" lacks \"" << text << "\"";
  }
  return ::testing::AssertionFailure() << "no PacketError thrown";
}

::testing::AssertionResult encode_throws(const Packet& p, const std::string& text) {
  return throws_with([&] { encode(p); }, text);
}
::testing::AssertionResult decode_throws(const Dwords& d, const std::string& text) {
  return throws_with([&] { decode(d.data(), d.size()); }, text);
}

}  // namespace

// ---- encodings against hand-written literals -----------------------------------------------------
TEST(SdmaPacketEncode, CopyLinear) {
  EXPECT_EQ(encode(CopyLinear{.src = kA, .dst = kB, .bytes = 0x1000}),
            (Dwords{0x00000001,  // op 1 | sub-op 0
                    0x00000FFF,  // bytes - 1
                    0x00000000, 0x56789AC0, 0x00001234, 0xCBA98764, 0x00007FED}));
  EXPECT_EQ(encode(CopyLinear{.src = kA, .dst = kB, .bytes = 1}),
            (Dwords{0x00000001, 0x00000000, 0x00000000, 0x56789AC0, 0x00001234, 0xCBA98764, 0x00007FED}));
  // 1 GiB: the full 30-bit count.
  EXPECT_EQ(encode(CopyLinear{.src = kA, .dst = kB, .bytes = 0x40000000}),
            (Dwords{0x00000001, 0x3FFFFFFF, 0x00000000, 0x56789AC0, 0x00001234, 0xCBA98764, 0x00007FED}));
}

TEST(SdmaPacketEncode, Broadcast) {
  EXPECT_EQ(encode(CopyBroadcast{.src = kA, .dst1 = kB, .dst2 = kC, .bytes = 64}),
            (Dwords{0x08000001,  // op 1 | sub-op 0 | broadcast bit 27
                    0x0000003F,  // bytes - 1
                    0x00000000, 0x56789AC0, 0x00001234, 0xCBA98764, 0x00007FED, 0x21FEDCA4, 0x00006543}));
}

TEST(SdmaPacketEncode, Swap) {
  EXPECT_EQ(encode(Swap{.a = kA, .b = kD, .bytes = 0x100000}),
            (Dwords{0x00000901,  // op 1 | sub-op 9 << 8
                    0x000FFFFF,  // bytes - 1
                    0x00000000, 0x56789AC0, 0x00001234, 0x21FEDCC0, 0x00006543}));
  EXPECT_EQ(encode(Swap{.a = kA, .b = kD, .bytes = 0x3FFFFFE0}),  // kMaxSwapBytes
            (Dwords{0x00000901, 0x3FFFFFDF, 0x00000000, 0x56789AC0, 0x00001234, 0x21FEDCC0, 0x00006543}));
}

TEST(SdmaPacketEncode, PollRegMem) {
  EXPECT_EQ(encode(PollRegMem{.addr = kSignal + 4, .reference = 0x11223344}),  // defaults: equal, memory, 4, 0xFFF
            (Dwords{0xB0000008,  // op 8 | func 3 << 28 | mem_poll 1 << 31
                    0x56789ACC, 0x00001234, 0x11223344, 0xFFFFFFFF,
                    0x0FFF0004}));  // interval 4 | retry_count 0xFFF << 16
  EXPECT_EQ(encode(PollRegMem{.addr = kSignal,
                              .reference = 0x00000500,
                              .mask = 0x0000FF00,
                              .func = PollFunc::greater_equal,
                              .interval = 10,
                              .retry_count = 0x123,
                              .memory = false,
                              .hdp_flush = true}),
            (Dwords{0x54000008,  // op 8 | hdp_flush 1 << 26 | func 5 << 28 | mem_poll 0
                    0x56789AC8, 0x00001234, 0x00000500, 0x0000FF00,
                    0x0123000A}));  // interval 10 | retry_count 0x123 << 16
}

TEST(SdmaPacketEncode, AtomicAdd64) {
  EXPECT_EQ(encode(AtomicAdd64{.addr = kSignal, .value = ~std::uint64_t{0}}),
            (Dwords{0x5E00000A,  // op 10 | ADD64 47 << 25 (loop bit 16 = 0)
                    0x56789AC8, 0x00001234, 0xFFFFFFFF, 0xFFFFFFFF, 0x00000000, 0x00000000, 0x00000000}));
  EXPECT_EQ(encode(AtomicAdd64{.addr = kSignal, .value = 0x0000000100000002}),
            (Dwords{0x5E00000A, 0x56789AC8, 0x00001234, 0x00000002, 0x00000001, 0x00000000, 0x00000000, 0x00000000}));
}

TEST(SdmaPacketEncode, Fence) {
  EXPECT_EQ(encode(Fence{.addr = kSignal + 4, .data = 0xCAFEF00D}),
            (Dwords{0x00000005,  // op 5, plain header
                    0x56789ACC, 0x00001234, 0xCAFEF00D}));
}

TEST(SdmaPacketEncode, Trap) {
  EXPECT_EQ(encode(Trap{.context = 0x00ABCDEF}), (Dwords{0x00000006 /* op 6 */, 0x00ABCDEF}));
  EXPECT_EQ(encode(Trap{.context = 0x0FFFFFFF}), (Dwords{0x00000006, 0x0FFFFFFF}));
}

TEST(SdmaPacketEncode, TimestampGlobal) {
  EXPECT_EQ(encode(TimestampGlobal{.addr = kA + 0x20}),
            (Dwords{0x0000020D,  // op 13 | sub-op 2 (GET_GLOBAL) << 8
                    0x56789AE0, 0x00001234}));
  EXPECT_EQ(encode(TimestampGlobal{.addr = kSignal}), (Dwords{0x0000020D, 0x56789AC8, 0x00001234}));
}

TEST(SdmaPacketEncode, ConstFill) {
  EXPECT_EQ(encode(ConstFill{.dst = kA, .bytes = 4096, .data = 0xDEADBEEF}),
            (Dwords{0x8000000B,  // op 11 | fillsize 2 (dword) << 30
                    0x56789AC0, 0x00001234, 0xDEADBEEF, 0x00000FFF}));
  EXPECT_EQ(encode(ConstFill{.dst = kA + 3, .bytes = 5, .data = 0xAB, .dwords = false}),
            (Dwords{0x0000000B,  // op 11 | fillsize 0 (byte)
                    0x56789AC3, 0x00001234, 0x000000AB, 0x00000004}));
}

TEST(SdmaPacketEncode, Nop) {
  EXPECT_EQ(encode(Nop{}), (Dwords{0x00000000}));                     // op 0, skip 0
  EXPECT_EQ(encode(Nop{.skip = 3}), (Dwords{0x00030000, 0, 0, 0}));  // op 0 | skip 3 << 16
  const Dwords max = encode(Nop{.skip = 0x3FFF});
  ASSERT_EQ(max.size(), 0x4000u);
  EXPECT_EQ(max[0], 0x3FFF0000u);  // op 0 | skip 0x3FFF << 16
  for (std::size_t i = 1; i < max.size(); ++i) ASSERT_EQ(max[i], 0u) << i;
}

TEST(SdmaPacketEncode, AppendsAndSizes) {
  Dwords out{0xAAAAAAAA};
  encode(Trap{.context = 1}, out);
  encode(Nop{.skip = 1}, out);
  EXPECT_EQ(out, (Dwords{0xAAAAAAAA, 0x00000006, 0x00000001, 0x00010000, 0x00000000}));
  // A failing encode leaves `out` untouched.
  EXPECT_THROW(encode(Fence{.addr = 2}, out), PacketError);
  EXPECT_EQ(out.size(), 5u);

  EXPECT_EQ(dword_count(CopyLinear{}), 7u);
  EXPECT_EQ(dword_count(CopyBroadcast{}), 9u);
  EXPECT_EQ(dword_count(Swap{}), 7u);
  EXPECT_EQ(dword_count(PollRegMem{}), 6u);
  EXPECT_EQ(dword_count(AtomicAdd64{}), 8u);
  EXPECT_EQ(dword_count(Fence{}), 4u);
  EXPECT_EQ(dword_count(Trap{}), 2u);
  EXPECT_EQ(dword_count(TimestampGlobal{}), 3u);
  EXPECT_EQ(dword_count(ConstFill{}), 5u);
  EXPECT_EQ(dword_count(Nop{.skip = 5}), 6u);
}

TEST(SdmaPacketEncode, Names) {
  EXPECT_STREQ(packet_name(CopyLinear{}), "COPY_LINEAR");
  EXPECT_STREQ(packet_name(CopyBroadcast{}), "BROADCAST");
  EXPECT_STREQ(packet_name(Swap{}), "SWAP");
  EXPECT_STREQ(packet_name(PollRegMem{}), "POLL_REGMEM");
  EXPECT_STREQ(packet_name(AtomicAdd64{}), "ATOMIC_ADD64");
  EXPECT_STREQ(packet_name(Fence{}), "FENCE");
  EXPECT_STREQ(packet_name(Trap{}), "TRAP");
  EXPECT_STREQ(packet_name(TimestampGlobal{}), "TIMESTAMP_GLOBAL");
  EXPECT_STREQ(packet_name(ConstFill{}), "CONST_FILL");
  EXPECT_STREQ(packet_name(Nop{}), "NOP");
}

// ---- limits -----------------------------------------------------------------------------------------
TEST(SdmaPacketLimits, ByteCounts) {
  EXPECT_TRUE(encode_throws(CopyLinear{.src = kA, .dst = kB, .bytes = 0},
                            "COPY_LINEAR: bytes 0 out of range (1 .. 1073741824)"));
  EXPECT_TRUE(encode_throws(CopyLinear{.src = kA, .dst = kB, .bytes = 0x40000001},
                            "COPY_LINEAR: bytes 1073741825 out of range (1 .. 1073741824)"));
  EXPECT_TRUE(encode_throws(CopyBroadcast{.src = kA, .dst1 = kB, .dst2 = kC, .bytes = 0}, "BROADCAST: bytes 0"));
  EXPECT_TRUE(encode_throws(CopyBroadcast{.src = kA, .dst1 = kB, .dst2 = kC, .bytes = 0x40000001},
                            "BROADCAST: bytes 1073741825 out of range (1 .. 1073741824)"));
  EXPECT_TRUE(encode_throws(Swap{.a = kA, .b = kD, .bytes = 0}, "SWAP: bytes 0 out of range"));
  EXPECT_TRUE(encode_throws(Swap{.a = kA, .b = kD, .bytes = 0x3FFFFFE1},
                            "SWAP: bytes 1073741793 out of range (1 .. 1073741792)"));
  EXPECT_TRUE(encode_throws(ConstFill{.dst = kA, .bytes = 0}, "CONST_FILL: bytes 0 out of range"));
  EXPECT_TRUE(encode_throws(ConstFill{.dst = kA, .bytes = 0x40000004},
                            "CONST_FILL: bytes 1073741828 out of range (1 .. 1073741824)"));
  EXPECT_TRUE(encode_throws(ConstFill{.dst = kA, .bytes = 0x40000001, .dwords = false},
                            "CONST_FILL: bytes 1073741825"));
}

TEST(SdmaPacketLimits, BroadcastResidue) {
  EXPECT_TRUE(encode_throws(CopyBroadcast{.src = kA, .dst1 = kB, .dst2 = kC + 4, .bytes = 64},
                            "BROADCAST: dst1 0x00007fedcba98764 and dst2 0x0000654321fedca8 differ mod 32 (4 vs 8)"));
  // Same residue, different 32-byte blocks: allowed.
  EXPECT_NO_THROW(encode(CopyBroadcast{.src = kA, .dst1 = kB, .dst2 = kC + 32, .bytes = 64}));
}

TEST(SdmaPacketLimits, Alignment) {
  EXPECT_TRUE(encode_throws(Fence{.addr = kSignal + 2}, "FENCE: addr 0x0000123456789aca is not 4-byte aligned"));
  EXPECT_TRUE(encode_throws(AtomicAdd64{.addr = kSignal + 4, .value = 1},
                            "ATOMIC_ADD64: addr 0x0000123456789acc is not 8-byte aligned"));
  EXPECT_TRUE(encode_throws(TimestampGlobal{.addr = kSignal + 4},
                            "TIMESTAMP_GLOBAL: addr 0x0000123456789acc is not 8-byte aligned"));
  EXPECT_TRUE(encode_throws(TimestampGlobal{.addr = kSignal + 1}, "is not 8-byte aligned"));
  EXPECT_TRUE(encode_throws(PollRegMem{.addr = kSignal + 2},
                            "POLL_REGMEM: addr 0x0000123456789aca is not 4-byte aligned"));
  EXPECT_TRUE(encode_throws(ConstFill{.dst = kA + 2, .bytes = 64},
                            "CONST_FILL: dword-mode dst 0x0000123456789ac2 is not 4-byte aligned"));
  EXPECT_TRUE(encode_throws(ConstFill{.dst = kA, .bytes = 66},
                            "CONST_FILL: dword-mode bytes 66 is not a multiple of 4"));
  // Swap addresses: bits 5:0 are reserved in ROCr's SWAP packet (sdma_registers.h), so the encoder refuses them.
  EXPECT_TRUE(encode_throws(Swap{.a = kA + 16, .b = kD, .bytes = 16},
                            "SWAP: address 0x0000123456789ad0 is not 64-byte aligned (DW3/DW5 bits 5:0 are reserved"));
  EXPECT_TRUE(encode_throws(Swap{.a = kA, .b = kC, .bytes = 64}, "SWAP: address 0x0000654321fedca4 is not 64-byte aligned"));
  EXPECT_NO_THROW(encode(Swap{.a = kA, .b = kD, .bytes = 16}));  // the size is not the address: unchecked
}

TEST(SdmaPacketLimits, Fields) {
  EXPECT_TRUE(encode_throws(PollRegMem{.addr = kSignal, .retry_count = 0x1000},
                            "POLL_REGMEM: retry_count 4096 out of range (0 .. 4095)"));
  EXPECT_TRUE(encode_throws(PollRegMem{.addr = kSignal, .func = static_cast<PollFunc>(7)},
                            "POLL_REGMEM: func 7 out of range (0 .. 6)"));
  EXPECT_TRUE(encode_throws(Trap{.context = 0x10000000}, "TRAP: context 268435456 out of range (0 .. 268435455)"));
  EXPECT_TRUE(encode_throws(Nop{.skip = 0x4000}, "NOP: skip 16384 out of range (0 .. 16383)"));
  EXPECT_TRUE(encode_throws(Nop{.skip = 0xFFFFFFFF}, "NOP: skip 4294967295 out of range"));  // no 16 GiB allocation
}

// ---- decoding ---------------------------------------------------------------------------------------
namespace {
std::vector<Packet> every_packet() {
  return {CopyLinear{.src = kA, .dst = kB, .bytes = 0x40000000},
          CopyLinear{.src = kA, .dst = kB, .bytes = 1},
          CopyBroadcast{.src = kA, .dst1 = kB, .dst2 = kC, .bytes = 4096},
          Swap{.a = kA, .b = kD, .bytes = 0x3FFFFFE0},
          PollRegMem{.addr = kSignal, .reference = 7},
          PollRegMem{.addr = kSignal, .reference = 1, .mask = 0xF0, .func = PollFunc::always, .interval = 0xFFFF,
                     .retry_count = 0, .memory = false, .hdp_flush = true},
          AtomicAdd64{.addr = kSignal, .value = ~std::uint64_t{0}},
          Fence{.addr = kSignal + 4, .data = 0xCAFEF00D},
          Trap{.context = 0x0FFFFFFF},
          TimestampGlobal{.addr = kA},
          ConstFill{.dst = kA, .bytes = 0x40000000, .data = 0x01020304},
          ConstFill{.dst = kA + 1, .bytes = 3, .data = 0x5A, .dwords = false},
          Nop{},
          Nop{.skip = 7}};
}
}  // namespace

TEST(SdmaPacketDecode, RoundTripsEveryPacket) {
  for (const Packet& packet : every_packet()) {
    SCOPED_TRACE(packet_name(packet));
    const Dwords dwords = encode(packet);
    const Decoded d = decode(dwords.data(), dwords.size());
    EXPECT_EQ(d.dwords, dwords.size());
    EXPECT_EQ(d.packet.index(), packet.index());
    EXPECT_EQ(encode(d.packet), dwords);
  }
}

TEST(SdmaPacketDecode, WalksAStream) {
  Dwords stream;
  for (const Packet& packet : every_packet()) encode(packet, stream);
  std::size_t at = 0, count = 0;
  while (at < stream.size()) {
    const Decoded d = decode(stream.data() + at, stream.size() - at);
    EXPECT_EQ(d.packet.index(), every_packet()[count].index()) << count;
    at += d.dwords;
    ++count;
  }
  EXPECT_EQ(at, stream.size());
  EXPECT_EQ(count, every_packet().size());
}

TEST(SdmaPacketDecode, Fields) {
  const Dwords poll{0x54000008, 0x56789AC8, 0x00001234, 0x00000500, 0x0000FF00, 0x0123000A};
  const auto p = std::get<PollRegMem>(decode(poll.data(), poll.size()).packet);
  EXPECT_EQ(p.addr, kSignal);
  EXPECT_EQ(p.reference, 0x500u);
  EXPECT_EQ(p.mask, 0xFF00u);
  EXPECT_EQ(p.func, PollFunc::greater_equal);
  EXPECT_EQ(p.interval, 10);
  EXPECT_EQ(p.retry_count, 0x123);
  EXPECT_FALSE(p.memory);
  EXPECT_TRUE(p.hdp_flush);

  const Dwords bcast{0x08000001, 0x0000003F, 0, 0x56789AC0, 0x00001234, 0xCBA98764, 0x00007FED, 0x21FEDCA4, 0x00006543};
  const auto b = std::get<CopyBroadcast>(decode(bcast.data(), bcast.size()).packet);
  EXPECT_EQ(b.src, kA);
  EXPECT_EQ(b.dst1, kB);
  EXPECT_EQ(b.dst2, kC);
  EXPECT_EQ(b.bytes, 64u);

  const Dwords atomic{0x5E00000A, 0x56789AC8, 0x00001234, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, 0};
  const auto a = std::get<AtomicAdd64>(decode(atomic.data(), atomic.size()).packet);
  EXPECT_EQ(a.addr, kSignal);
  EXPECT_EQ(a.value, ~std::uint64_t{0});
}

TEST(SdmaPacketDecode, Nops) {
  const Dwords zero{0x00000000, 0x00000001};
  Decoded d = decode(zero.data(), zero.size());
  EXPECT_EQ(d.dwords, 1u);
  EXPECT_EQ(std::get<Nop>(d.packet).skip, 0u);

  const Dwords skip{0x00020000, 0xDEADBEEF, 0x12345678, 0x00000006};  // skipped dwords need not be zero
  d = decode(skip.data(), skip.size());
  EXPECT_EQ(d.dwords, 3u);
  EXPECT_EQ(std::get<Nop>(d.packet).skip, 2u);
}

TEST(SdmaPacketDecode, RocrStyleDwordFillCount) {
  // ROCr writes (dwords - 1) * 4 with fillsize 2 (§1.9): 1024 dwords = 4096 bytes.
  const Dwords fill{0x8000000B, 0x56789AC0, 0x00001234, 0xDEADBEEF, 0x00000FFC};
  const auto f = std::get<ConstFill>(decode(fill.data(), fill.size()).packet);
  EXPECT_TRUE(f.dwords);
  EXPECT_EQ(f.bytes, 4096u);
}

TEST(SdmaPacketDecode, UnknownOpcodes) {
  EXPECT_TRUE(decode_throws({0x00000003}, "unknown opcode 0x03 sub-op 0x00"));
  EXPECT_TRUE(decode_throws({0x00000002, 0, 0, 0, 0}, "unknown opcode 0x02 sub-op 0x00"));  // WRITE
  EXPECT_TRUE(decode_throws({0x00000101, 0, 0, 0, 0, 0, 0}, "unknown opcode 0x01 sub-op 0x01"));
  EXPECT_TRUE(decode_throws({0x00000105, 0, 0, 0}, "unknown opcode 0x05 sub-op 0x01"));
  EXPECT_TRUE(decode_throws({0x000000FF}, "unknown opcode 0xff sub-op 0x00"));
  EXPECT_TRUE(decode_throws({0x4000000A, 0x56789AC8, 0x00001234, 0, 0, 0, 0, 0},  // op 10 | 32 << 25
                            "ATOMIC: atomic opcode 32 is not ADD64 (47)"));
  EXPECT_TRUE(decode_throws({0x0000010D, 0x56789AC0, 0x00001234}, "TIMESTAMP: sub-op 1 is not GET_GLOBAL (2)"));
  EXPECT_TRUE(decode_throws({0xF0000008, 0x56789AC8, 0x00001234, 0, 0xFFFFFFFF, 0x0FFF0004},  // func 7
                            "POLL_REGMEM: func 7 is not a compare function (0 .. 6)"));
  EXPECT_TRUE(decode_throws({0x4000000B, 0x56789AC0, 0x00001234, 0, 3},
                            "CONST_FILL: fillsize 1 is neither 0 (byte) nor 2 (dword)"));
}

TEST(SdmaPacketDecode, Truncated) {
  EXPECT_TRUE(throws_with([] { decode(nullptr, 0); }, "truncated: packet header needs 1 dwords, 0 available"));
  EXPECT_TRUE(decode_throws({0x00000001, 0x3F, 0, 0x56789AC0, 0x00001234, 0xCBA98764},
                            "truncated: COPY_LINEAR needs 7 dwords, 6 available"));
  EXPECT_TRUE(decode_throws({0x00000001}, "truncated: COPY_LINEAR needs 7 dwords, 1 available"));
  EXPECT_TRUE(decode_throws({0x08000001, 0x3F, 0, 0x56789AC0, 0x00001234, 0xCBA98764, 0x00007FED},
                            "truncated: BROADCAST needs 9 dwords, 7 available"));
  EXPECT_TRUE(decode_throws({0x00000901, 0x3F}, "truncated: SWAP needs 7 dwords, 2 available"));
  EXPECT_TRUE(decode_throws({0xB0000008, 0, 0}, "truncated: POLL_REGMEM needs 6 dwords, 3 available"));
  EXPECT_TRUE(decode_throws({0x5E00000A}, "truncated: ATOMIC needs 8 dwords, 1 available"));
  EXPECT_TRUE(decode_throws({0x00000005, 0}, "truncated: FENCE needs 4 dwords, 2 available"));
  EXPECT_TRUE(decode_throws({0x00000006}, "truncated: TRAP needs 2 dwords, 1 available"));
  EXPECT_TRUE(decode_throws({0x0000020D, 0}, "truncated: TIMESTAMP_GLOBAL needs 3 dwords, 2 available"));
  EXPECT_TRUE(decode_throws({0x8000000B, 0, 0, 0}, "truncated: CONST_FILL needs 5 dwords, 4 available"));
  EXPECT_TRUE(decode_throws({0x00030000, 0, 0}, "truncated: NOP needs 4 dwords, 3 available"));
}

TEST(SdmaPacketDecode, RejectsWhatTheEncodersNeverWrite) {
  // COPY_LINEAR DW2 with endian swap (dst bits 17:16).
  EXPECT_TRUE(decode_throws({0x00000001, 0x3F, 0x00030000, 0x56789AC0, 0x00001234, 0xCBA98764, 0x00007FED},
                            "COPY_LINEAR: dword 2 = 0x00030000 has unsupported bits 0x00030000"));
  // COPY_LINEAR count bits 31:30 (outside the 30-bit count).
  EXPECT_TRUE(decode_throws({0x00000001, 0x4000003F, 0, 0x56789AC0, 0x00001234, 0xCBA98764, 0x00007FED},
                            "COPY_LINEAR: dword 1 = 0x4000003f has unsupported bits 0x40000000"));
  // COPY_LINEAR tmz (bit 18).
  EXPECT_TRUE(decode_throws({0x00040001, 0x3F, 0, 0x56789AC0, 0x00001234, 0xCBA98764, 0x00007FED},
                            "COPY_LINEAR: dword 0 = 0x00040001 has unsupported bits 0x00040000"));
  // ATOMIC loop bit 16.
  EXPECT_TRUE(decode_throws({0x5E01000A, 0x56789AC8, 0x00001234, 1, 0, 0, 0, 0},
                            "ATOMIC_ADD64: dword 0 = 0x5e01000a has unsupported bits 0x00010000"));
  // FENCE mtype (bits 18:16, gfx10+).
  EXPECT_TRUE(decode_throws({0x00030005, 0x56789ACC, 0x00001234, 1},
                            "FENCE: dword 0 = 0x00030005 has unsupported bits 0x00030000"));
  // TIMESTAMP address bits 2:0 are not encoded.
  EXPECT_TRUE(decode_throws({0x0000020D, 0x56789AC3, 0x00001234},
                            "TIMESTAMP_GLOBAL: dword 1 = 0x56789ac3 has unsupported bits 0x00000003"));
  // POLL_REGMEM DW5 bits 31:28 (scope, gfx12.5).
  EXPECT_TRUE(decode_throws({0xB0000008, 0x56789AC8, 0x00001234, 0, 0xFFFFFFFF, 0x1FFF0004},
                            "POLL_REGMEM: dword 5 = 0x1fff0004 has unsupported bits 0x10000000"));
  // Field limits apply when decoding too.
  EXPECT_TRUE(decode_throws({0x00000006, 0x10000000}, "TRAP: context 268435456 out of range (0 .. 268435455)"));
  EXPECT_TRUE(decode_throws({0x00000005, 0x56789ACA, 0x00001234, 1},
                            "FENCE: addr 0x0000123456789aca is not 4-byte aligned"));
  EXPECT_TRUE(decode_throws({0x5E00000A, 0x56789ACC, 0x00001234, 1, 0, 0, 0, 0},
                            "ATOMIC_ADD64: addr 0x0000123456789acc is not 8-byte aligned"));
  EXPECT_TRUE(decode_throws({0x08000001, 0x3F, 0, 0x56789AC0, 0x00001234, 0xCBA98764, 0x00007FED, 0x21FEDCA0,
                             0x00006543},
                            "BROADCAST: dst1 0x00007fedcba98764 and dst2 0x0000654321fedca0 differ mod 32"));
  EXPECT_TRUE(decode_throws({0x00000901, 0x3FFFFFFF, 0, 0x56789AC0, 0x00001234, 0x21FEDCA4, 0x00006543},
                            "SWAP: bytes 1073741824 out of range (1 .. 1073741792)"));
  EXPECT_TRUE(decode_throws({0x8000000B, 0x56789AC2, 0x00001234, 0, 0xFFF},
                            "CONST_FILL: dword-mode dst 0x0000123456789ac2 is not 4-byte aligned"));
}

// ---- poll compare functions ---------------------------------------------------------------------------
TEST(SdmaPoll, TruthTable) {
  // value 0xABCD0005 & mask 0x0000FFFF = 5, against references 4, 5 and 6.
  struct Row {
    PollFunc func;
    bool below, equal, above;  // reference 4, 5, 6
  };
  const Row rows[] = {
      {PollFunc::always, true, true, true},         {PollFunc::less, false, false, true},
      {PollFunc::less_equal, false, true, true},    {PollFunc::equal, false, true, false},
      {PollFunc::not_equal, true, false, true},     {PollFunc::greater_equal, true, true, false},
      {PollFunc::greater, true, false, false},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(static_cast<int>(r.func));
    EXPECT_EQ(poll_satisfied(r.func, 0xABCD0005, 0x0000FFFF, 4), r.below);
    EXPECT_EQ(poll_satisfied(r.func, 0xABCD0005, 0x0000FFFF, 5), r.equal);
    EXPECT_EQ(poll_satisfied(r.func, 0xABCD0005, 0x0000FFFF, 6), r.above);
  }
  // Without the mask the high half counts.
  EXPECT_FALSE(poll_satisfied(PollFunc::equal, 0xABCD0005, 0xFFFFFFFF, 5));
  EXPECT_TRUE(poll_satisfied(PollFunc::greater, 0xABCD0005, 0xFFFFFFFF, 5));
  // Comparisons are unsigned.
  EXPECT_TRUE(poll_satisfied(PollFunc::greater, 0x80000000, 0xFFFFFFFF, 1));
  EXPECT_THROW(poll_satisfied(static_cast<PollFunc>(7), 0, 0, 0), PacketError);
}

// ---- splitting ----------------------------------------------------------------------------------------
namespace {
std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs(const std::vector<Chunk>& chunks) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (const Chunk& c : chunks) out.emplace_back(c.offset, c.bytes);
  return out;
}
using Pairs = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
}  // namespace

TEST(SdmaCopyChunks, EdgeCases) {
  EXPECT_TRUE(copy_chunks(0, 16).empty());
  EXPECT_EQ(pairs(copy_chunks(64, 16)), (Pairs{{0, 16}, {16, 16}, {32, 16}, {48, 16}}));
  EXPECT_EQ(pairs(copy_chunks(70, 16)), (Pairs{{0, 16}, {16, 16}, {32, 16}, {48, 16}, {64, 6}}));
  EXPECT_EQ(pairs(copy_chunks(5, 100)), (Pairs{{0, 5}}));
  EXPECT_EQ(pairs(copy_chunks(16, 16)), (Pairs{{0, 16}}));
  EXPECT_EQ(pairs(copy_chunks(3, 1)), (Pairs{{0, 1}, {1, 1}, {2, 1}}));
  EXPECT_EQ(pairs(copy_chunks(0x80000001, kMaxCount30Bytes)),
            (Pairs{{0, 0x40000000}, {0x40000000, 0x40000000}, {0x80000000, 1}}));
  EXPECT_TRUE(throws_with([] { copy_chunks(64, 0); }, "max_bytes 0"));
  EXPECT_TRUE(throws_with([] { copy_chunks(0, 0); }, "max_bytes 0"));
}
