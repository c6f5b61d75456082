// The alltoallv pattern (MoE dispatch and combine, patterns/alltoallv.cpp) and its routings
// (patterns/routing.hpp): routings are deterministic and what their splits say (uniform, Zipf, hot, a trace);
// plans put every token in its own slot in both directions and both layouts; the host engine and the software SDMA
// engine run them validated, a misrouted token fails its case, and bad routings and trace files are input errors that
// name the field.
#include <cstdio>
#include <fstream>
#include <numeric>
#include <set>

#include <gtest/gtest.h>

#include "bench/config/config.hpp"
#include "patterns/pattern.hpp"
#include "patterns/routing.hpp"
#include "bench/run/record.hpp"
#include "bench/run/run_case.hpp"
#include "core/errors.hpp"
#include "engines/registry.hpp"
#include "tests/test_support.hpp"

using namespace dmabench;
using json = nlohmann::json;

namespace {

using Matrix = std::vector<std::vector<std::uint64_t>>;

Routing routing(Splits::Kind kind, double skew, std::uint64_t tokens, int topk, int experts, bool scattered = false,
                Routing::Direction dir = Routing::Direction::dispatch) {
  Routing r;
  r.splits.kind = kind;
  r.splits.skew = skew;
  r.tokens_per_rank = tokens;
  r.topk = topk;
  r.experts = experts;
  r.token_bytes = 256;
  r.scattered = scattered;
  r.direction = dir;
  return r;
}

// max / mean of the tokens each rank receives
double imbalance(const Matrix& m) {
  std::vector<double> in(m.size(), 0);
  for (const auto& row : m)
    for (std::size_t d = 0; d < row.size(); ++d) in[d] += static_cast<double>(row[d]);
  const double mean = std::accumulate(in.begin(), in.end(), 0.0) / static_cast<double>(in.size());
  return *std::max_element(in.begin(), in.end()) / mean;
}

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

Case moe_case(const std::string& engine, int devices, const Routing& r, json options = json::object()) {
  Case c{.pattern = "alltoallv",
         .variant = EngineVariant{engine, with_defaults(engine, options)},
         .run = {.warmup = 1, .iterations = 3}};
  for (int i = 0; i < devices; ++i) c.devices.push_back(i);
  c.routing = r;
  c.bytes_per_rank = r.tokens_per_rank * r.token_bytes;
  return testing_support::planned(c);
}

json run(const Case& c, const std::function<void(Plan&)>& tamper = {}, const std::string& engine = "host") {
  auto backend = testing_support::host_backend();
  auto inner = make_engine(engine, "host").value();
  testing_support::TamperingEngine wrapped(*inner, tamper);
  return to_json(run_case(c, &wrapped, *backend));
}

}  // namespace

TEST(Routing, UniformTokensPickDistinctExpertsAndGoOncePerRank) {
  const Routing r = routing(Splits::Kind::uniform, 0, 500, 4, 16);
  const Routed& a = route(r, 8);
  ASSERT_EQ(a.dests.size(), 8u);
  for (const auto& tokens : a.dests) {
    ASSERT_EQ(tokens.size(), 500u);
    for (const auto& d : tokens) {
      EXPECT_GE(d.size(), 1u);
      EXPECT_LE(d.size(), 4u);  // top-4: at most four ranks
      EXPECT_TRUE(std::is_sorted(d.begin(), d.end()));
      EXPECT_EQ(std::set<int>(d.begin(), d.end()).size(), d.size());  // once per rank
      for (int x : d) EXPECT_TRUE(x >= 0 && x < 8);
    }
  }
  // seeded: the same routing again, and another seed another routing
  EXPECT_EQ(route(r, 8).counts(), a.counts());
  Routing other = r;
  other.seed = 2;
  EXPECT_NE(route(other, 8).counts(), a.counts());
  EXPECT_LT(imbalance(a.counts()), 1.15);  // 500 tokens a rank: every rank gets about as many
}

TEST(Routing, SkewConcentratesTokens) {
  const double uniform = imbalance(route(routing(Splits::Kind::uniform, 0, 4096, 2, 64), 8).counts());
  const double zipf = imbalance(route(routing(Splits::Kind::zipf, 1.2, 4096, 2, 64), 8).counts());
  const double steep = imbalance(route(routing(Splits::Kind::zipf, 2.0, 4096, 2, 64), 8).counts());
  EXPECT_LT(uniform, 1.05);
  EXPECT_GT(zipf, uniform + 0.2) << zipf;
  EXPECT_GT(steep, zipf) << steep;
  // hot 1: every token picks the hot expert, so one rank gets every token of every rank
  const Matrix all = route(routing(Splits::Kind::hot, 1.0, 100, 2, 16), 4).counts();
  int hot_rank = -1;
  for (int d = 0; d < 4; ++d)
    if (std::all_of(all.begin(), all.end(), [&](const auto& row) { return row[d] == 100; })) hot_rank = d;
  EXPECT_GE(hot_rank, 0);
  // hot 0.5: that rank gets about half the tokens plus its share of the rest
  const Matrix half = route(routing(Splits::Kind::hot, 0.5, 4000, 1, 16), 4).counts();
  std::uint64_t got = 0;
  for (const auto& row : half) got += row[hot_rank];
  EXPECT_NEAR(static_cast<double>(got) / 16000.0, 0.5 + 0.5 * 3.0 / 15.0, 0.03);
}

TEST(Routing, BadRoutingsNameTheField) {
  auto expect_error = [](const Routing& r, int ranks, const std::string& field) {
    try {
      route(r, ranks);
      ADD_FAILURE() << "accepted " << r.label();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  expect_error(routing(Splits::Kind::uniform, 0, 8, 2, 10), 4, "alltoallv.experts");  // 10 experts over 4 ranks
  expect_error(routing(Splits::Kind::uniform, 0, 8, 9, 8), 4, "alltoallv.topk");
}

TEST(AllToAllV, PlansPutEveryTokenInItsOwnSlot) {
  for (Routing::Direction dir : {Routing::Direction::dispatch, Routing::Direction::combine})
    for (bool scattered : {false, true})
      for (Splits::Kind kind : {Splits::Kind::uniform, Splits::Kind::zipf, Splits::Kind::hot}) {
        const Routing r = routing(kind, kind == Splits::Kind::hot ? 0.7 : 1.2, 37, 3, 12, scattered, dir);
        const Plan p = alltoallv_pattern().plan_routed({0, 1, 2, 3}, r);
        SCOPED_TRACE(r.label());
        EXPECT_FALSE(p.check()) << *p.check();  // in bounds, no slot written twice, gaps only where the plan says
        const Matrix c = route(r, 4).counts();
        std::uint64_t tokens = 0;
        for (const auto& row : c) tokens = std::accumulate(row.begin(), row.end(), tokens);
        EXPECT_EQ(p.total_bytes, tokens * 256);
        EXPECT_EQ(p.bytes_per_rank, 37u * 256);
        Matrix moved(4, std::vector<std::uint64_t>(4, 0));
        for (const Transfer& t : p.transfers) {
          moved[t.src_rank][t.dst_rank] += t.bytes / 256;
          EXPECT_EQ(t.issuer, t.src_rank);  // the sender pushes
          if (scattered) EXPECT_EQ(t.bytes, 256u);
        }
        for (int s = 0; s < 4; ++s)
          for (int d = 0; d < 4; ++d)  // combine moves the transposed pairs
            EXPECT_EQ(dir == Routing::Direction::dispatch ? moved[s][d] : moved[d][s], c[s][d]) << s << "->" << d;
        if (!scattered) {
          std::size_t pairs = 0;
          for (const auto& row : c) pairs += static_cast<std::size_t>(std::count_if(row.begin(), row.end(), [](auto n) { return n > 0; }));
          EXPECT_EQ(p.transfers.size(), pairs);  // one transfer per non-empty pair
        } else {
          EXPECT_EQ(p.transfers.size(), tokens);  // one per token copy
          EXPECT_EQ(p.block_bytes, 256u);
        }
      }
}

TEST(AllToAllV, RanksMayShareADevice) {
  Routing r = routing(Splits::Kind::zipf, 1.2, 16, 2, 8);
  r.ranks = 8;
  const Plan p = alltoallv_pattern().plan_routed({0}, r);
  EXPECT_EQ(p.devices, std::vector<int>(8, 0));
  EXPECT_FALSE(p.check());
  const Plan two = alltoallv_pattern().plan_routed({3, 5}, r);
  EXPECT_EQ(two.devices, (std::vector<int>{3, 5, 3, 5, 3, 5, 3, 5}));
  const Case c = moe_case("host", 1, r);
  EXPECT_NE(c.name().find("/moe=dispatch,packed,zipf1.2,16x256B,top2of8,ranks=8"), std::string::npos) << c.name();
  const json rec = run(c);
  ASSERT_EQ(rec["status"], "ok") << rec["reason"];
  EXPECT_EQ(rec["ranks"], 8);
  EXPECT_EQ(rec["alltoallv"]["ranks_share_devices"], true);
}

// Every direction and layout on the host engine and on the software SDMA engine (pcpy and b2b): validated, and the
// record's figures computed from the plan.
TEST(AllToAllV, RunsValidatedOnTheHostAndSoftwareSdmaEngines) {
  for (const auto& [engine, options] : std::vector<std::pair<std::string, json>>{
           {"host", json::object()}, {"sdma", {{"schedule", "pcpy"}}}, {"sdma", {{"schedule", "b2b"}}}})
    for (Routing::Direction dir : {Routing::Direction::dispatch, Routing::Direction::combine})
      for (bool scattered : {false, true}) {
        const Case c = moe_case(engine, 4, routing(Splits::Kind::zipf, 1.2, 24, 2, 8, scattered, dir), options);
        const json r = run(c, {}, engine);
        SCOPED_TRACE(c.name());
        ASSERT_EQ(r["status"], "ok") << r["reason"];
        EXPECT_TRUE(r["validated"].get<bool>());
        const json& a = r["alltoallv"];
        EXPECT_EQ(a["bytes_moved"], r["bytes"]);
        EXPECT_EQ(a["tokens_moved"].get<std::uint64_t>() * 256, a["bytes_moved"].get<std::uint64_t>());
        std::uint64_t in = 0, peer = 0, most = 0;
        for (std::size_t d = 0; d < 4; ++d) {
          std::uint64_t col = 0;
          for (std::size_t s = 0; s < 4; ++s) {
            col += a["pair_tokens"][s][d].get<std::uint64_t>() * 256;
            if (s != d) peer += a["pair_tokens"][s][d].get<std::uint64_t>() * 256;
          }
          EXPECT_EQ(a["dest_bytes"][d], col);
          in += col;
          most = std::max(most, col);
        }
        EXPECT_EQ(in, a["bytes_moved"]);
        EXPECT_EQ(a["peer_bytes"], peer);
        EXPECT_DOUBLE_EQ(a["imbalance"].get<double>(), static_cast<double>(most) / (static_cast<double>(in) / 4));
        EXPECT_NEAR(r["busbw_GBps"].get<double>(), r["algbw_GBps"].get<double>() * static_cast<double>(peer) / static_cast<double>(in), 1e-9);
        const json& h = a["heaviest_pair"];
        ASSERT_TRUE(h.contains("p50_us")) << h.dump();
        EXPECT_TRUE(h["validated"].get<bool>());
        EXPECT_EQ(h["bytes"], a["pair_tokens"][h["src"].get<int>()][h["dst"].get<int>()].get<std::uint64_t>() * 256);
        EXPECT_NEAR(h["share"].get<double>(), h["p50_us"].get<double>() / r["latency_us"]["p50"].get<double>(), 1e-9);
      }
}

// A token sent to the wrong rank, or into the slot of another token, fails its case with the rank named.
TEST(AllToAllV, AMisroutedTokenFailsItsCase) {
  for (Routing::Direction dir : {Routing::Direction::dispatch, Routing::Direction::combine}) {
    const Case scattered = moe_case("host", 4, routing(Splits::Kind::uniform, 0, 16, 2, 8, true, dir));
    ASSERT_EQ(run(scattered)["status"], "ok");
    // two tokens trade destination slots: every byte real data, in the wrong place
    const json swapped = run(scattered, [](Plan& p) { std::swap(p.transfers[0].dst_offset, p.transfers[1].dst_offset); });
    ASSERT_EQ(swapped["status"], "failed") << swapped.dump();
    EXPECT_NE(swapped["reason"].get<std::string>().find("validation: rank"), std::string::npos) << swapped["reason"];
    // one token goes to another rank (same offset there): its own slot stays stale, the other is overwritten
    const json misrouted = run(scattered, [](Plan& p) {
      Transfer& t = p.transfers[0];
      const int other = (t.dst_rank + 1) % p.ranks();
      t.dst_offset = std::min(t.dst_offset, p.dst_bytes[other] - t.bytes);
      t.dst_rank = other;
    });
    EXPECT_EQ(misrouted["status"], "failed") << misrouted.dump();
    // packed: a pair's run written one token late
    const Case packed = moe_case("host", 4, routing(Splits::Kind::uniform, 0, 16, 2, 8, false, dir));
    const json late = run(packed, [](Plan& p) {
      for (Transfer& t : p.transfers)
        if (t.dst_offset + t.bytes + 256 <= p.dst_bytes[t.dst_rank]) {
          t.dst_offset += 256;
          return;
        }
    });
    EXPECT_EQ(late["status"], "failed") << late.dump();
  }
}

TEST(AllToAllV, TracesGiveOneCasePerStepAndBadTracesAreInputErrors) {
  const std::string good = write_temp("moe-good.json", R"({"ranks": 2, "steps": [[[3, 1], [0, 2]], [[1, 1], [4, 0]]]})");
  const Config c = parse_config(json::parse(
      R"({"patterns": ["alltoallv"], "engines": ["host"], "timing": "oneshot", "devices": [0, 1],
          "alltoallv": {"splits": "file:)" + good + R"(", "tokens_per_rank": 4, "token_bytes": "1KiB"}})"));
  const auto cases = expand(c, 2, {0, 1}, "host rank");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_NE(cases[1].name().find("file=moe-good.json#1"), std::string::npos) << cases[1].name();
  EXPECT_EQ(route(*cases[0].routing, 2).counts(), (Matrix{{3, 1}, {0, 2}}));
  EXPECT_EQ(route(*cases[1].routing, 2).counts(), (Matrix{{1, 1}, {4, 0}}));
  const json r = run(cases[1]);
  ASSERT_EQ(r["status"], "ok") << r["reason"];
  EXPECT_EQ(r["alltoallv"]["pair_tokens"], json::parse("[[1, 1], [4, 0]]"));
  EXPECT_EQ(r["alltoallv"]["step"], 1);

  // a relative path is read from the config file's directory, wherever the program runs
  const std::string dir = ::testing::TempDir();
  write_temp("moe-relative.json", R"({"patterns": ["alltoallv"], "engines": ["host"], "alltoallv": {"splits": "file:moe-good.json", "tokens_per_rank": 4}})");
  const Config rel = load_config(dir + "moe-relative.json");
  ASSERT_EQ(rel.routings.size(), 2u);
  EXPECT_EQ(rel.routings[0].splits.path, (dir.back() == '/' ? dir : dir + "/") + "moe-good.json");
  EXPECT_THROW(parse_config(json::parse(R"({"patterns": ["alltoallv"], "alltoallv": {"splits": "file:moe-good.json"}})")), InputError);

  auto expect_error = [](const std::string& alltoallv, const std::vector<std::string>& words, int devices = 2) {
    try {
      const Config bad = parse_config(json::parse(R"({"patterns": ["alltoallv"], "engines": ["host"], "alltoallv": )" + alltoallv + "}"));
      std::vector<int> ids(static_cast<std::size_t>(devices));
      std::iota(ids.begin(), ids.end(), 0);
      expand(bad, devices, ids, "host rank");
      ADD_FAILURE() << "accepted " << alltoallv;
    } catch (const InputError& e) {
      for (const auto& w : words) EXPECT_NE(std::string(e.what()).find(w), std::string::npos) << w << " not in: " << e.what();
    }
  };
  const auto file = [](const std::string& name, const std::string& text, const std::string& rest = "") {
    return R"({"splits": "file:)" + write_temp(name, text) + "\"" + rest + "}";
  };
  // wrong shape: a 2 x 2 trace on 3 ranks; a row too short; not square
  expect_error(file("moe-shape.json", "[[1, 1], [1, 1]]", R"(, "tokens_per_rank": 4)"), {"alltoallv.splits", "2 x 2", "3 ranks"}, 3);
  expect_error(file("moe-row.json", "[[1, 1], [1]]"), {"alltoallv.splits", "[1]", "row of 2"});
  // negative counts, fractions, text
  expect_error(file("moe-neg.json", R"({"steps": [[[1, -2], [0, 0]]]})"), {"alltoallv.splits", "steps[0][0][1]", "-2 is negative"});
  expect_error(file("moe-frac.json", "[[1.5, 0], [0, 0]]"), {"alltoallv.splits", "[0][0]", "whole number"});
  // more tokens than the pool: 5 tokens from rank 0 to rank 1 with 4 a rank
  expect_error(file("moe-pool.json", "[[0, 5], [1, 0]]", R"(, "tokens_per_rank": 4)"),
               {"alltoallv.tokens_per_rank", "steps[0][0][1]", "5 tokens", "4 tokens"});
  expect_error(file("moe-empty.json", "[[0, 0], [0, 0]]"), {"alltoallv.splits", "moves no token"});
  expect_error(file("moe-ranks.json", R"({"ranks": 3, "steps": [[[0, 1], [1, 0]]]})"), {"steps[0]", "ranks 3"});
  expect_error(file("moe-notjson.json", "[[1, 2"), {"alltoallv.splits", "not valid JSON"});
  // issue 40: a trace is bounded like a config (no file drives a recursion past the stack), names no key twice, and its
  // errors quote what they found in a few dozen characters
  expect_error(file("moe-deep.json", std::string(100000, '[') + std::string(100000, ']')),
               {"alltoallv.splits", "nested more than 32 levels deep"});
  expect_error(file("moe-twice.json", R"({"steps": [[[1, 1], [1, 1]]], "steps": [[[2, 2], [2, 2]]]})"),
               {"alltoallv.splits", "key '\"steps\"' appears twice in one object"});
  try {
    const Config bad = parse_config(json::parse(R"({"patterns": ["alltoallv"], "engines": ["host"], "alltoallv": )" +
                                                file("moe-long.json", "[[\"" + std::string(1 << 20, 'x') + "\", 1], [1, 1]]") + "}"));
    expand(bad, 2, {0, 1}, "host rank");
    ADD_FAILURE() << "a trace holding a 1 MB string was accepted";
  } catch (const InputError& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u) << "the error line quotes the string with a cap";
    EXPECT_NE(std::string(e.what()).find("more bytes)"), std::string::npos) << e.what();
  }
  expect_error(R"({"splits": "file:/nonexistent/trace.json"})", {"alltoallv.splits", "/nonexistent/trace.json"});
  // splits, keys and values
  expect_error(R"({"splits": "zipf"})", {"alltoallv.splits", "zipf:S"});
  expect_error(R"({"splits": "zipf:-1"})", {"alltoallv.splits", "Zipf exponent"});
  expect_error(R"({"splits": "hot:1.5"})", {"alltoallv.splits", "share"});
  expect_error(R"({"splits": ["uniform", "uniform"]})", {"alltoallv.splits", "twice"});
  expect_error(R"({"direction": "forward"})", {"alltoallv.direction", "dispatch"});
  expect_error(R"({"tokens": "sparse"})", {"alltoallv.tokens", "scattered"});
  expect_error(R"({"tokens_per_rank": 0})", {"alltoallv.tokens_per_rank"});
  expect_error(R"({"topk": 3, "experts": 2})", {"alltoallv.topk"});
  expect_error(R"({"experts": 3})", {"alltoallv.experts", "multiple of the ranks"});
  expect_error(R"({"routing": 1})", {"alltoallv.routing", "unknown key"});
}

TEST(AllToAllV, ConfigRules) {
  auto expect_error = [](const std::string& text, const std::string& field) {
    try {
      parse_config(json::parse(text));
      ADD_FAILURE() << "accepted " << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  expect_error(R"({"patterns": ["alltoallv"], "sizes": "1MiB"})", "config: sizes: alltoallv takes its size");
  expect_error(R"({"patterns": ["copy"], "sizes": "1MiB", "alltoallv": {}})", "config: alltoallv: applies to the alltoallv pattern");
  expect_error(R"({"patterns": ["alltoallv"], "layout": {"kind": "blocks", "block_bytes": "4KiB"}})", "config: layout: alltoallv");
  // alltoallv beside a sized pattern: sizes apply to the other; the routing gives alltoallv's size
  const Config c = parse_config(json::parse(
      R"({"patterns": ["copy", "alltoallv"], "sizes": "1MiB", "engines": ["host"], "timing": "oneshot",
          "alltoallv": {"tokens_per_rank": [2, 8], "token_bytes": "4KiB", "splits": ["uniform", "zipf:1.2"], "direction": ["dispatch", "combine"]}})"));
  const auto cases = expand(c, 4, {0, 1, 2, 3}, "host rank");
  ASSERT_EQ(cases.size(), 1u + 2 * 2 * 2);
  EXPECT_EQ(cases[0].pattern, "copy");
  EXPECT_FALSE(cases[0].routing);
  EXPECT_EQ(cases[1].bytes_per_rank, 2u * 4096);
  EXPECT_EQ(cases[1].name(), "alltoallv/host/oneshot/dev=0,1,2,3/8KiB/moe=dispatch,packed,uniform,2x4KiB,top2");
  EXPECT_NE(cases[1].seed(), cases[2].seed());
  EXPECT_EQ(to_json(c)["alltoallv"].size(), 8u);
  // without "alltoallv": the default routing, whose top-2 fits one rank too (one expert per rank, top-1 there)
  for (int n : {1, 2, 5}) {
    std::vector<int> ids(static_cast<std::size_t>(n));
    std::iota(ids.begin(), ids.end(), 0);
    const auto plain = expand(parse_config(json::parse(R"({"patterns": ["alltoallv"], "engines": ["host"], "timing": "oneshot"})")),
                              n, ids, "host rank");
    ASSERT_EQ(plain.size(), 1u);
    EXPECT_EQ(plain[0].plan->ranks(), n);
    EXPECT_EQ(run(plain[0])["status"], "ok") << n;
  }
}
