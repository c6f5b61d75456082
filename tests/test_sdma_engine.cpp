// The software SDMA engine and the sdma engine on it: ring wrap-around, faults, every variant on
// 2, 4 and 8 ranks with every byte validated, packet dumps; host memory endpoints with block layouts
// (every block and every gap validated, a misplaced block caught, host-facing engines, 4096 blocks).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "amd/sdma/packets.hpp"
#include "amd/sdma/ring.hpp"
#include "amd/sdma/soft_engine.hpp"
#include "patterns/layout.hpp"
#include "bench/run/run_case.hpp"
#include "core/host_memory.hpp"
#include "engines/engine_factories.hpp"
#include "engines/registry.hpp"
#include "engines/sdma_commands.hpp"
#include "engines/options/sdma.hpp"
#include "tests/test_support.hpp"

using namespace dmabench;
namespace sdma = dmabench::amd::sdma;
using json = nlohmann::json;

namespace {

std::uint64_t addr(const void* p) { return reinterpret_cast<std::uint64_t>(p); }

template <class T>
T load(const T* p) {
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

// Spins until `done` or about 10 s.
template <class F>
bool eventually(F done) {
  for (int i = 0; i < 10'000'000; ++i) {
    if (done()) return true;
    if (i > 1000) std::this_thread::yield();
  }
  return done();
}

}  // namespace

TEST(SoftSdma, SmallRingWrapsManyTimes) {
  auto p = sdma::make_soft_platform();
  auto q = p->create_queue(0, 2, 4096).value();
  sdma::RingWriter w(*q);
  alignas(64) static std::uint64_t counter;
  alignas(64) static std::uint32_t fence_word;
  alignas(64) static std::uint64_t stamps[4];
  counter = 0;
  w.start_capture();
  constexpr int kRounds = 3000;
  for (int i = 0; i < kRounds; ++i) {  // 8 + 4 + 3 dwords: the ring end falls inside packets, so NOPs pad
    w.put(sdma::AtomicAdd64{addr(&counter), 1});
    w.put(sdma::Fence{addr(&fence_word), static_cast<std::uint32_t>(i)});
    w.put(sdma::TimestampGlobal{addr(&stamps[i % 4])});
    if (i % 7 == 0) w.submit();
  }
  w.submit();
  const auto cap = w.stop_capture();
  // The last round's fence follows its atomic: wait for both (the engine may be between them).
  ASSERT_TRUE(eventually([&] {
    return load(&counter) == kRounds && load(&fence_word) == static_cast<std::uint32_t>(kRounds - 1);
  })) << load(&counter) << ", fence " << load(&fence_word) << "; " << q->fault().value_or("");
  EXPECT_GT(w.position() / 4096, 40u);  // wrapped the 4 KiB ring more than 40 times
  EXPECT_GT(std::count(cap.packets.begin(), cap.packets.end(), "NOP"), 10);
  EXPECT_EQ(q->fault(), std::nullopt);
  EXPECT_TRUE(eventually([&] { return *q->cells().rptr == w.position(); }));
}

// submit=gpu: one operation's staged packets may begin near the ring's end; the RingWriter then pads to the end
// with a NOP and goes on at offset 0, so the staged dwords span the end and the GPU (here its stand-in) must
// wrap while copying them. Copied straight on, they would run past the ring and the engine would find the
// earlier packets at offset 0 (ATOMICs on `before`) instead of the staged ones (on `after`).
TEST(SoftSdma, GpuSubmitWrapsStagedPacketsAtTheRingEnd) {
  auto p = sdma::make_soft_platform();
  auto q = p->create_queue(0, 2, 4096).value();
  sdma::RingWriter w(*q);
  alignas(64) static std::uint64_t before, after;
  alignas(64) static std::uint32_t fence_word;
  before = after = 0;
  fence_word = 1;
  for (int i = 0; i < 127; ++i) w.put(sdma::AtomicAdd64{addr(&before), 1});  // 127 x 32 bytes
  w.put(sdma::Fence{addr(&fence_word), 0});                                 // 16 more: 16 bytes left before the end
  w.submit();
  w.begin_staging();
  for (int i = 0; i < 3; ++i) w.put(sdma::AtomicAdd64{addr(&after), 1});
  const sdma::StagedPackets staged = w.end_staging();
  ASSERT_EQ(staged.from % 4096, 4080u);
  ASSERT_EQ(staged.dwords.size() * 4, 16u + 3 * 32);  // the NOP pad, then the packets from offset 0
  p->gpu_submit(0, *q, staged);
  ASSERT_TRUE(eventually([&] { return load(&after) == 3 && *q->cells().rptr == w.position(); }))
      << "after " << load(&after) << ", before " << load(&before) << "; " << q->fault().value_or("");
  EXPECT_EQ(load(&before), 127u);  // the earlier ATOMICs ran once, not again from a stale ring start
  EXPECT_EQ(load(&fence_word), 0u);
  EXPECT_EQ(q->fault(), std::nullopt);
}

TEST(SoftSdma, UnknownOpcodeStopsTheQueueWithItsOffset) {
  auto p = sdma::make_soft_platform();
  auto q = p->create_queue(1, 3, 4096).value();
  alignas(64) static std::uint64_t counter;
  counter = 0;
  sdma::RingWriter w(*q);
  w.put(sdma::AtomicAdd64{addr(&counter), 1});  // 32 bytes, then a planted bad dword at ring offset 0x20
  q->cells().ring[8] = 0x00000003;               // opcode 3: none of SDMA's
  q->submit(w.position() + 4);
  ASSERT_TRUE(eventually([&] { return q->fault().has_value(); }));
  EXPECT_NE(q->fault()->find("unknown opcode 0x03"), std::string::npos) << *q->fault();
  EXPECT_NE(q->fault()->find("ring offset 0x20"), std::string::npos) << *q->fault();
  EXPECT_EQ(load(&counter), 1u);    // the packet before it ran
  EXPECT_EQ(*q->cells().rptr, 32u);  // and the read pointer stopped at the bad one
}

TEST(SoftSdma, PollWaitsForItsValueAndCopiesSwapsFillsRun) {
  auto p = sdma::make_soft_platform();
  auto q = p->create_queue(0, 4, 8192).value();
  sdma::RingWriter w(*q);
  alignas(64) static std::uint32_t gate;
  alignas(64) static unsigned char a[256], b[256], c[256], d[256];
  alignas(64) static std::uint64_t done;
  gate = 5;
  done = 1;
  std::memset(a, 0xAA, sizeof a);
  std::memset(b, 0xBB, sizeof b);
  w.put(sdma::PollRegMem{.addr = addr(&gate), .reference = 7, .mask = 0xF, .func = sdma::PollFunc::equal});
  w.put(sdma::CopyBroadcast{addr(a), addr(c), addr(d), 100});
  w.put(sdma::Swap{addr(a), addr(b), 128});
  w.put(sdma::ConstFill{.dst = addr(a) + 128, .bytes = 8, .data = 0x01020304, .dwords = true});
  w.put(sdma::AtomicAdd64{addr(&done), ~std::uint64_t{0}});
  w.submit();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(load(&done), 1u);  // still behind the poll
  __atomic_store_n(&gate, 0x37u, __ATOMIC_RELEASE);  // (0x37 & 0xF) == 7
  ASSERT_TRUE(eventually([&] { return load(&done) == 0; })) << q->fault().value_or("");
  EXPECT_EQ(c[0], 0xAA);
  EXPECT_EQ(d[99], 0xAA);
  EXPECT_EQ(d[100], 0x00);
  EXPECT_EQ(a[0], 0xBB);
  EXPECT_EQ(b[127], 0xAA);
  EXPECT_EQ(a[128], 0x04);
  EXPECT_EQ(a[135], 0x01);
}

TEST(SoftSdma, TimestampsShareTheClockOfClockCounters) {
  auto p = sdma::make_soft_platform();
  auto q = p->create_queue(0, 5, 4096).value();
  sdma::RingWriter w(*q);
  alignas(64) static std::uint64_t stamp;
  alignas(64) static std::uint64_t done;
  stamp = 0;
  done = 1;
  const auto before = p->clock_counters(0);
  w.put(sdma::TimestampGlobal{addr(&stamp)});
  w.put(sdma::AtomicAdd64{addr(&done), ~std::uint64_t{0}});
  w.submit();
  ASSERT_TRUE(eventually([&] { return load(&done) == 0; }));
  const auto after = p->clock_counters(0);
  EXPECT_GE(load(&stamp), before.gpu_ticks);
  EXPECT_LE(load(&stamp), after.gpu_ticks);
  EXPECT_GT(after.host_ns, before.host_ns);
}

// ---- the sdma engine through the harness ------------------------------------------------------

namespace {

Case sdma_case(const std::string& pattern, int ranks, std::size_t bytes, json options, Timing timing = Timing::oneshot) {
  std::vector<int> devs(ranks);
  std::iota(devs.begin(), devs.end(), 0);
  const auto named = testing_support::named_pattern(pattern);
  devs.resize(named.impl->ranks_used(ranks));  // copy: the first two
  return testing_support::planned(Case{.pattern = named.pattern,
                                       .variant = EngineVariant{"sdma", with_defaults("sdma", std::move(options))},
                                       .devices = devs,
                                       .bytes_per_rank = bytes,
                                       .timing = timing,
                                       .in_place = named.in_place,
                                       .run = {.warmup = 1,
                                               .iterations = 3,
                                               .pipeline_depth = timing == Timing::pipelined ? 4 : 1}});
}

struct Variant {
  const char* pattern;
  json options;
};

std::string variant_name(const ::testing::TestParamInfo<std::tuple<int, int, std::size_t>>& info) {
  return "v" + std::to_string(std::get<0>(info.param)) + "_r" + std::to_string(std::get<1>(info.param)) + "_b" +
         std::to_string(std::get<2>(info.param));
}

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v = {
      {"allgather", {{"schedule", "pcpy"}}},
      {"allgather-inplace", {{"schedule", "b2b"}, {"ways", 3}, {"trigger", "prelaunch"}}},
      {"allgather-inplace", {{"packet", "broadcast"}, {"trigger", "prelaunch"}, {"trigger_words", "per-command"}}},
      {"allgather", {{"packet", "broadcast"}, {"schedule", "b2b"}, {"sync", "fence"}}},
      {"alltoall", {{"schedule", "pcpy"}, {"engines", "round-robin"}, {"trigger", "gpu-flag"}}},
      {"alltoall", {{"schedule", "b2b"}, {"submit", "gpu"}, {"max_packet_bytes", 1000}}},
      {"alltoall-inplace", {{"packet", "swap"}, {"swap_alignment", "none"}, {"trigger", "prelaunch"}}},
      {"alltoall-inplace", {{"packet", "swap"}, {"schedule", "b2b"}, {"sync", "fence"}}},
      {"copy", {{"max_packet_bytes", 4096}}},
  };
  return v;
}

}  // namespace

class SdmaEveryVariant : public ::testing::TestWithParam<std::tuple<int, int, std::size_t>> {};

TEST_P(SdmaEveryVariant, ValidatesEveryByte) {
  const auto& [which, ranks, bytes] = GetParam();
  const Variant& v = variants()[which];
  auto backend = testing_support::host_backend();
  auto engine = make_engine("sdma", "host").value();
  const Case c = sdma_case(v.pattern, ranks, bytes, v.options);
  const json r = to_json(run_case(c, engine.get(), *backend));
  // swap blocks off 64 bytes are skipped under both swap_alignment values (the SWAP packet reserves address bits 5:0)
  const bool misaligned_swap = v.options.value("packet", "") == "swap" && bytes % 64 != 0;
  const bool no_pair = v.options.value("packet", "") == "broadcast" && ranks == 2 && c.in_place;
  if (no_pair) {  // in place on 2 ranks a rank sends its block once: nothing to pair
    EXPECT_EQ(r["status"], "skipped");
    EXPECT_NE(r["reason"].get<std::string>().find("copies one source twice"), std::string::npos) << r["reason"];
    return;
  }
  if (misaligned_swap) {
    EXPECT_EQ(r["status"], "skipped");
    EXPECT_NE(r["reason"].get<std::string>().find("64-byte"), std::string::npos) << r["reason"];
    return;
  }
  ASSERT_EQ(r["status"], "ok") << c.name() << ": " << r["reason"];
  EXPECT_EQ(r["validated"], true);
  EXPECT_EQ(r["engine_details"]["hardware_times"], false);
}

INSTANTIATE_TEST_SUITE_P(Soft, SdmaEveryVariant,
                         ::testing::Combine(::testing::Range(0, 9), ::testing::Values(2, 4, 8),
                                            ::testing::Values(std::size_t{1}, std::size_t{3}, std::size_t{4160}, std::size_t{65537})),
                         variant_name);

// Every pattern of the registry (device memory; host memory: SdmaHostLayouts) with the default options on 2
// and 4 ranks, both timings, every byte validated; an exchange plan (the in-place alltoall) is skipped unless
// the options swap blocks (packet=swap: SdmaEveryVariant).
class SdmaEveryPattern : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(SdmaEveryPattern, ValidatesWithDefaultOptions) {
  const auto& [pattern, ranks] = GetParam();
  auto backend = testing_support::host_backend();
  auto engine = make_engine("sdma", "host").value();
  for (Timing timing : {Timing::oneshot, Timing::pipelined}) {
    const Case c = sdma_case(pattern, ranks, 4160, json::object(), timing);
    ASSERT_TRUE(c.plan) << c.name() << ": " << c.not_runnable;
    const json r = to_json(run_case(c, engine.get(), *backend));
    if (c.plan->exchange && !engine->exchanges(*engine->parse(c.variant.options))) {
      EXPECT_EQ(r["status"], "skipped") << c.name();
      continue;
    }
    ASSERT_EQ(r["status"], "ok") << c.name() << ": " << r["reason"];
    EXPECT_EQ(r["validated"], true) << c.name();
  }
}

INSTANTIATE_TEST_SUITE_P(Soft, SdmaEveryPattern,
                         ::testing::Combine(::testing::ValuesIn(testing_support::pattern_names_with_host_memory(false)),
                                            ::testing::Values(2, 4)),
                         [](const auto& info) {
                           std::string n = std::get<0>(info.param) + "_r" + std::to_string(std::get<1>(info.param));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(SdmaEngine, PipelinedPrelaunchRunsManyOperationsAhead) {
  auto backend = testing_support::host_backend();
  auto engine = make_engine("sdma", "host").value();
  const json r = to_json(run_case(sdma_case("allgather", 4, 1024, {{"trigger", "prelaunch"}}, Timing::pipelined), engine.get(), *backend));
  ASSERT_EQ(r["status"], "ok") << r["reason"];
}

// submit=gpu over enough operations that each queue's ring wraps (a copy and an ATOMIC, 60 bytes per operation, in a
// 16 KiB ring: some operation's packets run past the ring's end), every byte validated: the GPU stand-in must wrap
// as the RingWriter does (SoftSdma.GpuSubmitWrapsStagedPacketsAtTheRingEnd).
TEST(SdmaEngine, SubmitGpuRunsPastTheRingEndManyTimes) {
  auto backend = testing_support::host_backend();
  auto engine = make_engine("sdma", "host").value();
  Case c = sdma_case("copy", 2, 256, {{"submit", "gpu"}});
  c.run.iterations = 800;
  const json r = to_json(run_case(c, engine.get(), *backend));
  ASSERT_EQ(r["status"], "ok") << r["reason"];
  EXPECT_EQ(r["validated"], true);
}

TEST(SdmaEngine, VariantsThatCannotRunAreSkippedWithTheReason) {
  auto backend = testing_support::host_backend();
  auto engine = make_engine("sdma", "host").value();
  auto reason = [&](const std::string& pattern, json o) {
    const json r = to_json(run_case(sdma_case(pattern, 2, 1024, o), engine.get(), *backend));
    EXPECT_EQ(r["status"], "skipped") << pattern << " " << o;
    return r["reason"].get<std::string>();
  };
  EXPECT_NE(reason("alltoall", {{"packet", "swap"}}).find("in-place alltoall only"), std::string::npos);
  EXPECT_NE(reason("alltoall-inplace", {}).find("packet=swap"), std::string::npos);
  EXPECT_NE(reason("copy", {{"packet", "broadcast"}}).find("pairs two copies of one source"), std::string::npos);
  EXPECT_NE(reason("copy", {{"submit", "gpu"}, {"trigger", "prelaunch"}}).find("trigger=enqueue"), std::string::npos);
  // other engines never run the in-place alltoall
  auto host = make_engine("host").value();
  const json r = to_json(run_case(sdma_case("alltoall-inplace", 2, 64, {{"packet", "swap"}}), host.get(), *backend));
  EXPECT_EQ(r["status"], "skipped");
}

namespace {

// A queue behind a wrapper, as ForwardingPlatform below.
struct ForwardingQueue : sdma::Queue {
  explicit ForwardingQueue(std::unique_ptr<sdma::Queue> q) : q_(std::move(q)) {}
  const sdma::QueueCells& cells() const override { return q_->cells(); }
  void submit(std::uint64_t wptr) override { q_->submit(wptr); }
  int device() const override { return q_->device(); }
  int engine() const override { return q_->engine(); }
  std::string describe() const override { return q_->describe(); }
  WhyNot fault() const override { return q_->fault(); }
  std::unique_ptr<sdma::Queue> q_;
};

// A software platform behind a wrapper: every call goes to it unless a test's subclass overrides the call.
class ForwardingPlatform : public sdma::Platform {
 public:
  explicit ForwardingPlatform(std::unique_ptr<sdma::Platform> inner = sdma::make_soft_platform()) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  bool hardware_times() const override { return false; }
  int device_count() const override { return inner_->device_count(); }
  int engine_count(int d) const override { return inner_->engine_count(d); }
  int first_xgmi_engine(int d) const override { return inner_->first_xgmi_engine(d); }
  WhyNot engine_unusable(int d, int e) const override { return inner_->engine_unusable(d, e); }
  WhyNot host_atomics_unsupported(int d) const override { return inner_->host_atomics_unsupported(d); }
  int recommended_engine(int s, int d) const override { return inner_->recommended_engine(s, d); }
  sdma::Allocation alloc_device(int d, std::size_t n, const std::vector<int>& p) override { return inner_->alloc_device(d, n, p); }
  sdma::Allocation alloc_host(std::size_t n, const std::vector<int>& p) override { return inner_->alloc_host(n, p); }
  WhyNot host_kind_unsupported(HostKind k) const override { return inner_->host_kind_unsupported(k); }
  sdma::HostBuffer alloc_host_buffer(HostKind k, std::size_t n, int node, const std::vector<int>& d,
                                     hostmem::BufferInfo& info) override {
    return inner_->alloc_host_buffer(k, n, node, d, info);
  }
  void write(void* d, const void* s, std::size_t n) override { inner_->write(d, s, n); }
  void read(void* d, const void* s, std::size_t n) override { inner_->read(d, s, n); }
  Maybe<std::unique_ptr<sdma::Queue>> create_queue(int device, int engine, std::size_t ring) override {
    return inner_->create_queue(device, engine, ring);
  }
  sdma::ClockPair clock_counters(int d) override { return inner_->clock_counters(d); }
  WhyNot gpu_initiated_unsupported() const override { return inner_->gpu_initiated_unsupported(); }
  void gpu_store(int d, std::uint64_t* w, std::uint64_t v) override { inner_->gpu_store(d, w, v); }
  void gpu_submit(int d, sdma::Queue& q, const sdma::StagedPackets& s) override { inner_->gpu_submit(d, q, s); }
  json describe() const override { return inner_->describe(); }

 private:
  std::unique_ptr<sdma::Platform> inner_;
};

// A platform whose queues turn the first dword of their first submission into opcode 3.
class PlantingPlatform final : public ForwardingPlatform {
 public:
  Maybe<std::unique_ptr<sdma::Queue>> create_queue(int device, int engine, std::size_t ring) override {
    auto q = ForwardingPlatform::create_queue(device, engine, ring);
    if (!q) return q;
    return std::unique_ptr<sdma::Queue>(std::make_unique<Planting>(std::move(q).value()));
  }

 private:
  struct Planting final : ForwardingQueue {
    using ForwardingQueue::ForwardingQueue;
    void submit(std::uint64_t wptr) override {
      if (!planted_) q_->cells().ring[0] = 0x0000FF03;  // opcode 3, sub-op 0xFF
      planted_ = true;
      q_->submit(wptr);
    }
    bool planted_ = false;
  };
};

}  // namespace

TEST(SdmaEngine, APlantedBadPacketFailsItsCaseWithTheOffset) {
  auto backend = testing_support::host_backend();
  auto engine = make_sdma_engine_on(std::make_unique<PlantingPlatform>());
  CaseExecution e(sdma_case("allgather", 2, 1024, json::object()), engine.get(), "", *backend);
  e.setup();
  EXPECT_EQ(e.status(), Status::failed);
  EXPECT_NE(e.reason().find("unknown opcode 0x03 sub-op 0xff at ring offset 0x0"), std::string::npos) << e.reason();
  ASSERT_TRUE(e.packet_dump().is_object());  // what was written is still dumped
  EXPECT_EQ(e.packet_dump()["queues"][0]["dwords"][0], "0x00000001");  // as written, before the planting
}

TEST(SdmaEngine, PacketDumpShowsOneOperationPerQueue) {
  auto backend = testing_support::host_backend();
  auto engine = make_engine("sdma", "host").value();
  CaseExecution e(sdma_case("allgather-inplace", 4, 4096, {{"trigger", "prelaunch"}, {"packet", "broadcast"}}), engine.get(), "",
                  *backend);
  e.setup();
  ASSERT_EQ(e.status(), Status::ok) << e.reason();
  const json& d = e.packet_dump();
  EXPECT_EQ(d["hardware_times"], false);
  int broadcasts = 0, polls = 0, atomics = 0;
  for (const auto& q : d["queues"]) {
    EXPECT_EQ(q["packets"][0], "POLL_REGMEM");
    for (const auto& name : q["packets"]) {
      broadcasts += name == "BROADCAST";
      polls += name == "POLL_REGMEM";
      atomics += name == "ATOMIC_ADD64";
    }
  }
  // 4 ranks, 3 peers each: one broadcast pair and one single copy per rank, each its own command
  EXPECT_EQ(broadcasts, 4);
  EXPECT_EQ(polls, 8);
  EXPECT_EQ(atomics, 8);
}

TEST(SdmaEngine, BreakdownComesFromTimestampPackets) {
  auto backend = testing_support::host_backend();
  auto engine = make_engine("sdma", "host").value();
  for (const char* trigger : {"enqueue", "prelaunch"}) {
    Case c = sdma_case("copy", 2, 1 << 20, {{"trigger", trigger}});
    c.run.breakdown = true;
    const json r = to_json(run_case(c, engine.get(), *backend));
    ASSERT_EQ(r["status"], "ok") << r["reason"];
    const json& b = r["breakdown_us"];
    ASSERT_FALSE(b.contains("error")) << b;
    EXPECT_NE(b["tracer"].get<std::string>().find("TIMESTAMP"), std::string::npos) << b["tracer"];
    // the copy-end stamp follows the data packets as ROCr's does; whether it waits for their writes is unconfirmed
    // (issue 25), so the record says the copy time may be short
    EXPECT_NE(b["tracer"].get<std::string>().find("copy end may be early"), std::string::npos) << b["tracer"];
    EXPECT_EQ(b["copies_per_operation"], 1);  // one command: one stamped interval per operation
    EXPECT_GT(b["copy"].get<double>(), 0.0);
    EXPECT_LE(b["copy"].get<double>(), b["total"].get<double>() * 2);  // the engine's copy inside the operation's time
    EXPECT_EQ(b["aligned_fraction"], 1.0) << trigger;
  }
}

// ---- host memory and block layouts ------------------------------------------------------------

namespace {

Layout block_layout(std::uint64_t block, Layout::Order order, std::uint64_t pool = 0) {
  Layout l;
  l.blocks = true;
  l.block_bytes = block;
  l.order = order;
  l.pool_bytes = pool;
  l.stride_bytes = order == Layout::Order::strided ? 3 * block : 0;  // strided: two free slots between blocks
  return l;
}

// A host-memory pattern's case on the software engine: `blocks` blocks of `block` bytes per transfer.
Case host_sdma_case(const std::string& pattern, int ranks, std::size_t block, std::size_t blocks, const Layout::Order order,
                    json options, HostKind kind = HostKind::pinned, Timing timing = Timing::oneshot, int depth = 4) {
  std::vector<int> devs(static_cast<std::size_t>(find_pattern(pattern)->ranks_used(ranks)));
  std::iota(devs.begin(), devs.end(), 0);
  Case c{.pattern = pattern,
         .variant = EngineVariant{"sdma", with_defaults("sdma", std::move(options))},
         .devices = devs,
         .bytes_per_rank = block * blocks,
         .timing = timing,
         .run = {.warmup = 1,
                 .iterations = 3,
                 .pipeline_depth = timing == Timing::pipelined ? depth : 1}};
  // random blocks in a pool of twice their size: half the destination's slots stay unwritten (gaps)
  c.layout = block_layout(block, order, order == Layout::Order::random ? 2 * block * blocks : 0);
  c.host.kind = kind;
  return testing_support::planned(c);
}

// The registry's patterns with host-memory buffers (out of place: blocks do not apply in place).
std::vector<std::string> host_memory_patterns() {
  std::vector<std::string> out;
  for (const Pattern* p : all_patterns())
    if (p->uses_host_memory()) out.emplace_back(p->name());
  return out;
}

// Runs a case on the software engine, or with one whose operation moves a tampered plan (the harness
// validates against the true one).
json run_sdma(const Case& c, const std::function<void(Plan&)>& tamper = {}) {
  auto backend = testing_support::host_backend();
  auto engine = make_engine("sdma", "host").value();
  testing_support::TamperingEngine wrapped(*engine, tamper);
  return to_json(run_case(c, &wrapped, *backend));
}

// The packet dump of one operation of a case (set up and validated).
json dump_of(const Case& c) {
  auto backend = testing_support::host_backend();
  auto engine = make_engine("sdma", "host").value();
  CaseExecution e(c, engine.get(), "", *backend);
  e.setup();
  EXPECT_EQ(e.status(), Status::ok) << e.reason();
  return e.packet_dump();
}

int count_packets(const json& dump, const std::string& name) {
  int n = 0;
  for (const auto& q : dump["queues"])
    for (const auto& p : q["packets"]) n += p == name;
  return n;
}

}  // namespace

class SdmaHostLayouts : public ::testing::TestWithParam<std::tuple<std::string, std::string, Layout::Order>> {};

TEST_P(SdmaHostLayouts, EveryBlockAndEveryGapValidates) {
  const auto& [pattern, schedule, order] = GetParam();
  json options{{"schedule", schedule}};
  if (schedule == "b2b") options["ways"] = 4096;  // every block of a rank behind one completion
  const Case c = host_sdma_case(pattern, 2, 1024, 24, order, options);
  ASSERT_TRUE(c.plan);
  EXPECT_EQ(c.plan->gaps, order == Layout::Order::random);
  const json r = run_sdma(c);
  ASSERT_EQ(r["status"], "ok") << r["name"] << ": " << r["reason"];
  EXPECT_EQ(r["validated"], true);
  const json& h = r["host_memory"];
  ASSERT_TRUE(h.is_object()) << r.dump();
  EXPECT_EQ(h["verified"], true) << h.dump();
  for (const json& b : h["buffers"]) EXPECT_FALSE(b["register_s"].is_null()) << b.dump();  // pinned: mlock'ed
  const std::size_t blocks = c.plan->transfers.size(), issuers = c.plan->issuers().size();
  const std::size_t commands = schedule == "pcpy" ? blocks : issuers;
  EXPECT_EQ(r["engine_details"]["commands_per_operation"], commands);
  EXPECT_EQ(r["engine_details"]["packets_per_operation"]["COPY_LINEAR"], blocks);  // one packet per block
  for (const json& q : r["engine_details"]["queues"]) EXPECT_LT(q["engine"].get<int>(), 2) << q;  // host-facing engines
  const json dump = dump_of(c);
  EXPECT_EQ(count_packets(dump, "COPY_LINEAR"), static_cast<int>(blocks));
  EXPECT_EQ(count_packets(dump, "ATOMIC_ADD64"), static_cast<int>(commands));
}

INSTANTIATE_TEST_SUITE_P(Soft, SdmaHostLayouts,
                         ::testing::Combine(::testing::ValuesIn(host_memory_patterns()),
                                            ::testing::Values("pcpy", "b2b"),
                                            ::testing::Values(Layout::Order::sequential, Layout::Order::random)),
                         [](const auto& info) {
                           std::string n = std::get<0>(info.param) + "_" + std::get<1>(info.param) + "_" +
                                           std::string(to_string(std::get<2>(info.param)));
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

TEST(SdmaHostMemory, ABlockPlantedInAnotherBlocksSlotFailsValidation) {
  for (const char* pattern : {"d2h", "h2d"}) {
    const Case c = host_sdma_case(pattern, 1, 4096, 16, Layout::Order::random, {{"schedule", "pcpy"}});
    // the operation writes blocks 3 and 7 into each other's slots: every byte is real data, misplaced
    const json r = run_sdma(c, [](Plan& p) { std::swap(p.transfers[3].dst_offset, p.transfers[7].dst_offset); });
    ASSERT_EQ(r["status"], "failed") << pattern << ": " << r.dump();
    EXPECT_NE(r["reason"].get<std::string>().find("validation: rank 0"), std::string::npos) << r["reason"];
    // and a block put in a pool slot no block was meant for: the gap there loses its poison
    const std::size_t free_slot = c.plan->unwritten(0).front().first;
    const json g = run_sdma(c, [free_slot](Plan& p) { p.transfers[5].dst_offset = free_slot; });
    ASSERT_EQ(g["status"], "failed") << pattern << ": " << g.dump();
  }
}

// A block layout's breakdown on the software engine (issue 54): one stamped command per block, every operation's
// stamps inside it, in both timing modes (the breakdown's passes launch one operation and wait for it).
TEST(SdmaHostMemory, ABlockLayoutsBreakdownStampsEachBlock) {
  for (Timing timing : {Timing::oneshot, Timing::pipelined}) {
    for (const char* pattern : {"d2h", "h2d"}) {
      Case c = host_sdma_case(pattern, 1, 4096, 16, Layout::Order::random, {{"schedule", "pcpy"}}, HostKind::pinned, timing);
      c.run.breakdown = true;
      const json r = run_sdma(c);
      ASSERT_EQ(r["status"], "ok") << r.dump();
      const json& b = r["breakdown_us"];
      ASSERT_FALSE(b.contains("error")) << b;
      EXPECT_NE(b["tracer"].get<std::string>().find("TIMESTAMP"), std::string::npos) << b["tracer"];
      EXPECT_EQ(b["copies_per_operation"], 16) << pattern;
      EXPECT_EQ(b["aligned_fraction"], 1.0) << pattern;
      EXPECT_GT(b["copy"].get<double>(), 0.0);
    }
  }
}

TEST(SdmaHostMemory, HostCopiesRunOnHostFacingEnginesUnderEveryOption) {
  for (const std::string engines : {"recommended", "round-robin", "map:" DMABENCH_SOURCE_DIR "/configs/mi300x-sdma.map"}) {
    const Case c = host_sdma_case("h2d-bidir", 1, 4096, 8, Layout::Order::sequential, {{"engines", engines}});
    const json r = run_sdma(c);
    ASSERT_EQ(r["status"], "ok") << engines << ": " << r["reason"];
    std::map<int, std::set<int>> engines_of_rank;
    for (const json& q : r["engine_details"]["queues"]) engines_of_rank[q["rank"]].insert(q["engine"].get<int>());
    if (engines == "round-robin") {  // each direction's blocks over both host-facing engines
      EXPECT_EQ(engines_of_rank[0], (std::set<int>{0, 1}));
      EXPECT_EQ(engines_of_rank[1], (std::set<int>{0, 1}));
    } else {  // ROCr's gfx94x assignment: host -> device on SDMA1, device -> host on SDMA0
      EXPECT_EQ(engines_of_rank[0], std::set<int>{1}) << engines;
      EXPECT_EQ(engines_of_rank[1], std::set<int>{0}) << engines;
    }
  }
}

TEST(SdmaHostMemory, FourThousandBlocksKeepTheRingsSane) {
  // 4096 one-block commands per operation (pcpy): the ring is capped, one operation fits, the sample runs
  const Case c = host_sdma_case("h2d", 1, 256, 4096, Layout::Order::random, {{"schedule", "pcpy"}});
  const json r = run_sdma(c);
  ASSERT_EQ(r["status"], "ok") << r["reason"];
  EXPECT_EQ(r["engine_details"]["commands_per_operation"], 4096);
  // pre-launch posts every operation of a sample ahead: 4 fit, 64 would need more than the largest ring
  const json four = run_sdma(host_sdma_case("d2h", 1, 256, 4096, Layout::Order::random, {{"trigger", "prelaunch"}},
                                            HostKind::pinned, Timing::pipelined, 4));
  EXPECT_EQ(four["status"], "ok") << four["reason"];
  const json many = run_sdma(host_sdma_case("d2h", 1, 256, 4096, Layout::Order::random, {{"trigger", "prelaunch"}},
                                            HostKind::pinned, Timing::pipelined, 64));
  ASSERT_EQ(many["status"], "skipped") << many.dump();
  EXPECT_NE(many["reason"].get<std::string>().find("posts the 64 operations of a sample ahead"), std::string::npos)
      << many["reason"];
}

TEST(SdmaHostMemory, EveryHostKindRunsOnTheSoftwareEngine) {
  for (HostKind kind : all_host_kinds()) {
    const json r = run_sdma(host_sdma_case("d2h", 1, 4096, 4, Layout::Order::strided, {}, kind));
    ASSERT_EQ(r["status"], "ok") << to_string(kind) << ": " << r["reason"];
    EXPECT_EQ(r["host_memory"]["kind"], to_string(kind));
    for (const json& b : r["host_memory"]["buffers"]) EXPECT_EQ(b["register_s"].is_null(), kind == HostKind::pageable) << b.dump();
  }
}

// ---- first-run defects (issue 25): atomics, fused engines, per-GPU clocks, packet limits, teardown order --------

namespace {

json run_on(sdma::SoftSettings settings, const Case& c) {
  auto backend = testing_support::host_backend();
  auto engine = make_sdma_engine_on(sdma::make_soft_platform(std::move(settings)));
  return to_json(run_case(c, engine.get(), *backend));
}

}  // namespace

// A GPU whose link to the CPU lacks PCIe 64-bit atomics (KFD's NoAtomics64bit) cannot complete with an ATOMIC on the
// completion word in system memory: sync=atomic is skipped saying so, and the default (auto) completes that GPU's
// commands with FENCE, as ROCr does. The software engine faults on such an ATOMIC, so a wrong choice fails the case.
TEST(SdmaFirstRun, MissingHostAtomicsSkipAtomicAndTheDefaultBecomesFence) {
  sdma::SoftSettings s;
  s.no_host_atomics = {1};
  const json atomic = run_on(s, sdma_case("allgather", 2, 4096, {{"sync", "atomic"}}));
  ASSERT_EQ(atomic["status"], "skipped") << atomic.dump();
  EXPECT_NE(atomic["reason"].get<std::string>().find("sync=atomic"), std::string::npos) << atomic["reason"];
  EXPECT_NE(atomic["reason"].get<std::string>().find("no PCIe 64-bit atomics"), std::string::npos) << atomic["reason"];
  const json mixed = run_on(s, sdma_case("allgather", 2, 4096, json::object()));
  ASSERT_EQ(mixed["status"], "ok") << mixed["reason"];
  EXPECT_EQ(mixed["options"]["sync"], "auto");
  EXPECT_EQ(mixed["engine_details"]["sync"], "atomic on GPUs 0, fence on GPUs 1");
  // allgather on 2 ranks: each rank copies its block to itself and to its peer, two commands per rank
  EXPECT_EQ(mixed["engine_details"]["packets_per_operation"]["FENCE"], 2);
  EXPECT_EQ(mixed["engine_details"]["packets_per_operation"]["ATOMIC_ADD64"], 2);
  s.no_host_atomics = {0, 1};
  const json fence = run_on(s, sdma_case("alltoall", 2, 4096, {{"trigger", "prelaunch"}}));
  ASSERT_EQ(fence["status"], "ok") << fence["reason"];
  EXPECT_EQ(fence["engine_details"]["sync"], "fence");
  EXPECT_FALSE(fence["engine_details"]["packets_per_operation"].contains("ATOMIC_ADD64"));
  const json everywhere = run_on(sdma::SoftSettings{}, sdma_case("allgather", 2, 4096, json::object()));
  ASSERT_EQ(everywhere["status"], "ok") << everywhere["reason"];
  EXPECT_EQ(everywhere["engine_details"]["sync"], "atomic");
}

// A fake MI308X-like topology: KFD counts 8 engines (2 + 6) and the odd ones are fused off. Every case that would use an
// engine that is not there or not backed is skipped with the reason before any queue exists (never a hang); the ones
// that avoid them run.
TEST(SdmaFirstRun, EnginesThatAreNotThereOrFusedOffAreSkippedNeverUsed) {
  sdma::SoftSettings s;
  s.engines = 8;
  s.fused_engines = 0xAA;  // 1, 3, 5, 7
  // the made-up recommended table names engines up to 14: GPU 1 -> GPU 0 gets engine 14
  const json rec = run_on(s, sdma_case("allgather", 2, 4096, json::object()));
  ASSERT_EQ(rec["status"], "skipped") << rec.dump();
  EXPECT_NE(rec["reason"].get<std::string>().find("recommended engine for GPU 1 -> GPU 0 cannot be used: engine 14 does not exist"),
            std::string::npos)
      << rec["reason"];
  const std::string map = (std::filesystem::temp_directory_path() / ("dmabench-fused-" + std::to_string(::getpid()) + ".map")).string();
  std::ofstream(map) << "0,3,1\n1,2,0\n";
  const json fused = run_on(s, sdma_case("allgather", 2, 4096, {{"engines", "map:" + map}}));
  ASSERT_EQ(fused["status"], "skipped") << fused.dump();
  EXPECT_NE(fused["reason"].get<std::string>().find("engine 3 of device 0 is fused off"), std::string::npos) << fused["reason"];
  std::filesystem::remove(map);
  // round-robin and host copies keep to the backed engines
  const json rr = run_on(s, sdma_case("alltoall", 8, 8 * 4096, {{"engines", "round-robin"}}));
  ASSERT_EQ(rr["status"], "ok") << rr["reason"];
  std::set<int> used;
  for (const json& q : rr["engine_details"]["queues"]) used.insert(q["engine"].get<int>());
  EXPECT_EQ(used, (std::set<int>{2, 4, 6}));
  const json h2d = run_on(s, host_sdma_case("h2d", 1, 4096, 4, Layout::Order::sequential, json::object()));
  ASSERT_EQ(h2d["status"], "ok") << h2d["reason"];
  for (const json& q : h2d["engine_details"]["queues"]) EXPECT_EQ(q["engine"], 0) << q;  // engine 1 is fused off
  auto p = sdma::make_soft_platform(s);
  EXPECT_FALSE(p->create_queue(0, 3, 4096));  // the platform itself refuses a fused-off engine
  EXPECT_FALSE(p->create_queue(0, 8, 4096));
  EXPECT_TRUE(p->create_queue(0, 6, 4096));
}

// Two fake GPUs whose counters differ in rate and offset: each command's TIMESTAMP ticks are converted with the clock
// pairs of the GPU that wrote them (ROCr's TranslateTime per agent). With GPU 0's pairs for both, GPU 1's intervals
// would land about 10^12 ticks away from the traced pass.
TEST(SdmaFirstRun, EachGpusTimestampsUseThatGpusClock) {
  const sdma::ClockMap m = sdma::ClockMap::between({1000, 5000.0}, {3000, 6000.0}).value();  // 0.5 ns per tick
  EXPECT_DOUBLE_EQ(m.host_ns(2000), 5500.0);
  EXPECT_DOUBLE_EQ(m.host_ns(1000), 5000.0);
  EXPECT_FALSE(sdma::ClockMap::between({1000, 5000.0}, {1000, 6000.0}));
  sdma::SoftSettings s;
  s.device_timestamp_hz = {{1, 25e6}};
  s.device_tick_offset = {{1, std::uint64_t{1} << 40}};
  auto engine = make_sdma_engine_on(sdma::make_soft_platform(s));
  const Case c = sdma_case("allgather", 2, 1 << 20, json::object());
  ASSERT_TRUE(c.plan);
  auto op = engine->prepare(*c.plan, *engine->parse(c.variant.options));
  auto tracer = op->copy_tracer().value();
  const double before = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
  tracer->start();
  for (int k = 0; k < 3; ++k) {
    op->arm(1);
    op->launch();
    op->wait();
  }
  const auto intervals = tracer->stop();
  const double after = static_cast<double>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
  ASSERT_EQ(intervals.size(), 12u);  // 3 operations x 2 commands per rank (its own block and its peer's)
  for (const auto& iv : intervals) {
    EXPECT_GE(iv.start_ns, before - 1000) << iv.start_ns - before;  // 1 us: a 25 MHz tick is 40 ns
    EXPECT_LE(iv.end_ns, after + 1000) << iv.end_ns - after;
    EXPECT_LE(iv.start_ns, iv.end_ns + 100);
  }
}

// max_packet_bytes stops at ROCr's largest linear copy on gfx94x (0x3FFFFFFF); broadcast packets split at ROCr's
// broadcast limit (0x3FFFE0) whatever it says.
TEST(SdmaFirstRun, PacketSizesStayWithinWhatTheSourcesAllow) {
  const auto specs = sdma_option_specs();
  const auto spec = std::find_if(specs.begin(), specs.end(), [](const OptionSpec& o) { return o.name == "max_packet_bytes"; });
  ASSERT_NE(spec, specs.end());
  EXPECT_TRUE(spec->accepts(1073741823));
  EXPECT_FALSE(spec->accepts(1073741824));  // the artifact's 1 GiB: one byte more than ROCr issues
  EXPECT_EQ(spec->default_value, 4194304);
  SdmaOptions o = SdmaOptions::from(with_defaults("sdma", {{"packet", "broadcast"}, {"max_packet_bytes", 1073741823}}));
  const Transfer t1{.issuer = 0, .src_rank = 0, .src_offset = 0, .dst_rank = 1, .dst_offset = 0, .bytes = 10 << 20};
  Transfer t2 = t1;
  t2.dst_rank = 2;
  const sdma_commands::Command bcast{0, 2, {sdma_commands::Unit{sdma_commands::Unit::broadcast, 0, 2, {t1, t2}}}};
  const sdma_commands::Where at{[](int, std::uint64_t off) { return off; }, [](int r, std::uint64_t off) { return (std::uint64_t(r) << 32) + off; }};
  const auto packets = sdma_commands::data_packets(bcast, o, at);
  ASSERT_EQ(packets.size(), 3u);  // 10 MiB in chunks of 0x3FFFE0
  for (const auto& pk : packets) EXPECT_LE(std::get<sdma::CopyBroadcast>(pk).bytes, sdma::kMaxBroadcastBytes);
  const sdma_commands::Command copy{0, 2, {sdma_commands::Unit{sdma_commands::Unit::copy, 0, 2, {t1}}}};
  EXPECT_EQ(sdma_commands::data_packets(copy, o, at).size(), 1u);  // a linear copy takes max_packet_bytes
}

// swap_alignment=none leaves block sizes unchecked but never puts address bits 5:0 (reserved in ROCr's SWAP packet)
// into a packet: a block off 64 bytes is skipped with that reason, an aligned one of any size runs.
TEST(SdmaFirstRun, SwapNeverWritesReservedAddressBits) {
  auto backend = testing_support::host_backend();
  auto engine = make_engine("sdma", "host").value();
  const json odd = to_json(run_case(sdma_case("alltoall-inplace", 2, 1001, {{"packet", "swap"}, {"swap_alignment", "none"}}),
                                    engine.get(), *backend));
  ASSERT_EQ(odd["status"], "skipped") << odd.dump();
  EXPECT_NE(odd["reason"].get<std::string>().find("reserves address bits 5:0"), std::string::npos) << odd["reason"];
  // blocks of 1088 bytes (64 * 17) start on 64-byte boundaries: they run, in 64-byte-aligned chunks even where
  // max_packet_bytes (100) is not a multiple of 64
  const json aligned = to_json(run_case(sdma_case("alltoall-inplace", 2, 1088, {{"packet", "swap"}, {"swap_alignment", "none"},
                                                                                  {"max_packet_bytes", 100}}),
                                        engine.get(), *backend));
  ASSERT_EQ(aligned["status"], "ok") << aligned["reason"];
}

namespace {

// A software platform that logs when queues are destroyed and memory is freed, and refuses its n-th queue.
class RecordingPlatform final : public ForwardingPlatform {
 public:
  RecordingPlatform(int refuse_queue, std::shared_ptr<std::vector<std::string>> log) : refuse_(refuse_queue), log_(std::move(log)) {}
  sdma::Allocation alloc_device(int d, std::size_t n, const std::vector<int>& p) override {
    return logged(ForwardingPlatform::alloc_device(d, n, p), "free device");
  }
  sdma::Allocation alloc_host(std::size_t n, const std::vector<int>& p) override {
    return logged(ForwardingPlatform::alloc_host(n, p), "free host");
  }
  Maybe<std::unique_ptr<sdma::Queue>> create_queue(int device, int engine, std::size_t ring) override {
    if (++made_ == refuse_) return Maybe<std::unique_ptr<sdma::Queue>>::no("refused for the test");
    auto q = ForwardingPlatform::create_queue(device, engine, ring);
    if (!q) return q;
    log_->push_back("queue made");
    return std::unique_ptr<sdma::Queue>(std::make_unique<Logged>(std::move(q).value(), log_));
  }

 private:
  sdma::Allocation logged(sdma::Allocation a, const char* what) {
    void* p = a.get();
    return sdma::Allocation(p, [a = std::move(a), log = log_, what](void*) mutable {
      log->push_back(what);
      a.reset();
    });
  }
  struct Logged final : ForwardingQueue {
    Logged(std::unique_ptr<sdma::Queue> q, std::shared_ptr<std::vector<std::string>> log)
        : ForwardingQueue(std::move(q)), log_(std::move(log)) {}
    ~Logged() override {
      q_.reset();
      log_->push_back("queue destroyed");
    }
    std::shared_ptr<std::vector<std::string>> log_;
  };
  int refuse_, made_ = 0;
  std::shared_ptr<std::vector<std::string>> log_;
};

}  // namespace

// Completion words and timestamp slots are memory the engines write: on every path (a queue refused half way
// through setting up, and a case that ran) every queue is gone before any of that memory is freed.
TEST(SdmaFirstRun, QueuesGoBeforeTheMemoryTheyWrite) {
  for (int refuse : {3, 0}) {  // the third queue refused; none refused
    auto log = std::make_shared<std::vector<std::string>>();
    {
      auto backend = testing_support::host_backend();
      auto engine = make_sdma_engine_on(std::make_unique<RecordingPlatform>(refuse, log));
      // No breakdown here: it applies to the patterns one rank issues (Case::breakdown_applies()), one queue for a copy.
      // The timestamp slots are made and freed all the same; SdmaEngine.BreakdownComesFromTimestampPackets writes them.
      Case c = sdma_case("allgather", 4, 4096, json::object());
      const json r = to_json(run_case(c, engine.get(), *backend));
      EXPECT_EQ(r["status"], refuse ? "failed" : "ok") << r.dump();
      if (refuse) {
        EXPECT_NE(r["reason"].get<std::string>().find("refused for the test"), std::string::npos) << r["reason"];
      }
    }
    int live = 0, made = 0, freed = 0, freed_while_live = 0;
    for (const std::string& e : *log) {
      if (e == "queue made") ++live, ++made;
      else if (e == "queue destroyed") --live;
      else ++freed, freed_while_live += live > 0;
    }
    EXPECT_EQ(live, 0) << refuse;
    EXPECT_GE(made, 2) << refuse;
    EXPECT_GE(freed, 3) << refuse;  // completion words, timestamp slots, device buffers
    EXPECT_EQ(freed_while_live, 0) << refuse << ": " << fmt::format("{}", fmt::join(*log, ", "));
  }
}

// What `dmabench --features` prints per GPU for the first-run kit: atomics (so sync=auto's packet) and usable engines.
TEST(SdmaFirstRun, FeaturesSayAtomicsAndUsableEnginesPerGpu) {
  sdma::SoftSettings s;
  s.engines = 8;
  s.fused_engines = 0xAA;
  s.no_host_atomics = {1};
  const auto lines = sdma_platform_facts(*sdma::make_soft_platform(s), 2);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "GPU 0: PCIe 64-bit atomics to system memory: yes; sdma sync=auto (the default) completes with ATOMIC");
  EXPECT_NE(lines[1].find("GPU 0: usable SDMA engines: 0,2,4,6 (4 of 8 counted; host-facing below 2); left out: engine 1 of device 0 "
                          "is fused off"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find("GPU 1: PCIe 64-bit atomics to system memory: no ("), std::string::npos) << lines[2];
  EXPECT_NE(lines[2].find("completes with FENCE"), std::string::npos) << lines[2];
  EXPECT_EQ(sdma_platform_facts(*sdma::make_soft_platform(), 1)[1],
            "GPU 0: usable SDMA engines: 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15 (16 of 16 counted; host-facing below 2)");
}
