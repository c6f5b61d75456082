// --check: expectations files and reference results judged against records, and every bad file refused.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/check.hpp"
#include "bench/run/record.hpp"
#include "case_key_spec.hpp"
#include "core/errors.hpp"
#include "gpu/links.hpp"

using namespace dmabench;
using json = nlohmann::json;

namespace {

std::string write_file(const std::string& name, const json& doc) {
  // per process: other test runs on the machine (other build trees) write theirs at the same time
  const std::string path = fmt::format("{}/{}-{}", ::testing::TempDir(), ::getpid(), name);
  std::ofstream(path) << doc.dump();
  return path;
}

check::Expectations load_doc(const json& doc) { return check::Expectations::load(write_file("dmabench-expect.json", doc)); }

json record(const std::string& pattern, std::vector<int> devices, double busbw, double p50, std::uint64_t bytes = 256 << 20) {
  return {{"name", fmt::format("{}/ce/pipelined/dev={}/x", pattern, devices[0])},
          {"status", "ok"},
          {"pattern", pattern},
          {"engine", "ce"},
          {"timing", "pipelined"},
          {"devices", devices},
          {"bytes_per_rank", bytes},
          {"host_memory", {{"kind", "pinned"}}},
          {"busbw_GBps", busbw},
          {"algbw_GBps", busbw},
          {"latency_us", {{"p50", p50}}}};
}

// The machine part of a context: GPU 0 on PCIe Gen5 x16, GPU 1 with no link information.
const json kMachine = json::parse(R"({"devices": [
  {"id": 0, "pcie_link": {"speed": "32.0 GT/s PCIe", "width": "16"}},
  {"id": 1, "pcie_link": {"speed": null, "width": null}}]})");

json expectations(json checks, double tolerance = 10) {
  return {{"schema", "dmabench-expectations/1"}, {"name", "test"}, {"tolerance_pct", tolerance}, {"checks", checks}};
}

void expect_bad(const json& doc, std::initializer_list<const char*> fragments) {
  try {
    load_doc(doc);
    FAIL() << "accepted: " << doc.dump();
  } catch (const InputError& e) {
    for (const char* f : fragments) EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(Check, AFixedFigurePassesWithinToleranceAndFailsBelow) {
  const auto x = load_doc(expectations(json::array({{{"pattern", "h2d"}, {"min_bytes", "64MiB"}, {"expect", 50.0}}})));
  auto v = x.judge(record("h2d", {0}, 45.5, 1), kMachine);  // 9% below: inside 10%
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->pass);
  EXPECT_NEAR(v->deviation_pct(), -9.0, 1e-9);
  v = x.judge(record("h2d", {0}, 44.0, 1), kMachine);  // 12% below
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->pass);
  EXPECT_TRUE(x.judge(record("h2d", {0}, 80.0, 1), kMachine)->pass);  // faster passes
  // Not matched: a size below min_bytes, another pattern, a skipped case.
  EXPECT_FALSE(x.judge(record("h2d", {0}, 1.0, 1, 4096), kMachine));
  EXPECT_FALSE(x.judge(record("d2h", {0}, 1.0, 1), kMachine));
  json skipped = record("h2d", {0}, 1.0, 1);
  skipped["status"] = "skipped";
  EXPECT_FALSE(x.judge(skipped, kMachine));
  // A failed case that a check covers fails the check, with its reason.
  json failed = record("h2d", {0}, 0, 0);
  failed["status"] = "failed";
  failed["reason"] = "validation: byte 3";
  v = x.judge(failed, kMachine);
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->pass);
  EXPECT_NE(v->problem.find("validation: byte 3"), std::string::npos) << v->problem;
}

TEST(Check, LatencyIsLowerIsBetter) {
  const auto x = load_doc(expectations(json::array({{{"metric", "p50_us"}, {"expect", 10.0}, {"tolerance_pct", 20}}})));
  EXPECT_TRUE(x.judge(record("h2d", {0}, 1, 11.9), kMachine)->pass);
  EXPECT_FALSE(x.judge(record("h2d", {0}, 1, 12.1), kMachine)->pass);
  EXPECT_TRUE(x.judge(record("h2d", {0}, 1, 2.0), kMachine)->pass);
}

TEST(Check, PcieExpectationComesFromTheGpusLink) {
  const auto x = load_doc(expectations(json::array({{{"pattern", json::array({"h2d", "h2d-bidir"})}, {"link", "pcie"}, {"efficiency", 0.85}}})));
  // Gen5 x16: 32 GT/s x 16 lanes x 128/130 / 8 = 63.015 GB/s per direction; x 0.85 = 53.56.
  const double expected = 32.0 * 16 * 128.0 / 130.0 / 8.0 * 0.85;
  auto v = x.judge(record("h2d", {0}, 55.0, 1), kMachine);
  ASSERT_TRUE(v);
  EXPECT_NEAR(*v->expected, expected, 1e-9);
  EXPECT_TRUE(v->pass);
  EXPECT_NE(v->basis.find("PCIe 32.0 GT/s x16"), std::string::npos) << v->basis;
  // Both directions at once count twice.
  EXPECT_NEAR(*x.judge(record("h2d-bidir", {0}, 100.0, 1), kMachine)->expected, 2 * expected, 1e-9);
  // A GPU whose link the machine does not show fails with the reason, never passes silently.
  v = x.judge(record("h2d", {1}, 55.0, 1), kMachine);
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->pass);
  EXPECT_NE(v->problem.find("PCIe link"), std::string::npos) << v->problem;
}

TEST(Check, LinkCountTimesRate) {
  const auto x = load_doc(expectations(json::array(
      {{{"pattern", "copy"}, {"link", "links"}, {"links", 18}, {"GBps_per_link", 25}, {"efficiency", 0.8}}})));
  auto v = x.judge(record("copy", {0, 1}, 350.0, 1), kMachine);
  ASSERT_TRUE(v);
  EXPECT_NEAR(*v->expected, 360.0, 1e-9);
  EXPECT_TRUE(v->pass);  // 350 >= 360 x 0.9
  EXPECT_FALSE(x.judge(record("copy", {0, 1}, 320.0, 1), kMachine)->pass);
}

// "links": "machine": the count the context gives per ordered pair (NVLink from NVML, xGMI from KFD).
TEST(Check, LinkCountFromTheMachine) {
  const auto x = load_doc(expectations(json::array(
      {{{"pattern", json::array({"copy", "bidir"})}, {"link", "links"}, {"links", "machine"}, {"GBps_per_link", 25}}})));
  json machine = kMachine;
  machine["peer_links"] = json::parse(R"([[{"links": null}, {"links": 18, "link_kind": "nvswitch"}, {"links": 0, "link_kind": "none"}],
                                          [{"links": 18, "link_kind": "nvswitch"}, {"links": null}, {"links": null}]])");
  auto v = x.judge(record("copy", {0, 1}, 440.0, 1), machine);
  ASSERT_TRUE(v);
  EXPECT_NEAR(*v->expected, 450.0, 1e-9);
  EXPECT_TRUE(v->pass);
  EXPECT_NE(v->basis.find("18 nvswitch links (from the machine) x 25 GB/s"), std::string::npos) << v->basis;
  EXPECT_NEAR(*x.judge(record("bidir", {1, 0}, 900.0, 1), machine)->expected, 900.0, 1e-9);  // both directions
  EXPECT_FALSE(x.judge(record("copy", {0, 1}, 400.0, 1), machine)->pass);                     // 11% below
  // No link, a count the machine does not know, a pair outside the matrix, no matrix at all: FAIL with the reason.
  v = x.judge(record("copy", {0, 2}, 440.0, 1), machine);
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->pass);
  EXPECT_NE(v->problem.find("no NVLink or xGMI link between GPU 0 and GPU 2"), std::string::npos) << v->problem;
  for (const auto& [devices, m] : {std::pair{std::vector<int>{1, 2}, machine}, std::pair{std::vector<int>{3, 0}, machine},
                                   std::pair{std::vector<int>{0, 1}, kMachine}}) {
    v = x.judge(record("copy", devices, 440.0, 1), m);
    ASSERT_TRUE(v);
    EXPECT_FALSE(v->pass);
    EXPECT_NE(v->problem.find("does not say how many links"), std::string::npos) << v->problem;
  }
  json why = machine;
  why["peer_links_unknown"] = "cannot load libnvidia-ml.so.1";
  v = x.judge(record("copy", {1, 2}, 440.0, 1), why);
  EXPECT_NE(v->problem.find("(cannot load libnvidia-ml.so.1)"), std::string::npos) << v->problem;
  expect_bad(expectations(json::array({{{"link", "links"}, {"links", "fabric"}, {"GBps_per_link", 25}}})), {"checks[0].links"});
}

// What the context's NVLink counts are made of (gpu/links.hpp): direct links to the peer, or switch links on both.
TEST(Check, NvLinkPairsFromTheLinkEnds) {
  EXPECT_EQ(gpu::normalized_bus_id("00000000:1A:00.0"), "0000:1a:00.0");
  EXPECT_EQ(gpu::normalized_bus_id("0000:06:00.0"), "0000:06:00.0");
  const gpu::LinkEnds direct{0, {"00000000:07:00.0", "00000000:07:00.0", "00000000:08:00.0"}};
  auto p = gpu::nvlink_pair(direct, {}, "0000:07:00.0");
  EXPECT_EQ(p.links, 2);
  EXPECT_EQ(p.kind, "nvlink");
  p = gpu::nvlink_pair(gpu::LinkEnds{18, {}}, gpu::LinkEnds{12, {}}, "0000:07:00.0");
  EXPECT_EQ(p.links, 12);
  EXPECT_EQ(p.kind, "nvswitch");
  p = gpu::nvlink_pair(gpu::LinkEnds{18, {}}, gpu::LinkEnds{0, {}}, "0000:07:00.0");  // the peer has no switch link
  EXPECT_EQ(p.links, 0);
  EXPECT_EQ(p.kind, "none");
  EXPECT_EQ(gpu::nvlink_pair(direct, {}, "0000:09:00.0").links, 0);
}

TEST(Check, FirstMatchingCheckAppliesAndDevicesNarrowIt) {
  const auto x = load_doc(expectations(json::array({{{"pattern", "copy"}, {"devices", {1, 0}}, {"expect", 10.0}},
                                                    {{"pattern", "copy"}, {"expect", 100.0}}})));
  EXPECT_DOUBLE_EQ(*x.judge(record("copy", {1, 0}, 50, 1), kMachine)->expected, 10.0);
  EXPECT_DOUBLE_EQ(*x.judge(record("copy", {0, 1}, 50, 1), kMachine)->expected, 100.0);
}

TEST(Check, AReferenceResultsFileExpectsWhatEachCaseMeasuredThere) {
  json ref_rec = record("copy", {0, 1}, 100.0, 5);
  json unmeasured = record("bidir", {0, 1}, 100.0, 5);
  json doc = {{"context", json::object()}, {"results", json::array({ref_rec})}};
  const auto x = check::Expectations::load(write_file("dmabench-reference.json", doc));
  EXPECT_TRUE(x.judge(record("copy", {0, 1}, 95.0, 5), kMachine)->pass);
  EXPECT_FALSE(x.judge(record("copy", {0, 1}, 85.0, 5), kMachine)->pass);
  EXPECT_FALSE(x.judge(unmeasured, kMachine));  // the reference did not measure it: nothing to judge
  // A case measured beside a workload is judged by what it kept beside it, against the case alone.
  json beside = record("copy", {0, 1}, 99.0, 5);
  beside["name"] = ref_rec["name"].get<std::string>() + "/beside=transfer-d2h-ce-256MiB";
  beside["overlap"] = {{"busbw_with_GBps", 40.0}, {"algbw_with_GBps", 40.0}, {"comm_with_us", 12.0}};
  const auto v = x.judge(beside, kMachine);
  ASSERT_TRUE(v);
  EXPECT_DOUBLE_EQ(*v->measured, 40.0);
  EXPECT_FALSE(v->pass);
  // An expectations file may name a reference (relative to itself) for some checks and figures for others.
  const std::string ref2 = write_file("dmabench-reference-2.json", doc);  // beside the expectations file
  const auto y = load_doc({{"schema", "dmabench-expectations/1"},
                           {"reference", ref2.substr(ref2.rfind('/') + 1)},
                           {"tolerance_pct", 50},
                           {"checks", json::array({{{"pattern", "copy"}, {"reference", true}}})}});
  EXPECT_TRUE(y.judge(record("copy", {0, 1}, 55.0, 5), kMachine)->pass);
}

// A reference is matched by the case's full key (case_key: the fields compare.py and history.py match on), never by its
// name: a name leaves options at their default out, so after a default changes one name can stand for two cases.
TEST(Check, AReferenceIsMatchedByTheCaseKeyNotTheName) {
  json ref_rec = record("copy", {0, 1}, 100.0, 5);
  ref_rec["options"] = {{"blocks", 4}};
  const json doc = {{"context", json::object()}, {"results", json::array({ref_rec})}};
  const auto x = check::Expectations::load(write_file("dmabench-reference-key.json", doc));
  // the same name, another case (an option at another value, which the name leaves out as the default): not judged
  json other = record("copy", {0, 1}, 50.0, 5);
  other["options"] = {{"blocks", 8}};
  ASSERT_EQ(other["name"], ref_rec["name"]);
  EXPECT_FALSE(x.judge(other, kMachine));
  // the same case under another name (a build that spells its defaults out): judged against the reference
  json same = record("copy", {0, 1}, 50.0, 5);
  same["options"] = {{"blocks", 4}};
  same["name"] = "copy/ce,blocks=4/pipelined/dev=0,1/256MiB";
  const auto v = x.judge(same, kMachine);
  ASSERT_TRUE(v);
  EXPECT_DOUBLE_EQ(*v->expected, 100.0);
  EXPECT_FALSE(v->pass);
  // every other field of the key keeps cases apart too
  for (const auto& [field, value] : {std::pair<const char*, json>{"bytes_per_rank", 1024}, {"timing", "oneshot"},
                                     {"devices", json::array({1, 0})}, {"rotate", 2}, {"in_place", true},
                                     {"host_memory", {{"kind", "mapped"}}}, {"engine", "sm"}}) {
    json r = record("copy", {0, 1}, 50.0, 5);
    r["options"] = {{"blocks", 4}};
    r[field] = value;
    EXPECT_FALSE(x.judge(r, kMachine)) << field;
  }
}

// A reference that measured a case both alone and beside a workload expects the figure it measured alone.
TEST(Check, AReferenceMeasuredAloneIsKeptOverOneBesideAWorkload) {
  json alone = record("copy", {0, 1}, 100.0, 5);
  json beside = record("copy", {0, 1}, 40.0, 5);
  beside["name"] = alone["name"].get<std::string>() + "/beside=gemm-bf16-8192x8192x8192";
  for (const json& results : {json::array({alone, beside}), json::array({beside, alone})}) {
    const json doc = {{"context", json::object()}, {"results", results}};
    const auto x = check::Expectations::load(write_file("dmabench-reference-alone.json", doc));
    const auto v = x.judge(record("copy", {0, 1}, 95.0, 5), kMachine);
    ASSERT_TRUE(v);
    EXPECT_DOUBLE_EQ(*v->expected, 100.0);
  }
}

// The key is dmabench.keys.case_key's, field for field: what it leaves out or canonicalises does not part cases.
TEST(Check, TheCaseKeyIsTheScriptsKey) {
  json a = record("alltoallv", {0, 1}, 1.0, 1);
  a["layout"] = {{"kind", "blocks"}, {"block_bytes", 4096}, {"blocks_per_op", 16}};
  a["alltoallv"] = {{"direction", "dispatch"}, {"file", "/data/a/trace.json"}, {"seed", 1}};
  a["name"] = "alltoallv/ce/pipelined/dev=0,1/x/beside=gemm-bf16-8192x8192x8192";
  json b = a;
  b["layout"]["blocks_per_op"] = 32;                 // derived from the layout: not part of the key
  b["alltoallv"]["file"] = "/other/machine/trace.json";  // the trace by file name alone
  b["name"] = "another/name/beside=gemm-bf16-8192x8192x8192";
  b["in_place"] = false;                             // absent and false are one
  EXPECT_EQ(case_key(a).dump(), case_key(b).dump());
  const json k = case_key(a);
  EXPECT_EQ(k["beside"], "gemm-bf16-8192x8192x8192");
  EXPECT_EQ(k["rotate"], 1);
  EXPECT_EQ(k["host"], json::array({"pinned", nullptr}));
  EXPECT_EQ(k["routing"]["file"], "trace.json");
  EXPECT_EQ(k["layout"], json({{"kind", "blocks"}, {"block_bytes", 4096}}));
  json contiguous = record("copy", {0, 1}, 1.0, 1);
  EXPECT_FALSE(case_key(contiguous).contains("routing"));  // other patterns keep the key they had
  EXPECT_TRUE(case_key(contiguous)["layout"].is_null());
  contiguous["layout"] = {{"kind", "contiguous"}};
  EXPECT_TRUE(case_key(contiguous)["layout"].is_null());
  b["alltoallv"]["seed"] = 2;
  EXPECT_NE(case_key(a).dump(), case_key(b).dump());
}

// tests/data/case_key/pairs.json: pairs of records that are one case or two, which python/dmabench/keys.py's
// case_key must judge alike (the one definition, results/SCHEMA.md "A case's identity", in both languages).
TEST(Check, TheCaseKeyJudgesTheSharedPairsAsTheScriptsMust) {
  std::ifstream in(std::string(DMABENCH_SOURCE_DIR) + "/tests/data/case_key/pairs.json");
  const json doc = json::parse(in);
  ASSERT_GE(doc["pairs"].size(), 10u);
  for (const json& p : doc["pairs"])
    EXPECT_EQ(case_key(p["a"]).dump() == case_key(p["b"]).dump(), p["same"].get<bool>()) << p["why"];
}

// The key's parts are python/dmabench/case_key.json's, in the program as it was built: the file is the definition.
TEST(Check, TheCaseKeysPartsAreTheSpecsParts) {
  std::ifstream in(std::string(DMABENCH_SOURCE_DIR) + "/python/dmabench/case_key.json");
  const json spec = json::parse(in);
  EXPECT_EQ(json::parse(kCaseKeySpec), spec);  // the build embedded the file as it is now
  json alltoallv = record("alltoallv", {0, 1}, 1.0, 1);
  alltoallv["alltoallv"] = {{"direction", "dispatch"}};
  std::vector<std::string> parts, got;
  for (const json& p : spec["parts"]) parts.push_back(p["part"].get<std::string>());
  const json key = case_key(alltoallv);  // held: a range-for over a temporary's items() would read freed memory
  for (const auto& [k, v] : key.items()) got.push_back(k);
  std::sort(parts.begin(), parts.end());
  EXPECT_EQ(got, parts);  // json objects iterate in sorted order
}

TEST(Check, BadFilesAreInputErrorsNamingTheField) {
  expect_bad(json::array(), {"expected a JSON object"});
  expect_bad({{"checks", json::array()}}, {"schema", "dmabench-expectations/1"});
  expect_bad(expectations(json::array()), {"checks", "non-empty"});
  expect_bad(expectations(json::array({{{"expect", 1}, {"colour", "red"}}})), {"checks[0].colour", "unknown key"});
  expect_bad(expectations(json::array({{{"pattern", "copy"}}})), {"checks[0]", "exactly one of expect"});
  expect_bad(expectations(json::array({{{"expect", 1}, {"link", "pcie"}}})), {"checks[0]", "exactly one"});
  expect_bad(expectations(json::array({{{"expect", -1}}})), {"checks[0].expect", "expected a number"});
  expect_bad(expectations(json::array({{{"link", "nvlink"}}})), {"checks[0].link", "\"pcie\"", "\"links\""});
  expect_bad(expectations(json::array({{{"link", "links"}, {"links", 4}}})), {"checks[0].GBps_per_link"});
  expect_bad(expectations(json::array({{{"expect", 1}, {"metric", "joules"}}})), {"checks[0].metric", "busbw_GBps"});
  expect_bad(expectations(json::array({{{"expect", 1}, {"min_bytes", "lots"}}})), {"checks[0].min_bytes"});
  expect_bad(expectations(json::array({{{"reference", true}}})), {"checks[0].reference", "top-level"});
  expect_bad(expectations(json::array({{{"expect", 1}, {"tolerance_pct", 101}}})), {"checks[0].tolerance_pct"});
  expect_bad(expectations(json::array({{{"link", "pcie"}, {"metric", "p50_us"}}})), {"checks[0].link", "bandwidth"});
  try {
    check::Expectations::load(::testing::TempDir() + "/no-such-expectations.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read it"), std::string::npos) << e.what();
  }
  const std::string fifo = ::testing::TempDir() + "/dmabench-check-fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  try {
    check::Expectations::load(fifo);  // must not wait for a writer
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  ::unlink(fifo.c_str());
  std::ofstream(::testing::TempDir() + "/dmabench-notjson.json") << "{nope";
  EXPECT_THROW(check::Expectations::load(::testing::TempDir() + "/dmabench-notjson.json"), InputError);
}

// Nesting is bounded as in a config: 4 MB of '[' parse to hundreds of MB (and the 512 MiB a file may have, to
// tens of GB); refused with one line instead.
TEST(Check, ADeeplyNestedFileIsRefusedBeforeItIsBuilt) {
  const std::string path = fmt::format("{}/{}-dmabench-deep.json", ::testing::TempDir(), ::getpid());
  std::ofstream(path) << "{\"results\": [{\"name\": \"x\", \"a\": " << std::string(2000000, '[')
                      << std::string(2000000, ']') << "}]}";
  try {
    check::Expectations::load(path);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("nested more than 64 levels deep"), std::string::npos) << e.what();
  }
  ::unlink(path.c_str());
}

namespace {

// A record with the intervals dmabench writes around its p50 and bandwidths (results/SCHEMA.md).
json with_intervals(json r, double bw_low, double bw_high, double p50_low, double p50_high) {
  r["busbw_interval_GBps"] = {bw_low, bw_high};
  r["algbw_interval_GBps"] = {bw_low, bw_high};
  r["p50_interval_us"] = {p50_low, p50_high};
  return r;
}

}  // namespace

// A figure outside the band whose interval reaches into it passes "within noise"; one whose whole interval lies
// outside still fails; records without intervals are judged by the figure alone, as before.
TEST(Check, AFailNeedsTheWholeIntervalOutsideTheBand) {
  const auto x = load_doc(expectations(json::array({{{"pattern", "h2d"}, {"expect", 50.0}}})));  // at least 45
  auto v = x.judge(with_intervals(record("h2d", {0}, 44.0, 1), 40.0, 46.0, 0.9, 1.1), kMachine);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->pass);
  EXPECT_TRUE(v->within_noise);
  v = x.judge(with_intervals(record("h2d", {0}, 44.0, 1), 40.0, 44.9, 0.9, 1.1), kMachine);
  ASSERT_TRUE(v);
  EXPECT_FALSE(v->pass);
  EXPECT_FALSE(v->within_noise);
  v = x.judge(record("h2d", {0}, 44.0, 1), kMachine);  // no interval: the figure alone
  EXPECT_FALSE(v->pass);
  // an unbounded interval (its high end null: a low sample of 0 us) reaches any band
  json open = with_intervals(record("h2d", {0}, 44.0, 1), 40.0, 0, 0.9, 1.1);
  open["busbw_interval_GBps"][1] = nullptr;
  EXPECT_TRUE(x.judge(open, kMachine)->within_noise);
  // a latency: the interval's low end must lie above the band
  const auto lat = load_doc(expectations(json::array({{{"metric", "p50_us"}, {"expect", 10.0}, {"tolerance_pct", 20}}})));
  EXPECT_TRUE(lat.judge(with_intervals(record("h2d", {0}, 1, 12.5), 1, 1, 11.8, 13.0), kMachine)->within_noise);
  EXPECT_FALSE(lat.judge(with_intervals(record("h2d", {0}, 1, 12.5), 1, 1, 12.1, 13.0), kMachine)->pass);
  // a planted slow device: tight intervals far outside the band fail
  EXPECT_FALSE(x.judge(with_intervals(record("h2d", {0}, 5.0, 1), 4.9, 5.1, 0.9, 1.1), kMachine)->pass);
}

// Against a reference, the two intervals must be apart in the failing direction (the band drawn from the
// reference interval's near end) for a FAIL.
TEST(Check, AgainstAReferenceTheIntervalsMustNotOverlap) {
  json ref_rec = with_intervals(record("copy", {0, 1}, 100.0, 5), 96.0, 104.0, 4.8, 5.2);
  json doc = {{"context", json::object()}, {"results", json::array({ref_rec})}};
  const auto x = check::Expectations::load(write_file("dmabench-reference-intervals.json", doc));  // 10%: at least 90
  // the band from the reference interval's near end: at least 96 x 0.9 = 86.4. 88 (below 90) whose interval reaches 87:
  auto v = x.judge(with_intervals(record("copy", {0, 1}, 88.0, 5), 85.0, 87.0, 4.9, 5.1), kMachine);
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->pass);
  EXPECT_TRUE(v->within_noise);
  ASSERT_TRUE(v->expected_interval);
  EXPECT_DOUBLE_EQ(v->expected_interval->first, 96.0);
  v = x.judge(with_intervals(record("copy", {0, 1}, 85.0, 5), 84.0, 86.0, 4.9, 5.1), kMachine);  // below 86.4 whole
  EXPECT_FALSE(v->pass);
  EXPECT_TRUE(x.judge(with_intervals(record("copy", {0, 1}, 95.0, 5), 94.0, 96.0, 4.9, 5.1), kMachine)->pass);
  // a reference without intervals: the measured interval against its figure
  const json plain = {{"context", json::object()}, {"results", json::array({record("copy", {0, 1}, 100.0, 5)})}};
  const auto y = check::Expectations::load(write_file("dmabench-reference-plain.json", plain));
  EXPECT_FALSE(y.judge(with_intervals(record("copy", {0, 1}, 85.0, 5), 84.0, 89.9, 4.9, 5.1), kMachine)->pass);
  EXPECT_TRUE(y.judge(with_intervals(record("copy", {0, 1}, 85.0, 5), 84.0, 90.1, 4.9, 5.1), kMachine)->within_noise);
}

// The verdict line of a PASS within noise says so, with both intervals; other lines keep their form.
TEST(Check, WithinNoiseIsSaidOnItsLine) {
  check::Verdict v;
  v.name = "h2d/ce/oneshot/dev=0/64MiB";
  v.metric = "busbw_GBps";
  v.measured = 44.0;
  v.expected = 50.0;
  v.basis = "expected";
  v.pass = v.within_noise = true;
  v.word = "ambiguous";
  v.measured_interval = std::pair{40.0, 46.0};
  ::testing::internal::CaptureStdout();
  std::vector<check::Verdict> vs{v};
  check::print_verdicts(vs, 0, "x.json");
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("PASS  h2d/ce/oneshot/dev=0/64MiB  ambiguous: busbw_GBps 44, expected 50 (-12.0%; down to -10% allowed; expected; "
                     "within noise: the measured interval [40, 46] reaches the allowed band)"),
            std::string::npos)
      << out;
}

// Each verdict says which intervals judged it: a levels file's record is judged on its between-process interval.
TEST(Check, TheVerdictNamesTheIntervalsThatJudgedIt) {
  const json ref = {{"context", json::object()},
                    {"results", json::array({with_intervals(record("copy", {0, 1}, 100.0, 5), 96.0, 104.0, 4.9, 5.1)})}};
  const auto x = check::Expectations::load(write_file("dmabench-reference-kinds.json", ref));
  json r = with_intervals(record("copy", {0, 1}, 88.0, 5), 80.0, 95.0, 4.9, 5.1);
  r["levels"] = {{"interval", "between processes"}, {"processes", 5}};
  const auto v = x.judge(r, kMachine);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->measured_interval_kind, "between 5 processes");
  EXPECT_EQ(v->expected_interval_kind, "within one process");
  ::testing::internal::CaptureStdout();
  std::vector<check::Verdict> vs{*v};
  check::print_verdicts(vs, 0, "x.json");
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("; interval between 5 processes, the reference's within one process)"), std::string::npos) << out;
}

// Against a reference levels file, where both records hold per-process p50s, the verdict is compare's rule: 6 + 6
// draws fully apart and 20% slower fail (`slower`), the same draws level pass (`same`), draws apart by 3% on a
// launch-bound case pass as `same` (within the 5% minimum), and a 20% change from 2 + 2 draws cannot be supported
// (`ambiguous`, PASS); the band words hold where a side has no draws.
TEST(Check, AgainstAReferenceLevelsFileTheWordsComeFromTheRankRule) {
  const auto rec = [](double bytes) {  // launch-bound sizes; algbw = S / p50 (a reference is checked for it)
    return record("copy", {0, 1}, bytes / 5.0 / 1e3, 5.0, static_cast<std::uint64_t>(bytes));
  };
  const auto levels = [](json r, std::vector<double> p50s) {
    r["levels"] = {{"interval", "between processes"}, {"processes", p50s.size()}, {"p50_us", p50s}};
    return r;
  };
  const std::vector<double> six{100, 101, 102, 103, 104, 105};
  std::vector<double> slower, level, slight;
  for (double x : six) slower.push_back(x * 1.2), level.push_back(x + 0.5), slight.push_back(x * 1.03);
  const json ref = {{"context", json::object()},
                    {"results", json::array({levels(rec(4096.0), six),
                                             levels(rec(8192.0), six),
                                             levels(rec(16384.0), six),
                                             levels(rec(32768.0), {100, 101}),
                                             rec(65536.0)})}};
  const auto x = check::Expectations::load(write_file("dmabench-reference-levels.json", ref));
  std::vector<check::Verdict> vs;
  for (const auto& [bytes, draws] : std::vector<std::pair<double, std::vector<double>>>{
           {4096.0, slower}, {8192.0, level}, {16384.0, slight}, {32768.0, {120, 121}}, {65536.0, {}}}) {
    json r = rec(bytes);
    if (!draws.empty()) r = levels(r, draws);
    auto v = x.judge(r, kMachine);
    ASSERT_TRUE(v);
    vs.push_back(*v);
  }
  ::testing::internal::CaptureStdout();
  const bool all_passed = check::print_verdicts(vs, 0, "ref.json");
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_FALSE(all_passed);
  EXPECT_EQ(vs[0].word, "slower");
  EXPECT_FALSE(vs[0].pass);
  EXPECT_EQ(vs[1].word, "same");
  EXPECT_EQ(vs[2].word, "same");
  EXPECT_EQ(vs[3].word, "ambiguous");
  EXPECT_TRUE(vs[3].pass);
  EXPECT_FALSE(vs[4].p_value.has_value());  // no draws on the run's side: the band's word
  EXPECT_EQ(vs[4].word, "same");
  EXPECT_EQ(vs[0].family, 4u);
  EXPECT_NE(out.find("  slower: p50 +20.0% (Hodges-Lehmann over 6 x 6 process p50s"), std::string::npos) << out;
  EXPECT_NE(out.find("(Benjamini-Hochberg over 4 cases); minimum 5% (launch-bound)"), std::string::npos) << out;
}

// A reference that contradicts itself is refused (exit 2 naming the record and field), not trusted: its p50 and algbw
// made 10x faster while its intervals were left (issue 40), algbw that is not S / p50, busbw's interval another
// multiple of algbw's than busbw itself.
TEST(Check, AReferenceThatContradictsItselfIsRefused) {
  json good = with_intervals(record("copy", {0, 1}, 100.0, 5), 96.0, 104.0, 4.8, 5.2);
  const auto refused = [](const json& rec, const std::string& words) {
    const json doc = {{"context", json::object()}, {"results", json::array({rec})}};
    try {
      check::Expectations::load(write_file("dmabench-reference-bad.json", doc));
      ADD_FAILURE() << "accepted " << rec.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("results[0] (copy/ce/pipelined/dev=0/x)"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  EXPECT_NO_THROW(check::Expectations::load(write_file("dmabench-reference-good.json",
                                                       json{{"context", json::object()}, {"results", json::array({good})}})));
  json faster = good;
  faster["latency_us"]["p50"] = 0.5;
  faster["busbw_GBps"] = faster["algbw_GBps"] = 1000.0;
  refused(faster, "latency_us.p50 0.5 lies outside its own p50_interval_us [4.8, 5.2]");
  json sized = good;
  sized["bytes"] = 500000;  // S / p50 = 100 GB/s at 5 us; S / 5.2 us and S / 4.8 us at the interval's ends
  sized["algbw_interval_GBps"] = sized["busbw_interval_GBps"] = {500000 / 5200.0, 500000 / 4800.0};
  EXPECT_NO_THROW(check::Expectations::load(write_file("dmabench-reference-sized.json",
                                                       json{{"context", json::object()}, {"results", json::array({sized})}})));
  sized["algbw_GBps"] = sized["busbw_GBps"] = 1000.0;
  refused(sized, "algbw_GBps 1000 is not bytes / p50 = 100");
  json factor = good;
  factor["busbw_GBps"] = 50.0;
  refused(factor, "busbw_GBps is 0.5 x algbw_GBps but its interval 1 x algbw's");
}
