// Levels across fresh processes (bench/levels/levels.hpp): the merge of three synthetic process files against the
// hand-computed figures of tests/data/levels/expected.json (scripts/merge_runs.py is tested against the same file),
// nine processes for a 95% interval, and the shuffle behind --order random.
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/cases/cases.hpp"
#include "bench/levels/levels.hpp"

using namespace dmabench;
using json = nlohmann::json;

namespace {

json read(const std::string& name) {
  std::ifstream in(std::string(DMABENCH_SOURCE_DIR) + "/tests/data/levels/" + name);
  return json::parse(in);
}

std::vector<json> processes() { return {read("process-1.json"), read("process-2.json"), read("process-3.json")}; }

json merged() {
  return levels::merge(processes(), {{"p1.json", 0}, {"p2.json", 1}, {"p3.json", 0}}, "test",
                       {{"processes", 3}, {"order", "random"}, {"order_seed", 7}});
}

// `got` equals `want` (numbers to 1e-9 relative, arrays and objects element by element, null as null).
void expect_same(const json& got, const json& want, const std::string& where) {
  if (want.is_number()) {
    ASSERT_TRUE(got.is_number()) << where << ": " << got.dump();
    EXPECT_NEAR(got.get<double>(), want.get<double>(), 1e-9 * std::max(1.0, std::abs(want.get<double>()))) << where;
  } else if (want.is_array()) {
    ASSERT_TRUE(got.is_array() && got.size() == want.size()) << where << ": " << got.dump();
    for (std::size_t i = 0; i < want.size(); ++i) expect_same(got[i], want[i], where + "[" + std::to_string(i) + "]");
  } else if (want.is_object()) {
    for (const auto& [k, v] : want.items()) {
      ASSERT_TRUE(got.contains(k)) << where << "." << k << " missing in " << got.dump();
      expect_same(got[k], v, where + "." + k);
    }
  } else {
    EXPECT_EQ(got, want) << where;
  }
}

}  // namespace

TEST(Levels, TheMergeHasTheHandComputedFigures) {
  const json m = merged();
  const json want = read("expected.json");
  ASSERT_EQ(m["results"].size(), want["cases"].size());
  for (std::size_t i = 0; i < want["cases"].size(); ++i) {
    const json& w = want["cases"][i];
    const json& r = m["results"][i];
    const std::string where = w["name"].get<std::string>();
    for (const char* key : {"case_index", "name", "status", "latency_us", "iterations", "algbw_GBps", "busbw_GBps",
                            "p50_interval_us", "noise", "noisy", "algbw_interval_GBps", "cpu", "levels", "reason"})
      if (w.contains(key)) expect_same(r[key], w[key], where + "." + key);
    if (w.contains("samples")) expect_same(r["sampling"]["samples"], w["samples"], where + ".sampling.samples");
    if (w.contains("seconds")) expect_same(r["sampling"]["seconds"], w["seconds"], where + ".sampling.seconds");
    if (r["status"] != "ok") EXPECT_FALSE(r["levels"].contains("p50_us")) << where << ": no figures when not ok";
  }
  const json& cal = want["calibration"];
  const json& probe = m["context"]["calibration"]["probes"][cal["probe"].get<std::string>()];
  for (const char* key : {"p50_us", "min_us", "p95_us", "per_process_p50_us"}) expect_same(probe[key], cal[key], key);
  EXPECT_TRUE(m["context"]["calibration"]["cpu"].is_null());
  const json& l = m["context"]["levels"];
  EXPECT_EQ(l["merged"], 3);
  EXPECT_EQ(l["merged_by"], "test");
  EXPECT_EQ(l["order_seed"], 7);
  ASSERT_EQ(l["per_process"].size(), 3u);
  EXPECT_EQ(l["per_process"][1]["exit_code"], 1);
  EXPECT_EQ(l["per_process"][2]["order"]["seed"], 1003);
  EXPECT_EQ(l["per_process"][0]["calibration"]["cpu"], 1);
}

TEST(Levels, NineProcessesGiveA95PercentInterval) {
  const json want = read("expected.json")["nine_processes"];
  const json base = read("process-1.json");
  json ok_case;
  for (const json& r : base["results"])
    if (r["case_index"] == 0) ok_case = r;
  std::vector<json> docs;
  for (const json& p50 : want["p50_us"]) {
    json d = base;
    json r = ok_case;
    r["latency_us"]["p50"] = p50;
    d["results"] = json::array({r});
    docs.push_back(d);
  }
  const json r = levels::merge(docs, {}, "test", json::object())["results"][0];
  expect_same(r["latency_us"]["p50"], want["p50"], "p50");
  expect_same(r["p50_interval_us"], want["p50_interval_us"], "interval");
  expect_same(r["levels"]["coverage"], want["coverage"], "coverage");
  expect_same(r["levels"]["ranks"], want["ranks"], "ranks");
  expect_same(r["levels"]["median_process"], want["median_process"], "median_process");
}

TEST(Levels, AProcessThatEndedEarlyLeavesItsCasesMissing) {
  std::vector<json> docs = processes();
  docs[1]["results"].erase(docs[1]["results"].begin() + 1, docs[1]["results"].end());  // it ran one case only
  const json m = levels::merge(docs, {}, "test", json::object());
  const json& r = m["results"][1];  // 64 KiB: ok in process 1, never run in 2, skipped in 3
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["levels"]["processes"], 1);
  EXPECT_EQ(r["levels"]["interval"], "within one process");
  EXPECT_EQ(r["p50_interval_us"], docs[0]["results"][3]["p50_interval_us"]) << "one process: its own interval";
  EXPECT_EQ(r["levels"]["missing"][0]["status"], "not run");
}

TEST(Levels, TheShuffleIsReproducibleFromItsSeedAndDiffersBetweenSeeds) {
  std::vector<Case> cases(40);
  std::vector<const Case*> a, b, c;
  for (const Case& x : cases) {
    a.push_back(&x);
    b.push_back(&x);
    c.push_back(&x);
  }
  shuffle_cases(a, 12345);
  shuffle_cases(b, 12345);
  shuffle_cases(c, 12346);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(std::set<const Case*>(a.begin(), a.end()).size(), cases.size()) << "a permutation";
  // the order of a seed is fixed for good: a recorded seed reproduces it with any later build
  std::vector<std::size_t> first;
  for (std::size_t i = 0; i < 5; ++i) first.push_back(static_cast<std::size_t>(a[i] - cases.data()));
  EXPECT_EQ(first, (std::vector<std::size_t>{19, 2, 1, 3, 15}));
}
