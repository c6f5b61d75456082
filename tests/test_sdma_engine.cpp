// The software SDMA engine and the sdma engine on it: ring wrap-around, faults, every variant on
// 2, 4 and 8 ranks with every byte validated, packet dumps; host memory endpoints with block layouts
// (every block and every gap validated, a misplaced block caught, host-facing engines, 4096 blocks).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "amd/sdma/packets.hpp"
#include "amd/sdma/ring.hpp"
#include "amd/sdma/soft_engine.hpp"
#include "bench/patterns/layout.hpp"
#include "bench/run_case.hpp"
#include "core/host_memory.hpp"
#include "engines/engine_factories.hpp"
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
  ASSERT_TRUE(eventually([&] { return load(&counter) == kRounds; })) << load(&counter) << "; " << q->fault().value_or("");
  EXPECT_EQ(load(&fence_word), static_cast<std::uint32_t>(kRounds - 1));
  EXPECT_GT(w.position() / 4096, 40u);  // wrapped the 4 KiB ring more than 40 times
  EXPECT_GT(std::count(cap.packets.begin(), cap.packets.end(), "NOP"), 10);
  EXPECT_EQ(q->fault(), std::nullopt);
  EXPECT_TRUE(eventually([&] { return *q->cells().rptr == w.position(); }));
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
                                       .engine = EngineVariant{"sdma", with_defaults("sdma", std::move(options))},
                                       .devices = devs,
                                       .bytes_per_rank = bytes,
                                       .timing = timing,
                                       .in_place = named.in_place,
                                       .warmup = 1,
                                       .iterations = 3,
                                       .pipeline_depth = timing == Timing::pipelined ? 4 : 1});
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
  const bool misaligned_swap = v.options.value("packet", "") == "swap" && !v.options.contains("swap_alignment") && bytes % 64 != 0;
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

TEST(SdmaEngine, PipelinedPrelaunchRunsManyOperationsAhead) {
  auto backend = testing_support::host_backend();
  auto engine = make_engine("sdma", "host").value();
  const json r = to_json(run_case(sdma_case("allgather", 4, 1024, {{"trigger", "prelaunch"}}, Timing::pipelined), engine.get(), *backend));
  ASSERT_EQ(r["status"], "ok") << r["reason"];
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

// A platform whose queues turn the first dword of their first submission into opcode 3.
class PlantingPlatform final : public sdma::Platform {
 public:
  PlantingPlatform() : inner_(sdma::make_soft_platform()) {}
  std::string name() const override { return inner_->name(); }
  bool hardware_times() const override { return false; }
  int device_count() const override { return inner_->device_count(); }
  int engine_count(int d) const override { return inner_->engine_count(d); }
  int first_xgmi_engine(int d) const override { return inner_->first_xgmi_engine(d); }
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
    auto q = inner_->create_queue(device, engine, ring);
    if (!q) return q;
    return std::unique_ptr<sdma::Queue>(std::make_unique<Planting>(std::move(q).value()));
  }
  sdma::ClockPair clock_counters(int d) override { return inner_->clock_counters(d); }
  WhyNot gpu_initiated_unsupported() const override { return inner_->gpu_initiated_unsupported(); }
  void gpu_store(int d, std::uint64_t* w, std::uint64_t v) override { inner_->gpu_store(d, w, v); }
  void gpu_submit(int d, sdma::Queue& q, const sdma::StagedPackets& s) override { inner_->gpu_submit(d, q, s); }
  json describe() const override { return inner_->describe(); }

 private:
  struct Planting final : sdma::Queue {
    explicit Planting(std::unique_ptr<sdma::Queue> q) : q_(std::move(q)) {}
    const sdma::QueueCells& cells() const override { return q_->cells(); }
    void submit(std::uint64_t wptr) override {
      if (!planted_) q_->cells().ring[0] = 0x0000FF03;  // opcode 3, sub-op 0xFF
      planted_ = true;
      q_->submit(wptr);
    }
    int device() const override { return q_->device(); }
    int engine() const override { return q_->engine(); }
    std::string describe() const override { return q_->describe(); }
    WhyNot fault() const override { return q_->fault(); }
    std::unique_ptr<sdma::Queue> q_;
    bool planted_ = false;
  };
  std::unique_ptr<sdma::Platform> inner_;
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
    c.breakdown = true;
    const json r = to_json(run_case(c, engine.get(), *backend));
    ASSERT_EQ(r["status"], "ok") << r["reason"];
    const json& b = r["breakdown_us"];
    ASSERT_FALSE(b.contains("error")) << b;
    EXPECT_NE(b["tracer"].get<std::string>().find("TIMESTAMP"), std::string::npos) << b["tracer"];
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
         .engine = EngineVariant{"sdma", with_defaults("sdma", std::move(options))},
         .devices = devs,
         .bytes_per_rank = block * blocks,
         .timing = timing,
         .warmup = 1,
         .iterations = 3,
         .pipeline_depth = timing == Timing::pipelined ? depth : 1};
  // random blocks in a pool of twice their size: half the destination's slots stay unwritten (gaps)
  c.layout = block_layout(block, order, order == Layout::Order::random ? 2 * block * blocks : 0);
  c.host.kind = kind;
  return testing_support::planned(c);
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
                         ::testing::Combine(::testing::Values("h2d", "d2h", "h2d-bidir", "host-to-all", "all-to-host"),
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
