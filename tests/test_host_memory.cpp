// Host memory as an endpoint and block layouts, end to end on the host backend: every host pattern and
// layout validates; the record says where the host buffers are and that it checked; a block in the
// wrong slot (another block's, or a slot no block was meant for) fails the case; bad layouts are
// input errors naming the field.
#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "bench/config/config.hpp"
#include "patterns/layout.hpp"
#include "bench/run/record.hpp"
#include "bench/run/run_case.hpp"
#include "core/errors.hpp"
#include "core/host_memory.hpp"
#include "engines/registry.hpp"
#include "tests/test_support.hpp"

using namespace dmabench;
using json = nlohmann::json;

namespace {

Layout blocks(std::uint64_t block, Layout::Order order, std::uint64_t pool = 0, std::uint64_t stride = 0) {
  Layout l;
  l.blocks = true;
  l.block_bytes = block;
  l.order = order;
  l.pool_bytes = pool;
  l.stride_bytes = stride;
  return l;
}

Case host_case(const std::string& pattern, std::size_t bytes, const Layout& layout, HostKind kind = HostKind::pinned) {
  const Pattern* p = find_pattern(pattern);
  const int ranks = p->ranks_used(2);
  std::vector<int> devs;
  for (int i = 0; i < ranks; ++i) devs.push_back(i);
  Case c{.pattern = pattern, .variant = EngineVariant{"host", json::object()}, .devices = devs, .bytes_per_rank = bytes,
         .timing = Timing::oneshot, .run = {.warmup = 1, .iterations = 3}};
  c.layout = layout;
  c.host.kind = kind;
  return testing_support::planned(c);
}

// Runs a case with the real host engine, or with one whose operation moves a tampered plan.
json run(const Case& c, const std::function<void(Plan&)>& tamper = {}) {
  auto backend = testing_support::host_backend();
  auto engine = make_engine("host").value();
  testing_support::TamperingEngine wrapped(*engine, tamper);
  return to_json(run_case(c, &wrapped, *backend));
}

// The registry's patterns that block layouts apply to (patterns/layout.cpp): every transfer of their
// plan moves one whole buffer, and nothing is in place.
std::vector<std::string> one_buffer_patterns() {
  std::vector<std::string> out;
  for (const Pattern* p : all_patterns()) {
    const int ranks = p->ranks_used(2);
    if (ranks == 0) continue;
    std::vector<int> devs(ranks);
    std::iota(devs.begin(), devs.end(), 0);
    const Plan plan = p->plan(devs, 4096);
    const bool whole = std::all_of(plan.transfers.begin(), plan.transfers.end(), [&](const Transfer& t) {
      return t.src_offset == 0 && t.dst_offset == 0 && t.bytes == plan.src_bytes[t.src_rank] && t.bytes == plan.dst_bytes[t.dst_rank];
    });
    if (whole && plan.preset.empty() && !plan.exchange) out.emplace_back(p->name());
  }
  return out;
}

}  // namespace

TEST(HostLayouts, TheRegistryGivesEveryOneBufferPattern) {
  const std::vector<std::string> found = one_buffer_patterns();
  for (const char* p : {"copy", "bidir", "h2d", "d2h", "h2d-bidir", "host-to-all", "all-to-host"})
    EXPECT_NE(std::find(found.begin(), found.end(), p), found.end()) << p;
  for (const char* p : {"allgather", "alltoall"}) EXPECT_EQ(std::find(found.begin(), found.end(), p), found.end()) << p;
}

class HostLayouts : public ::testing::TestWithParam<std::tuple<std::string, Layout::Order, HostKind>> {};

TEST_P(HostLayouts, EveryBlockValidatesAndTheRecordSaysWhere) {
  const auto& [pattern, order, kind] = GetParam();
  // 48 blocks of 4 KiB; random ones in a pool of twice that (gaps), strided ones 3 blocks apart (gaps)
  const Case c = host_case(pattern, 48 * 4096, blocks(4096, order, 96 * 4096, 3 * 4096), kind);
  ASSERT_TRUE(c.plan);
  EXPECT_EQ(c.plan->gaps, order != Layout::Order::sequential);
  const json r = run(c);
  ASSERT_EQ(r["status"], "ok") << r["name"] << ": " << r["reason"];
  EXPECT_EQ(r["validated"], true);
  EXPECT_EQ(r["layout"]["kind"], "blocks");
  EXPECT_EQ(r["layout"]["block_bytes"], 4096);
  const std::size_t per_op = c.plan->transfers.size();
  EXPECT_EQ(r["layout"]["blocks_per_op"], per_op);
  EXPECT_EQ(per_op % 48, 0u);
  EXPECT_NEAR(r["per_block_us"].get<double>(), r["latency_us"]["p50"].get<double>() / per_op, 1e-9);
  if (!find_pattern(pattern)->uses_host_memory()) {
    EXPECT_FALSE(r.contains("host_memory"));
    return;
  }
  const json& h = r["host_memory"];
  EXPECT_EQ(h["kind"], to_string(kind));
  EXPECT_EQ(h["numa"], "local");
  EXPECT_EQ(h["verified"], true) << h.dump();
  ASSERT_FALSE(h["buffers"].empty());
  for (const json& b : h["buffers"]) {
    EXPECT_EQ(b["numa_node"], hostmem::nodes().front());
    EXPECT_GE(b["alloc_s"].get<double>(), 0.0);
    EXPECT_EQ(b["register_s"].is_null(), kind == HostKind::pageable) << b.dump();  // mlock'ed unless pageable
  }
  EXPECT_NE(r["name"].get<std::string>().find("/host=" + std::string(to_string(kind)) + ",numa=local/blocks=48x4KiB"),
            std::string::npos)
      << r["name"];
}

INSTANTIATE_TEST_SUITE_P(Host, HostLayouts,
                         ::testing::Combine(::testing::ValuesIn(one_buffer_patterns()),
                                            ::testing::Values(Layout::Order::sequential, Layout::Order::strided,
                                                              Layout::Order::random),
                                            ::testing::Values(HostKind::pinned, HostKind::pageable)));

TEST(HostLayouts, ABlockInAnotherBlocksSlotFailsTheCase) {
  const Case c = host_case("d2h", 16 * 4096, blocks(4096, Layout::Order::random));
  // the operation writes blocks 3 and 7 into each other's slots: every byte is real data, misplaced
  const json r = run(c, [](Plan& p) { std::swap(p.transfers[3].dst_offset, p.transfers[7].dst_offset); });
  ASSERT_EQ(r["status"], "failed") << r.dump();
  EXPECT_NE(r["reason"].get<std::string>().find("validation: rank 0"), std::string::npos) << r["reason"];
}

TEST(HostLayouts, ABlockInASlotNoBlockWasMeantForFailsTheCase) {
  // a pool with room for 32 blocks holds 16: the operation puts block 5 in a free slot instead
  const Case c = host_case("h2d", 16 * 4096, blocks(4096, Layout::Order::random, 32 * 4096));
  const auto gaps = c.plan->unwritten(0);
  ASSERT_FALSE(gaps.empty());
  const std::size_t free_slot = gaps.front().first;
  const json r = run(c, [free_slot](Plan& p) { p.transfers[5].dst_offset = free_slot; });
  ASSERT_EQ(r["status"], "failed") << r.dump();
  EXPECT_NE(r["reason"].get<std::string>().find("validation: rank 0"), std::string::npos) << r["reason"];
}

TEST(HostLayouts, BlocksScatterAndCoalesceBack) {
  Plan seq = find_pattern("h2d")->plan({0}, 8 * 1024);
  apply_layout(seq, blocks(1024, Layout::Order::sequential));
  ASSERT_EQ(seq.transfers.size(), 8u);
  EXPECT_EQ(coalesce(seq.transfers).size(), 1u);  // adjacent on both sides: one copy
  EXPECT_FALSE(seq.check());
  Plan rnd = find_pattern("h2d")->plan({0}, 8 * 1024);
  apply_layout(rnd, blocks(1024, Layout::Order::random, 64 * 1024));
  EXPECT_EQ(rnd.src_bytes[0], 64u * 1024);
  EXPECT_EQ(rnd.dst_bytes[0], 64u * 1024);
  EXPECT_TRUE(rnd.gaps);
  EXPECT_FALSE(rnd.check()) << *rnd.check();
  std::set<std::size_t> slots;
  for (const Transfer& t : rnd.transfers) slots.insert(t.dst_offset);
  EXPECT_EQ(slots.size(), 8u);  // every block its own slot
  Plan again = find_pattern("h2d")->plan({0}, 8 * 1024);
  apply_layout(again, blocks(1024, Layout::Order::random, 64 * 1024));
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(again.transfers[i].dst_offset, rnd.transfers[i].dst_offset);  // seeded
}

// Fragmentation (layout.run_blocks): runs of k adjacent blocks on both sides, so coalescing merges each run into one
// copy; a block of a run written into another run's slot still fails the case.
TEST(HostLayouts, RunsOfAdjacentBlocksCoalesceIntoOneCopyPerRun) {
  for (const Layout::Order order : {Layout::Order::random, Layout::Order::strided})
    for (const std::uint64_t k : {1u, 2u, 4u, 16u}) {
      Layout l = blocks(1024, order, 256 * 1024, 64 * 1024);
      l.run_blocks = k;
      Plan p = find_pattern("h2d")->plan({0}, 64 * 1024);
      apply_layout(p, l);
      ASSERT_EQ(p.transfers.size(), 64u);
      EXPECT_FALSE(p.check()) << *p.check();
      for (std::size_t i = 0; i < 64; ++i)
        if (i % k) {  // inside a run: adjacent to the block before on both sides
          EXPECT_EQ(p.transfers[i].src_offset, p.transfers[i - 1].src_offset + 1024) << "k " << k << " block " << i;
          EXPECT_EQ(p.transfers[i].dst_offset, p.transfers[i - 1].dst_offset + 1024) << "k " << k << " block " << i;
        }
      const std::size_t copies = coalesce(p.transfers).size();
      EXPECT_LE(copies, 64 / k) << "k " << k;
      if (order == Layout::Order::strided) EXPECT_EQ(copies, 64 / k) << "strided runs are apart";
      EXPECT_GE(copies, 64 / k / 2) << "k " << k << ": runs are placed apart, most not merged";
      EXPECT_NE(l.label(64 * 1024).find(k == 1 ? "" : fmt::format(",run={}", k)), std::string::npos) << l.label(64 * 1024);
      EXPECT_EQ(to_json(l)["run_blocks"], k);
    }
  Layout l = blocks(4096, Layout::Order::random, 64 * 4096);
  l.run_blocks = 4;
  const Case c = host_case("d2h", 16 * 4096, l);
  ASSERT_EQ(run(c)["status"], "ok") << run(c).dump();
  EXPECT_NE(c.name().find(",run=4"), std::string::npos) << c.name();
  // block 1 (run 0) and block 6 (run 1) swap slots: real data, misplaced
  const json r = run(c, [](Plan& p) { std::swap(p.transfers[1].dst_offset, p.transfers[6].dst_offset); });
  ASSERT_EQ(r["status"], "failed") << r.dump();
  EXPECT_NE(r["reason"].get<std::string>().find("validation: rank 0"), std::string::npos) << r["reason"];
}

TEST(HostLayouts, RunsLongerThanTheBlocksOrAPoolTooSmallForTheRunsAreInputErrors) {
  Layout l = blocks(1024, Layout::Order::random, 64 * 1024);
  l.run_blocks = 16;
  Plan few = find_pattern("d2h")->plan({0}, 8 * 1024);  // 8 blocks, runs of 16
  EXPECT_THROW(apply_layout(few, l), InputError);
  l.pool_bytes = 16 * 1024;  // one run slot of 16 KiB; 32 blocks need 2
  Plan more = find_pattern("d2h")->plan({0}, 32 * 1024);
  EXPECT_THROW(apply_layout(more, l), InputError);
  for (const auto& [text, field] : std::vector<std::pair<const char*, const char*>>{
           {R"({"layout": {"kind": "blocks", "block_bytes": "4KiB", "blocks": 8, "order": "random", "run_blocks": 16}})",
            "layout.run_blocks"},
           {R"({"sizes": "1MiB", "layout": {"kind": "blocks", "block_bytes": "4KiB", "run_blocks": 4}})", "layout.run_blocks"},
           {R"({"sizes": "1MiB", "layout": {"kind": "blocks", "block_bytes": "4KiB", "order": "random", "run_blocks": 0}})",
            "layout.run_blocks"},
           {R"({"sizes": "1MiB", "layout": {"kind": "blocks", "block_bytes": "4KiB", "order": "strided", "stride_bytes": "8KiB", "run_blocks": 4}})",
            "layout.stride_bytes"},
           {R"({"layout": {"kind": "blocks", "block_bytes": "4KiB", "blocks": 64, "order": "random", "pool_bytes": "64KiB", "run_blocks": 8}})",
            "layout.pool_bytes"}}) {
    try {
      parse_config(json::parse(text));
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  }
  const Config c = parse_config(json::parse(
      R"({"patterns": ["h2d"], "engines": ["host"], "layout": {"kind": "blocks", "block_bytes": "4KiB", "blocks": 64,
          "order": "random", "run_blocks": [1, 4, 16, 64]}})"));
  EXPECT_EQ(c.layouts.size(), 4u) << "run_blocks is an axis";
}

TEST(HostLayouts, BadLayoutsAreInputErrors) {
  Plan gather = find_pattern("allgather")->plan({0, 1}, 4096);
  EXPECT_THROW(apply_layout(gather, blocks(1024, Layout::Order::sequential)), InputError);
  Plan odd = find_pattern("d2h")->plan({0}, 4097);
  EXPECT_THROW(apply_layout(odd, blocks(1024, Layout::Order::sequential)), InputError);
  Plan small_pool = find_pattern("d2h")->plan({0}, 8192);
  EXPECT_THROW(apply_layout(small_pool, blocks(1024, Layout::Order::random, 4096)), InputError);
  auto expect_error = [](const char* text, const std::string& field) {
    try {
      parse_config(json::parse(text));
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  expect_error(R"({"sizes": "1MiB", "layout": {"kind": "blocks", "block_bytes": "1KiB", "order": "random", "pool_bytes": "512"}})",
               "layout.pool_bytes");
  expect_error(R"({"sizes": "1MiB", "layout": {"kind": "blocks", "block_bytes": "4KiB", "order": "strided", "stride_bytes": "1KiB"}})",
               "layout.stride_bytes");
  expect_error(R"({"sizes": "1MiB", "layout": {"kind": "blocks"}})", "layout.block_bytes");
  expect_error(R"({"sizes": "1MiB", "layout": {"kind": "pages", "block_bytes": 1}})", "layout.kind");
  expect_error(R"({"layout": {"kind": "blocks", "block_bytes": "4KiB", "blocks": 64}, "sizes": "1MiB"})", "sizes");
  expect_error(R"({"sizes": "1MiB", "host_memory": {"kind": "locked"}})", "host_memory.kind");
  expect_error(R"({"sizes": "1MiB", "host_memory": {"numa": 999}})", "host_memory.numa");
  expect_error(R"({"sizes": "1MiB", "host_memory": {"numa": "near"}})", "host_memory.numa");
  expect_error(R"({"sizes": "1MiB", "layout": {"kind": "blocks", "block_bytes": "4KiB", "blocks": 100000}})", "layout.blocks");
  // a pool size axis: each entry checked against the blocks it must hold, and only for order random
  expect_error(R"({"layout": {"kind": "blocks", "block_bytes": "4KiB", "blocks": 64, "order": "random", "pool_bytes": ["1GiB", "128KiB"]}})",
               "layout.pool_bytes");
  expect_error(R"({"layout": {"kind": "blocks", "block_bytes": "4KiB", "blocks": 64, "order": "random", "pool_bytes": ["1GiB", "big"]}})",
               "layout.pool_bytes");
  expect_error(R"({"layout": {"kind": "blocks", "block_bytes": "4KiB", "blocks": 64, "pool_bytes": ["1GiB", "4GiB"]}})",
               "layout.pool_bytes");
}

// The pool's size is an axis (issue 54): a list in pool_bytes makes one layout a pool, each case's name says which.
TEST(HostLayouts, PoolSizeIsAnAxis) {
  const Config c = parse_config(json::parse(
      R"({"patterns": ["h2d"], "engines": ["host"], "layout": {"kind": "blocks", "block_bytes": ["4KiB", "16KiB"],
          "blocks": 64, "order": "random", "pool_bytes": ["1MiB", "4GiB"]}})"));
  ASSERT_EQ(c.layouts.size(), 4u);
  std::map<std::uint64_t, int> pools;
  for (const Layout& l : c.layouts) ++pools[l.pool_bytes];
  EXPECT_EQ(pools, (std::map<std::uint64_t, int>{{1u << 20, 2}, {std::uint64_t{4} << 30, 2}}));
  const auto cases = expand(c, 64, {0}, "host rank");
  std::set<std::string> names;
  for (const Case& k : cases) names.insert(k.name());
  EXPECT_EQ(names.size(), cases.size());
  EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.find("pool=4GiB") != std::string::npos; }));
  EXPECT_TRUE(std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.find("pool=1MiB") != std::string::npos; }));
}

TEST(HostLayouts, CountedLayoutsSetTheSizeAndRemoteNeedsASecondNode) {
  const Config c = parse_config(json::parse(
      R"({"patterns": ["h2d"], "engines": ["host"], "host_memory": {"numa": ["local", "remote"]},
          "layout": {"kind": "blocks", "block_bytes": ["4KiB", "32KiB"], "blocks": [4, 16]}})"));
  const auto cases = expand(c, 64, {0, 1}, "host rank");
  ASSERT_EQ(cases.size(), 2u * 2 * 2 * 2);  // numa x block_bytes x blocks x timings
  EXPECT_EQ(cases[0].bytes_per_rank, 4u * 4096);
  const json r = run(cases[2]);  // numa remote
  EXPECT_NE(cases[2].name().find("numa=remote"), std::string::npos) << cases[2].name();
  if (hostmem::nodes().size() == 1) {
    EXPECT_EQ(r["status"], "skipped");
    EXPECT_NE(r["reason"].get<std::string>().find("one NUMA node"), std::string::npos) << r["reason"];
  } else {
    EXPECT_EQ(r["status"], "ok") << r["reason"];
  }
}
