// bench/verdict.cpp, the rule --check applies to per-process draws, held to python/dmabench/verdict.py's answers on
// one fixture (tests/data/verdict-fixture.json; tests/python/test_verdict.py holds the Python side to it).
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/verdict.hpp"

using namespace dmabench;
using json = nlohmann::json;

TEST(Verdict, GivesWhatThePythonRuleGivesOnTheSharedFixture) {
  std::ifstream f(std::string(DMABENCH_SOURCE_DIR) + "/tests/data/verdict-fixture.json");
  ASSERT_TRUE(f.good());
  const json doc = json::parse(f);
  std::vector<verdict::Case> cases;
  for (const json& c : doc["cases"])
    cases.push_back({c["base"].get<std::vector<double>>(), c["new"].get<std::vector<double>>(),
                     c["cls"] == "launch-bound"});
  const auto judged = verdict::judge_all(cases, doc["alpha"].get<double>());
  ASSERT_EQ(judged.size(), doc["cases"].size());
  for (std::size_t i = 0; i < judged.size(); ++i) {
    const json& want = doc["cases"][i];
    SCOPED_TRACE(i);
    EXPECT_EQ(judged[i].verdict, want["verdict"].get<std::string>());
    EXPECT_EQ(judged[i].supported, want["supported"].get<bool>());
    EXPECT_NEAR(judged[i].change, want["change"].get<double>(), 1e-12);
    EXPECT_NEAR(judged[i].p / want["p"].get<double>(), 1.0, 1e-9);
  }
}

TEST(Verdict, ExactPValuesAndTheFamilyRule) {
  // 3 vs 3 draws fully apart: the smallest two-sided p of 6 draws, 2 / C(6, 3)
  const auto apart = verdict::rank_sum_test({1, 2, 3}, {4, 5, 6});
  EXPECT_DOUBLE_EQ(apart.p, 0.1);
  EXPECT_EQ(apart.direction, 1);
  EXPECT_EQ(verdict::rank_sum_test({}, {1}).p, 1.0);
  EXPECT_NEAR(verdict::shift({10, 10}, {12, 12}), 0.2, 1e-12);
  EXPECT_EQ(verdict::benjamini_hochberg({0.001, 0.5, 0.011}, 0.02), std::vector<bool>({true, false, true}));
  EXPECT_EQ(verdict::benjamini_hochberg({0.001, 0.5, 0.014}, 0.02), std::vector<bool>({true, false, false}));
}
