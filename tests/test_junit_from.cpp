// dmabench --junit-from CASES.json --junit FILE (bench/output/junit_from.hpp): the test cases python/dmabench sends,
// written by the run's own writer; a bad document is one InputError naming where it is wrong.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "bench/cli.hpp"
#include "bench/output/junit_from.hpp"
#include "core/errors.hpp"

using namespace dmabench;
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// The message read_suite throws for `doc` ("" where it throws none).
std::string refusal(const std::string& doc) {
  try {
    junit::read_suite(json::parse(doc), "--junit-from c.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(JunitFrom, ReadsTheCasesOfAVerdictAndTheSuite) {
  using O = junit::TestCase::Outcome;
  const auto suite = junit::read_suite(json::parse(R"({
      "properties": [["command", "compare"], ["base", "b.json"]], "timestamp": "2026-12-04T07:10:00", "hostname": "ci",
      "cases": [{"name": "a", "classname": "copy.ce", "time": 0.25, "outcome": "failure", "message": "slower: x",
                 "kind": "slower", "output": "slower: x"},
                {"name": "b", "classname": "copy.ce"},
                {"name": "c", "classname": "copy.sm", "time": 0, "outcome": "skipped", "message": "only in NEW"},
                {"name": "d", "classname": "copy.sm", "outcome": "error", "message": "m"},
                {"name": "e", "classname": "x.y", "outcome": "failure", "properties": [["bytes", "4096"]]}]})"),
                                       "c.json");
  EXPECT_EQ(suite.properties, (junit::Properties{{"command", "compare"}, {"base", "b.json"}}));
  EXPECT_EQ(suite.timestamp, "2026-12-04T07:10:00");
  EXPECT_EQ(suite.hostname, "ci");
  ASSERT_EQ(suite.cases.size(), 5u);
  EXPECT_EQ(suite.cases[0].outcome, O::failed);
  EXPECT_EQ(suite.cases[0].type, "slower");
  EXPECT_EQ(suite.cases[0].seconds, 0.25);
  EXPECT_EQ(suite.cases[0].output, "slower: x");
  EXPECT_EQ(suite.cases[1].outcome, O::passed);
  EXPECT_EQ(suite.cases[2].outcome, O::skipped);
  EXPECT_EQ(suite.cases[2].message, "only in NEW");
  EXPECT_EQ(suite.cases[3].outcome, O::error);
  EXPECT_EQ(suite.cases[3].type, "error");  // no kind: the outcome's name
  EXPECT_EQ(suite.cases[4].type, "failure");
  EXPECT_EQ(suite.cases[4].properties, (junit::Properties{{"bytes", "4096"}}));
}

// One writer: the test cases a run writes for its records and those of the same records sent as CASES.json make the
// same bytes (the figures from the record through record_properties, the only list of them).
TEST(JunitFrom, ARecordsFiguresAreTheRunsOwn) {
  const json ok = {{"name", "a"}, {"pattern", "allreduce"}, {"engine", "nccl"}, {"status", "ok"}, {"bytes", 4096},
                   {"latency_us", {{"p50", 12.5}, {"p99", 20.0}}}, {"busbw_GBps", 0.75},
                   {"p50_interval_us", {12.0, 13.0}}, {"sampling", {{"samples", 40}, {"seconds", 0.25}}}};
  const json skipped = {{"name", "b<&>\x01"}, {"pattern", "copy"}, {"engine", "ce"}, {"status", "skipped"},
                        {"reason", "no GPU"}};
  const auto run = junit::test_cases({ok, skipped}, {});
  const json doc = {{"cases", {{{"name", "a"}, {"classname", "allreduce.nccl"}, {"time", 0.25}, {"record", ok}},
                               {{"name", "b<&>\x01"}, {"classname", "copy.ce"}, {"outcome", "skipped"},
                                {"message", "no GPU"}, {"record", skipped}}}}};
  const auto sent = junit::read_suite(doc, "c.json");
  EXPECT_EQ(sent.cases[0].properties, junit::record_properties(ok));
  EXPECT_EQ(sent.cases[0].properties.size(), 8u);
  EXPECT_TRUE(sent.cases[1].properties.empty());  // a record not ok: no figures
  EXPECT_EQ(junit::document(sent.cases, "dmabench", "2026-12-04T11:00:00", "h"),
            junit::document(run, "dmabench", "2026-12-04T11:00:00", "h"));
}

TEST(JunitFrom, ABadDocumentSaysWhereItIsWrong) {
  const std::pair<const char*, const char*> bad[] = {
      {R"([])", "the document: [] is not an object"},
      {R"({})", "cases: missing or not a list"},
      {R"({"cases": {}})", "cases: missing or not a list"},
      {R"({"cases": [], "case": []})", "the document: unknown key 'case'; accepted: cases, properties, timestamp, hostname"},
      {R"({"cases": [1]})", "cases[0]: 1 is not an object"},
      {R"({"cases": [{"classname": "a.b"}]})", "cases[0]: no 'name'"},
      {R"({"cases": [{"name": "n"}]})", "cases[0]: no 'classname'"},
      {R"({"cases": [{"name": 3, "classname": "a.b"}]})", "cases[0].name: 3 is not a string"},
      {R"({"cases": [{"name": "n", "classname": "a.b", "time": -1}]})", "cases[0].time: -1 is not a number of seconds >= 0"},
      {R"({"cases": [{"name": "n", "classname": "a.b", "time": "1"}]})", "cases[0].time: \"1\" is not a number"},
      {R"({"cases": [{"name": "n", "classname": "a.b", "outcome": "failed"}]})",
       "cases[0].outcome: 'failed' is not an outcome; accepted: passed, failure, skipped, error"},
      {R"({"cases": [{"name": "n", "classname": "a.b", "outcome": ""}]})", "cases[0].outcome: '' is not an outcome"},
      {R"({"cases": [{"name": "n", "classname": "a.b", "message": null}]})", "cases[0].message: null is not a string"},
      {R"({"cases": [{"name": "n", "classname": "a.b", "verdict": "slower"}]})", "cases[0]: unknown key 'verdict'"},
      {R"({"cases": [{"name": "n", "classname": "a.b", "properties": [["a"]]}]})",
       "cases[0].properties[0]: [\"a\"] is not a [name, value] pair of strings"},
      {R"({"cases": [{"name": "n", "classname": "a.b", "properties": {"a": "1"}}]})", "cases[0].properties: "},
      {R"({"cases": [{"name": "n", "classname": "a.b", "properties": [], "record": {}}]})",
       "cases[0]: both 'properties' and 'record'"},
      {R"({"cases": [{"name": "n", "classname": "a.b", "record": [1]}]})", "cases[0].record: [1] is not a results record"},
      {R"({"cases": [], "properties": [["a", 1]]})", "properties[0]: [\"a\",1] is not a [name, value] pair"},
      {R"({"cases": [], "timestamp": "2026-12-04 07:10:00"})", "timestamp: '2026-12-04 07:10:00' is not YYYY-MM-DDTHH:MM:SS"},
      {R"({"cases": [], "hostname": 1})", "hostname: 1 is not a string"}};
  for (const auto& [doc, want] : bad) {
    const std::string got = refusal(doc);
    EXPECT_EQ(got.rfind("--junit-from c.json: ", 0), 0u) << doc << " -> " << got;
    EXPECT_NE(got.find(want), std::string::npos) << doc << " -> " << got;
  }
  EXPECT_EQ(refusal(R"({"cases": []})"), "");  // no case: an empty suite
}

TEST(JunitFrom, WritesTheFileWholeAndRefusesBadInputBeforeWriting) {
  const fs::path dir = fs::temp_directory_path() / ("dmabench-junit-from-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string cases = (dir / "cases.json").string(), out = (dir / "out.xml").string();
  std::ofstream(cases) << R"({"timestamp": "2026-12-04T07:10:00", "hostname": "h", "properties": [["command", "ab"]],
                              "cases": [{"name": "a", "classname": "copy.ce", "time": 1}]})";
  EXPECT_EQ(junit::write_from(cases, out), 0);
  EXPECT_EQ(read(out), junit::document({{"copy.ce", "a", 1.0}}, "dmabench", "2026-12-04T07:10:00", "h", {{"command", "ab"}}));
  std::ofstream(cases) << R"({"cases": [{"name": "a", "classname": "copy.ce", "outcome": "slower"}]})";
  fs::remove(out);
  EXPECT_THROW(junit::write_from(cases, out), InputError);
  EXPECT_FALSE(fs::exists(out));  // nothing written
  std::ofstream(cases) << R"({"cases": [)";
  EXPECT_THROW(junit::write_from(cases, out), InputError);  // not JSON
  EXPECT_THROW(junit::write_from((dir / "none.json").string(), out), InputError);
  std::ofstream(cases) << R"({"cases": []})";
  EXPECT_THROW(junit::write_from(cases, dir.string()), InputError);  // a directory
  EXPECT_THROW(junit::write_from(cases, cases), InputError);          // its own input
  EXPECT_FALSE(fs::exists(out));
  fs::remove_all(dir);
}

TEST(JunitFrom, IsAModeOfItsOwn) {
  EXPECT_EQ(parse_cli({"--junit-from", "c.json", "--junit", "o.xml"}).junit_from, "c.json");
  const std::pair<std::vector<std::string>, const char*> bad[] = {
      {{"--junit-from", "c.json"}, "--junit-from: needs --junit FILE"},
      {{"--junit-from", "c.json", "--junit", "o.xml", "--config", "x.json"}, "--junit-from and --config: "},
      {{"quick", "--junit-from", "c.json", "--junit", "o.xml"}, "--junit-from and a preset: "},
      {{"--junit-from", "c.json", "--junit", "o.xml", "-b", "1KiB"}, "--junit-from and -b: "},
      {{"--junit-from", "c.json", "--junit", "o.xml", "--benchmark_filter=x"}, "--junit-from and --benchmark_filter=x: "},
      {{"--junit-from", "", "--junit", "o.xml"}, "--junit-from: empty file name"}};
  for (const auto& [args, want] : bad) {
    try {
      parse_cli(args);
      ADD_FAILURE() << "no error for " << args.front();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
}
