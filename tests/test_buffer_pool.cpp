// Buffers kept across the cases of a sweep (engines/buffer_pool.hpp), on the host backend: a sweep of cases
// of one place and size allocates once; validation stays as strict with buffers reused (a block planted in
// a slot no block was meant for fails its case, also in a buffer an earlier case left behind, and the case
// after it passes); the pool's own rules (places, idle limit, freeing what waits idle when an allocation
// fails, the validation state of a buffer given back).
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "patterns/layout.hpp"
#include "bench/run/record.hpp"
#include "bench/run/run_case.hpp"
#include "engines/buffer_pool.hpp"
#include "engines/registry.hpp"
#include "tests/test_support.hpp"

using namespace dmabench;
using json = nlohmann::json;

namespace {

// A d2h or h2d case of `count` 4 KiB blocks scattered in a pool of `pool` bytes, on the host engine.
Case paged(const std::string& pattern, std::size_t count, std::size_t pool, HostKind kind = HostKind::pinned,
           Timing timing = Timing::oneshot) {
  Layout l;
  l.blocks = true;
  l.block_bytes = 4096;
  l.order = Layout::Order::random;
  l.pool_bytes = pool;
  Case c{.pattern = pattern, .variant = EngineVariant{"host", json::object()}, .devices = {0}, .bytes_per_rank = count * 4096,
         .timing = timing, .run = {.warmup = 1, .iterations = 3, .pipeline_depth = 1}};
  c.layout = l;
  c.host.kind = kind;
  return testing_support::planned(c);
}

struct Sweep {
  std::unique_ptr<Backend> backend = testing_support::host_backend();
  std::unique_ptr<Engine> engine = make_engine("host").value();
  BufferPool pool;
  PoolScope scope{pool};
  json run(const Case& c, const std::function<void(Plan&)>& tamper = {}) {
    testing_support::TamperingEngine wrapped(*engine, tamper);
    return to_json(run_case(c, &wrapped, *backend));
  }
};

TEST(BufferPool, ASweepOfOnePlaceAndSizeAllocatesOnce) {
  Sweep s;
  std::vector<json> records;
  for (Timing t : {Timing::oneshot, Timing::pipelined})
    for (const char* pattern : {"d2h", "h2d"}) records.push_back(s.run(paged(pattern, 16, 1 << 20, HostKind::pinned, t)));
  for (const json& r : records) ASSERT_EQ(r["status"], "ok") << r.dump();
  // the first case allocates its source and destination (one host buffer, one of the rank's memory); every
  // later case of the same sizes takes both from the pool (d2h's destination is h2d's source: same place, size)
  EXPECT_EQ(records[0]["setup"]["buffers_allocated"], 2);
  EXPECT_EQ(records[0]["setup"]["buffers_reused"], 0);
  EXPECT_EQ(records[0]["setup"]["bytes_allocated"], 2 << 20);
  for (std::size_t i = 1; i < records.size(); ++i) {
    EXPECT_EQ(records[i]["setup"]["buffers_allocated"], 0) << i;
    EXPECT_EQ(records[i]["setup"]["buffers_reused"], 2) << i;
    for (const json& b : records[i]["host_memory"]["buffers"]) EXPECT_TRUE(b["reused"].get<bool>()) << b.dump();
    EXPECT_EQ(records[i]["host_memory"]["alloc_s"], 0.0);  // nothing allocated for this case
  }
  for (const json& r : records) {
    EXPECT_GE(r["setup_s"].get<double>(), r["setup"]["prepare_s"].get<double>() + r["setup"]["validate_s"].get<double>());
  }
  // another size is another buffer; the idle ones wait
  const json other = s.run(paged("d2h", 16, 2 << 20));
  EXPECT_EQ(other["setup"]["buffers_allocated"], 2);
  EXPECT_EQ(s.pool.lent(), 0u);
  EXPECT_EQ(s.pool.idle_bytes([](const BufferPlace&) { return true; }), std::size_t{6} << 20);
}

TEST(BufferPool, WithoutAPoolEveryCaseAllocatesItsOwn) {
  auto backend = testing_support::host_backend();
  auto engine = make_engine("host").value();
  for (int i = 0; i < 2; ++i) {
    const json r = to_json(run_case(paged("d2h", 16, 1 << 20), engine.get(), *backend));
    ASSERT_EQ(r["status"], "ok");
    EXPECT_EQ(r["setup"]["buffers_allocated"], 2);
    EXPECT_EQ(r["setup"]["buffers_reused"], 0);
  }
}

// A block written twice: into its own slot and into a slot no block was meant for. Only reading the bytes
// no transfer writes finds it: what a buffer kept from an earlier case must still be checked for.
void add_stray_block(Plan& p) {
  const auto gaps = p.unwritten(0);
  ASSERT_FALSE(gaps.empty());
  Transfer stray = p.transfers[5];
  stray.dst_offset = gaps.back().second - stray.bytes;
  p.transfers.push_back(stray);
}

TEST(BufferPool, AStrayBlockInAReusedBufferFailsItsCaseAndTheNextCasePasses) {
  for (const char* pattern : {"h2d", "d2h"}) {
    Sweep s;
    ASSERT_EQ(s.run(paged(pattern, 16, 1 << 20))["status"], "ok");
    const json bad = s.run(paged(pattern, 16, 1 << 20), add_stray_block);
    EXPECT_EQ(bad["setup"]["buffers_reused"], 2) << pattern;
    ASSERT_EQ(bad["status"], "failed") << pattern << bad.dump();
    EXPECT_NE(bad["reason"].get<std::string>().find("validation: rank 0"), std::string::npos) << bad["reason"];
    // the failed case's destination is poisoned whole before it is checked again: the stray block is gone
    const json after = s.run(paged(pattern, 16, 1 << 20));
    EXPECT_EQ(after["setup"]["buffers_reused"], 2) << pattern;
    EXPECT_EQ(after["status"], "ok") << pattern << after.dump();
  }
}

TEST(BufferPool, ABlockMovedToAFreeSlotFailsWithReuse) {
  Sweep s;
  ASSERT_EQ(s.run(paged("h2d", 16, 32 * 4096))["status"], "ok");
  const json bad = s.run(paged("h2d", 16, 32 * 4096), [](Plan& p) { p.transfers[5].dst_offset = p.unwritten(0).front().first; });
  ASSERT_EQ(bad["status"], "failed") << bad.dump();
  EXPECT_EQ(bad["setup"]["buffers_reused"], 2);
}

TEST(BufferPool, ACaseWrittenWhereThePreviousOneWroteStillValidates) {
  // case B's blocks land where case A's did not, and A's blocks sit where B expects the resting poison: B passes
  // only if A's writes were restored (its dirty ranges re-poisoned) before B was checked
  Sweep s;
  Case a = paged("h2d", 64, 1 << 20);
  Case b = a;
  b.layout.seed = 7;  // another permutation: other slots
  plan_case(b);
  ASSERT_NE(a.plan->transfers[0].dst_offset, b.plan->transfers[0].dst_offset);
  EXPECT_EQ(s.run(a)["status"], "ok");
  const json rb = s.run(b);
  EXPECT_EQ(rb["status"], "ok") << rb.dump();
  EXPECT_EQ(rb["setup"]["buffers_reused"], 2);
}

// A maker that hands out heap bytes and counts what it made.
struct Counting {
  int made = 0;
  int fail_next = 0;  // throw on the next n calls
  BufferMaker maker() {
    return [this](hostmem::BufferInfo&) {
      if (fail_next > 0) {
        --fail_next;
        throw std::runtime_error("out of memory");
      }
      ++made;
      return PooledBuffer::Memory(new char[64], [](void* p) { delete[] static_cast<char*>(p); });
    };
  }
};

TEST(BufferPool, LendsOnlyToTheSamePlaceAndSize) {
  BufferPool pool;
  Counting c;
  const BufferPlace gpu0{.maker = "gpu", .device = 0}, gpu1{.maker = "gpu", .device = 1};
  { auto a = pool.lend(gpu0, 64, c.maker()); }
  { auto a = pool.lend(gpu0, 64, c.maker()); }  // the same: reused
  EXPECT_EQ(c.made, 1);
  { auto a = pool.lend(gpu1, 64, c.maker()); }
  { auto a = pool.lend(gpu0, 32, c.maker()); }
  { auto a = pool.lend(BufferPlace{.maker = "nccl", .device = 0}, 64, c.maker()); }
  EXPECT_EQ(c.made, 4);
  // two at once of one place and size: two buffers
  auto x = pool.lend(gpu0, 64, c.maker());
  auto y = pool.lend(gpu0, 64, c.maker());
  EXPECT_NE(x.data(), y.data());
  EXPECT_EQ(c.made, 5);
  EXPECT_EQ(pool.lent(), 2u);
}

TEST(BufferPool, KeepsAtMostItsIdleLimitAndFreesTheOldestFirst) {
  BufferPool pool([](const BufferPlace& p) { return p.host ? std::size_t{100} : std::size_t{1000}; });
  Counting c;
  const BufferPlace host_a{.maker = "host-heap", .device = 0, .host = true}, host_b{.maker = "host-pages", .host = true};
  auto all = [](const BufferPlace&) { return true; };
  { auto a = pool.lend(host_a, 60, c.maker()); }
  { auto b = pool.lend(host_b, 30, c.maker()); }
  EXPECT_EQ(pool.idle_bytes(all), 90u);
  { auto b = pool.lend(host_b, 50, c.maker()); }  // 140 > 100 in host memory: the oldest (60) goes
  EXPECT_EQ(pool.idle_bytes(all), 80u);
  EXPECT_EQ(pool.freed(), 1u);
  { auto d = pool.lend(BufferPlace{.maker = "gpu", .device = 0}, 500, c.maker()); }  // another memory, its own limit
  EXPECT_EQ(pool.idle_bytes(all), 580u);
  pool.trim();
  EXPECT_EQ(pool.idle_bytes(all), 0u);
  // a buffer larger than the limit stays idle once given back (the next case of its size takes it), until
  // another allocation in that memory needs the room
  { auto big = pool.lend(host_a, 150, c.maker()); }
  EXPECT_EQ(pool.idle_bytes(all), 150u);
  const int made = c.made;
  { auto again = pool.lend(host_a, 150, c.maker()); }
  EXPECT_EQ(c.made, made);
  { auto other = pool.lend(host_b, 10, c.maker()); }
  EXPECT_EQ(pool.idle_bytes(all), 10u);
}

TEST(BufferPool, AFailedAllocationFreesWhatWaitsIdleThereAndTriesOnceMore) {
  BufferPool pool;
  Counting c;
  const BufferPlace gpu0{.maker = "gpu", .device = 0};
  { auto a = pool.lend(gpu0, 64, c.maker()); }
  c.fail_next = 1;
  auto b = pool.lend(gpu0, 128, c.maker());  // fails once, frees the idle 64, succeeds
  EXPECT_TRUE(b);
  EXPECT_EQ(pool.freed(), 1u);
  c.fail_next = 2;  // nothing idle left to free: the error is the caller's
  EXPECT_THROW(pool.lend(gpu0, 32, c.maker()), std::runtime_error);
}

TEST(BufferPool, RestoresOnlyWhatACaseMayHaveWritten) {
  BufferState st;
  EXPECT_EQ(to_restore(st, 100), (ByteRanges{{0, 100}}));  // nothing known: all of it
  st.resting = true;
  st.dirty = {{50, 60}, {10, 20}, {55, 70}};
  EXPECT_EQ(to_restore(st, 100), (ByteRanges{{10, 20}, {50, 70}}));
  st.forget();
  EXPECT_EQ(to_restore(st, 100), (ByteRanges{{0, 100}}));
}

}  // namespace
