// Levels across fresh processes (bench/levels/levels.hpp): the merge of three synthetic process files against the
// hand-computed figures of tests/data/levels/expected.json (scripts/merge_runs.py, which runs `dmabench --merge`, is
// tested against the same file), nine processes for a 95% interval, what the merge makes of records it must not
// trust, the reader of results files and journals (results_file.hpp), and the shuffle behind --order random.
// `--merge`'s refusals through the command line: tests/cli_merge_test.py.
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/test_support.hpp"
#include "bench/cases/cases.hpp"
#include "bench/levels/levels.hpp"
#include "bench/levels/results_file.hpp"
#include "core/errors.hpp"

using namespace dmabench;
using json = nlohmann::json;

namespace {

using testing_support::error_of;

json read(const std::string& name) {
  std::ifstream in(std::string(DMABENCH_SOURCE_DIR) + "/tests/data/levels/" + name);
  return json::parse(in);
}

std::vector<json> processes() { return {read("process-1.json"), read("process-2.json"), read("process-3.json")}; }

// A file of the tests' own, with `text`; its path.
std::string file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "dmabench-levels-" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

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

TEST(Levels, RecordsItCannotTrustAreMergedAsTheyAre) {
  std::vector<json> docs = processes();
  json& twice = docs[0]["results"];
  const json case_0 = twice[1];
  twice.push_back(case_0);  // case 0 twice in process 1: its second record is a case of its own
  twice.back()["latency_us"]["p50"] = 1000;
  for (json& d : docs)
    for (json& r : d["results"]) {
      r["bytes"] = nullptr;      // S not recorded: what algbw and the p50 imply
      r["case_index"] = "first";  // no integer: the order first seen
      r.erase("noise");          // the within-process noise from the p50 interval
      r["core_share"] = {{"probed", 10}, {"shared", 11}};  // more shared than probed: no share
    }
  docs[2]["context"].erase("calibration");
  docs[0]["context"]["calibration"]["core_share"] = {{"threshold", 0.75}};
  const json m = levels::merge(docs, {}, "test", json::object());
  ASSERT_EQ(m["results"].size(), 5u);
  EXPECT_EQ(m["results"][0]["name"], docs[0]["results"][0]["name"]) << "process 1's order";
  const json& again = m["results"][4];
  EXPECT_EQ(again["levels"]["processes"], 1) << "the second record of case 0 is matched with no other";
  EXPECT_EQ(again["latency_us"]["p50"], 1000);
  const json& r = m["results"][1];  // case 0: ok in 3 processes
  const json& median = docs[2]["results"][2];  // process 3's, 110 µs: the median process's record
  EXPECT_NEAR(r["algbw_GBps"].get<double>(), median["algbw_GBps"].get<double>(), 1e-9);
  for (const json& noise : r["levels"]["noise"]) EXPECT_TRUE(noise.is_number()) << r["levels"].dump();
  EXPECT_EQ(r["levels"]["core_shared"], json::array({nullptr, nullptr, nullptr}));
  const json& cal = m["context"]["calibration"];
  EXPECT_EQ(cal["core_share"]["per_process"].size(), 3u);
  EXPECT_TRUE(cal["core_share"]["per_process"][2].is_null()) << "process 3 has no calibration";
  docs[0]["context"].erase("calibration");
  EXPECT_FALSE(levels::merge(docs, {}, "test", json::object())["context"].contains("calibration"))
      << "no probes in the first process: the context keeps what it has";
}

TEST(Levels, TheReaderTakesAJournalWhereItHoldsMore) {
  json doc = read("process-1.json");
  const json header = {{"schema", "dmabench-journal/1"}, {"results_schema", "dmabench/1"}, {"context", doc["context"]}};
  std::string lines = header.dump() + "\n";
  for (const json& r : doc["results"]) lines += r.dump() + "\n";
  const std::string journal = file("run.json.journal", lines + "{\"torn");
  levels::ResultsRead got = levels::read_results(journal);
  EXPECT_EQ(got.doc["results"], doc["results"]);
  EXPECT_EQ(got.note, journal + ": line 6 is torn (the run was killed while writing it); ignored");
  json behind = doc;
  behind["results"].erase(behind["results"].begin() + 1, behind["results"].end());
  const std::string results = file("run.json", behind.dump());
  got = levels::read_results(results);
  EXPECT_EQ(got.doc["results"].size(), 4u);
  EXPECT_EQ(got.note, journal + ": the run that writes " + results + " has not finished; reading its journal (4 records, "
                                                                     "1 in " + results + "; its torn line 6 ignored)");
  file("run.json.journal", lines.substr(0, lines.find('\n') + 1));  // the header alone: the results file holds more
  got = levels::read_results(results);
  EXPECT_EQ(got.doc["results"].size(), 1u);
  EXPECT_EQ(got.note, "");
  file("run.json.journal", "[1]\n" + lines);
  EXPECT_NE(error_of([&] { levels::read_results(results); }).find("run.json.journal: line 1: not a dmabench journal"),
            std::string::npos);
  file("run.json.journal", header.dump() + "\n{\n" + doc["results"][0].dump() + "\n");
  EXPECT_NE(error_of([&] { levels::read_results(results); }).find("run.json.journal: line 2: not valid JSON"),
            std::string::npos) << "a bad line before the last is no torn line";
}

TEST(Levels, TheReaderNamesTheFirstFieldTheMergeCannotRead) {
  const json good = read("process-1.json");
  const auto message = [&](const std::function<void(json&)>& change) {
    json doc = good;
    change(doc);
    return error_of([&] { levels::read_results(file("bad.json", doc.dump())); });
  };
  EXPECT_EQ(message([](json&) {}), "");
  const std::string at = ::testing::TempDir() + "dmabench-levels-bad.json: ";
  EXPECT_EQ(message([](json& d) { d["results"][1]["latency_us"]["p50"] = 0; }),
            at + "results[1].latency_us.p50: expected a positive number, got 0");
  EXPECT_EQ(message([](json& d) { d["results"][0]["status"] = "great"; }),
            at + "results[0].status: expected one of ok, skipped, failed, got \"great\"");
  EXPECT_EQ(message([](json& d) { d["results"][1]["sampling"]["samples"] = 0; }),
            at + "results[1].sampling.samples: expected a positive integer, got 0");
  EXPECT_EQ(message([](json& d) { d["results"][1].erase("name"); }), at + "results[1].name: missing");
  EXPECT_EQ(message([](json& d) { d["context"] = nullptr; }), at + "context: expected an object, got null");
  EXPECT_EQ(message([](json& d) { d["schema"] = "dmabench/2"; }), at + "has schema \"dmabench/2\"; dmabench reads 'dmabench/1'");
  EXPECT_EQ(message([](json& d) { d = json::array(); }), at + "not a dmabench results file: the top level is array, not an object");
  EXPECT_NE(error_of([&] { levels::read_results(file("run.json.xz", "")); }).find("a compressed file (.xz)"), std::string::npos);
  // a lone surrogate escape (no character) is read as its escaped text, as python/dmabench/reader.py reads it
  std::string text = good.dump();
  text.replace(text.find("\"host\":\""), 8, "\"host\":\"\\ud800");
  const json host = levels::read_results(file("surrogate.json", text)).doc["context"]["host"];
  EXPECT_EQ(host.get<std::string>().substr(0, 6), "\\ud800") << host;
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
