#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "patterns/pattern.hpp"
#include "tests/test_support.hpp"

using namespace dmabench;

namespace {

std::vector<int> iota(int n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Counts, per destination byte, how many transfers (or preset in-place blocks) write it: every byte
// must be written once.
void expect_written_exactly_once(const Plan& p) {
  for (int r = 0; r < p.ranks(); ++r) {
    std::vector<int> hits(p.dst_bytes[r], 0);
    for (const auto& t : p.writes())
      if (t.dst_rank == r)
        for (std::size_t i = 0; i < t.bytes; ++i) ++hits[t.dst_offset + i];
    for (std::size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i], 1) << p.pattern << " rank " << r << " byte " << i;
  }
}

}  // namespace

class AllPatterns : public ::testing::TestWithParam<std::tuple<std::string, int, std::size_t>> {};

TEST_P(AllPatterns, PlanIsConsistent) {
  const auto& [name, n, bytes] = GetParam();
  const Pattern* pat = testing_support::named_pattern(name).impl;
  ASSERT_NE(pat, nullptr);
  const int used = pat->ranks_used(n);
  if (name == "copy" || name == "bidir") {
    EXPECT_EQ(used, n >= 2 ? 2 : 0);
  } else if (name == "allgather-inplace" || name == "alltoall-inplace") {
    EXPECT_EQ(used, n >= 2 ? n : 0);
  } else if (name == "allgather" || name == "alltoall") {
    EXPECT_EQ(used, n);
  }
  // every pattern of the registry: the first `used` of the devices, or 0 when it cannot run on n
  EXPECT_GE(used, 0);
  EXPECT_LE(used, n);
  if (used == 0) return;
  const Plan p = pat->plan(iota(used), bytes);
  EXPECT_EQ(p.check(), std::nullopt);
  // one rank per device; host-memory patterns may give one device several ranks (h2d-bidir: one per direction)
  if (!pat->uses_host_memory()) EXPECT_EQ(p.ranks(), used);
  for (int d : p.devices) EXPECT_TRUE(d >= 0 && d < used) << "device " << d << " is not one of the " << used << " given";
  EXPECT_EQ(p.bytes_per_rank, bytes);
  for (const auto& t : p.writes()) {
    EXPECT_GT(t.bytes, 0u);
    EXPECT_LE(t.src_offset + t.bytes, p.src_bytes[t.src_rank]);
    EXPECT_LE(t.dst_offset + t.bytes, p.dst_bytes[t.dst_rank]);
    EXPECT_EQ(t.issuer, t.src_rank) << "patterns push: the source rank issues";
  }
  if (bytes * used <= 4096) expect_written_exactly_once(p);

  const double nn = used;
  if (name == "copy") {
    EXPECT_EQ(p.total_bytes, bytes);
    EXPECT_DOUBLE_EQ(p.bus_factor, 1.0);
    ASSERT_EQ(p.transfers.size(), 1u);
    EXPECT_EQ(p.transfers[0].src_rank, 0);
    EXPECT_EQ(p.transfers[0].dst_rank, 1);
  } else if (name == "bidir") {
    EXPECT_EQ(p.total_bytes, 2 * bytes);
    EXPECT_DOUBLE_EQ(p.bus_factor, 1.0);
    EXPECT_EQ(p.transfers.size(), 2u);
  } else if (name == "allgather") {
    EXPECT_EQ(p.total_bytes, bytes * used);
    EXPECT_DOUBLE_EQ(p.bus_factor, (nn - 1) / nn);
    EXPECT_EQ(p.transfers.size(), static_cast<std::size_t>(used * used));
    for (int r = 0; r < used; ++r) {
      EXPECT_EQ(p.src_bytes[r], bytes);
      EXPECT_EQ(p.dst_bytes[r], bytes * used);
    }
    for (const auto& t : p.transfers) {
      EXPECT_EQ(t.src_offset, 0u);
      EXPECT_EQ(t.dst_offset, t.src_rank * bytes);  // rank order, like ncclAllGather
    }
  } else if (name == "allgather-inplace") {
    // the all-gather layout, with each rank's own block preset (never issued): no same-GPU copy
    const Plan out_of_place = allgather_pattern().plan(iota(used), bytes);
    EXPECT_EQ(p.pattern, "allgather");
    EXPECT_EQ(pat->in_place(), nullptr);
    EXPECT_EQ(p.total_bytes, out_of_place.total_bytes);
    EXPECT_DOUBLE_EQ(p.bus_factor, out_of_place.bus_factor);
    EXPECT_EQ(p.transfers.size(), static_cast<std::size_t>(used * (used - 1)));
    ASSERT_EQ(p.preset.size(), static_cast<std::size_t>(used));
    for (const auto& t : p.transfers) EXPECT_NE(t.src_rank, t.dst_rank);
    for (const auto& t : p.preset) {
      EXPECT_EQ(t.src_rank, t.dst_rank);
      EXPECT_EQ(t.dst_offset, t.src_rank * bytes);
    }
    EXPECT_EQ(p.writes().size(), out_of_place.transfers.size());
  } else if (name == "alltoall") {
    EXPECT_EQ(p.total_bytes, bytes * used);
    EXPECT_DOUBLE_EQ(p.bus_factor, (nn - 1) / nn);
    EXPECT_EQ(p.transfers.size(), static_cast<std::size_t>(used * used));
    for (const auto& t : p.transfers) {
      EXPECT_EQ(t.src_offset, t.dst_rank * bytes);  // block d of s goes to d ...
      EXPECT_EQ(t.dst_offset, t.src_rank * bytes);  // ... at block s, like ncclAlltoAll
      EXPECT_EQ(t.bytes, bytes);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Patterns, AllPatterns,
                         ::testing::Combine(::testing::ValuesIn(testing_support::every_pattern_name()),
                                            ::testing::Range(1, 9),
                                            ::testing::Values(std::size_t{1}, std::size_t{3}, std::size_t{1000},
                                                              std::size_t{4096}, std::size_t{1} << 30)));

TEST(Patterns, RegistryKnowsEveryPattern) {
  // the eleven built-in patterns first, in this order; patterns registered at run time (a test's toy
  // pattern, tests/test_extending.cpp) follow them
  const std::vector<const Pattern*> builtin = {&copy_pattern(),      &d2d_pattern(),         &bidir_pattern(),
                                               &allgather_pattern(), &alltoall_pattern(),    &alltoallv_pattern(),
                                               &h2d_pattern(),       &d2h_pattern(),         &h2d_bidir_pattern(),
                                               &host_to_all_pattern(), &all_to_host_pattern()};
  ASSERT_GE(all_patterns().size(), builtin.size());
  EXPECT_EQ(std::vector<const Pattern*>(all_patterns().begin(), all_patterns().begin() + builtin.size()), builtin);
  EXPECT_NE(allgather_pattern().in_place(), nullptr);
  EXPECT_NE(alltoall_pattern().in_place(), nullptr);
  EXPECT_TRUE(alltoall_pattern().in_place()->plan({0, 1}, 64).exchange);
  EXPECT_FALSE(alltoall_pattern().plan({0, 1}, 64).exchange);
  for (const char* none : {"copy", "bidir"}) EXPECT_EQ(find_pattern(none)->in_place(), nullptr) << none;
  EXPECT_EQ(find_pattern("reduce"), nullptr);
  for (const Pattern* p : all_patterns()) EXPECT_EQ(find_pattern(p->name()), p);
}

// Issue 53: what a pattern is lives on the pattern (bench/check.cpp's two directions, the breakdown's one copy,
// devices "pairs") and reaches Python whole through context.patterns, in the registry's (display) order.
TEST(Patterns, PropertiesLiveOnThePatternAndReachTheResultsFile) {
  for (const Pattern* p : all_patterns()) {
    const std::string n(p->name());
    EXPECT_EQ(p->bidirectional(), n == "bidir" || n == "h2d-bidir") << n;
    EXPECT_EQ(p->has_breakdown(), n == "copy" || n == "h2d" || n == "d2h" || n == "d2d") << n;
    const bool one = n == "h2d" || n == "d2h" || n == "h2d-bidir" || n == "d2d";
    EXPECT_EQ(pairing(*p), one ? "one-device" : n == "copy" || n == "bidir" ? "two-device" : "") << n;
  }
  const nlohmann::json specs = pattern_specs_json();
  ASSERT_EQ(specs.size(), all_patterns().size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const Pattern& p = *all_patterns()[i];
    EXPECT_EQ(specs[i]["name"], p.name());
    EXPECT_EQ(specs[i]["bidirectional"], p.bidirectional());
    EXPECT_EQ(specs[i]["breakdown"], p.has_breakdown());
    EXPECT_EQ(specs[i]["host_memory"], p.uses_host_memory());
    EXPECT_EQ(specs[i]["routed"], p.routed());
    EXPECT_EQ(specs[i]["in_place"], p.in_place() != nullptr);
    EXPECT_EQ(specs[i]["pairs"].is_null(), pairing(p).empty()) << specs[i].dump();
  }
}

TEST(Patterns, DevicesMapRanks) {
  const Plan p = allgather_pattern().plan({3, 1, 2}, 8);
  EXPECT_EQ(p.devices, (std::vector<int>{3, 1, 2}));
  EXPECT_EQ(p.issuers(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(p.issued_by(1).size(), 3u);
  EXPECT_EQ(copy_pattern().plan({5, 4}, 8).issuers(), std::vector<int>{0});
}

TEST(PlanCheck, CatchesBrokenPlans) {
  Plan good = allgather_pattern().plan({0, 1}, 16);
  ASSERT_EQ(good.check(), std::nullopt);

  Plan overlap = good;
  overlap.transfers[1].dst_offset = 8;  // rank 0's write of its block into rank 0 now overlaps / leaves a gap
  EXPECT_NE(overlap.check(), std::nullopt);

  Plan gap = good;
  gap.transfers.pop_back();
  ASSERT_TRUE(gap.check().has_value());
  EXPECT_NE(gap.check()->find("never written"), std::string::npos) << *gap.check();

  Plan in_place = allgather_pattern().in_place()->plan({0, 1}, 16);
  ASSERT_EQ(in_place.check(), std::nullopt);
  Plan preset_missing = in_place;
  preset_missing.preset.pop_back();
  ASSERT_TRUE(preset_missing.check().has_value());
  EXPECT_NE(preset_missing.check()->find("never written"), std::string::npos) << *preset_missing.check();
  Plan preset_and_copy = in_place;
  preset_and_copy.transfers.push_back(preset_and_copy.preset[0]);  // the own block also copied: written twice
  ASSERT_TRUE(preset_and_copy.check().has_value());
  EXPECT_NE(preset_and_copy.check()->find("written twice"), std::string::npos) << *preset_and_copy.check();

  Plan twice = good;
  twice.transfers.push_back(twice.transfers[0]);
  ASSERT_TRUE(twice.check().has_value());
  EXPECT_NE(twice.check()->find("written twice"), std::string::npos) << *twice.check();

  Plan out_of_bounds = good;
  out_of_bounds.transfers[0].src_offset = 8;
  ASSERT_TRUE(out_of_bounds.check().has_value());
  EXPECT_NE(out_of_bounds.check()->find("beyond"), std::string::npos);

  Plan bad_rank = good;
  bad_rank.transfers[0].dst_rank = 2;
  EXPECT_NE(bad_rank.check(), std::nullopt);

  Plan empty = good;
  empty.transfers[0].bytes = 0;
  EXPECT_NE(empty.check(), std::nullopt);
}
