#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>

#include <sched.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "bench/output/report.hpp"

using namespace dmabench;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {
json read(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}
fs::path fresh_dir(const char* name) {
  fs::path d = fs::path(::testing::TempDir()) / name;
  fs::remove_all(d);
  return d;
}
}  // namespace

TEST(Report, AtomicWriteRoundTripsAndLeavesNoTemporary) {
  const fs::path dir = fresh_dir("dmabench_report_a");
  const std::string path = (dir / "sub" / "r.json").string();  // parent directories are created
  json doc = {{"a", 1}, {"b", {1.5, "x"}}};
  write_json_atomically(path, doc);
  EXPECT_EQ(read(path), doc);
  doc["a"] = 2;
  write_json_atomically(path, doc);  // rewrite replaces
  EXPECT_EQ(read(path), doc);
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir / "sub")) {
    ++files;
    EXPECT_EQ(e.path().filename(), "r.json");
  }
  EXPECT_EQ(files, 1);
}

TEST(Report, WriteFailureNamesThePathAndKeepsTheOldFile) {
  const fs::path dir = fresh_dir("dmabench_report_b");
  fs::create_directories(dir);
  const std::string path = (dir / "r.json").string();
  write_json_atomically(path, json{{"v", 1}});
  // A directory where the temporary file would go makes the write fail.
  const fs::path blocker = dir / "blocked";
  fs::create_directories(blocker / "x.json");
  try {
    write_json_atomically((blocker / "x.json").string(), json{{"v", 2}});
    // rename onto a directory fails
    FAIL() << "writing over a directory succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("x.json"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read(path), json({{"v", 1}}));
}

// Every record reaches the journal at once; <out> is written with the first record, then at most every
// kRewriteSeconds, and whole by finish(), which removes the journal.
TEST(Report, ResultsFileJournalsEveryCaseAndWritesTheFileAtTheEnd) {
  const fs::path dir = fresh_dir("dmabench_report_c");
  const std::string path = (dir / "run.json").string();
  auto journal_lines = [&] {
    std::ifstream in(path + ".journal");
    std::vector<json> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(json::parse(line));
    return lines;
  };
  {
    ResultsFile file(path, json{{"backend", "host"}});
    EXPECT_FALSE(fs::exists(path));  // nothing replaced before the first record
    file.add(json{{"name", "a"}});
    EXPECT_EQ(read(path)["results"].size(), 1u);  // the first record replaces <out> at once
    for (int i = 0; i < 50; ++i) file.add(json{{"name", "b" + std::to_string(i)}});
    const auto lines = journal_lines();
    ASSERT_EQ(lines.size(), 52u);  // the header and every record, at once
    EXPECT_EQ(lines[0]["schema"], kJournalSchema);
    EXPECT_EQ(lines[0]["results_schema"], kSchemaVersion);
    EXPECT_EQ(lines[0]["context"]["backend"], "host");
    EXPECT_EQ(lines[51]["name"], "b49");
    EXPECT_LT(read(path)["results"].size(), 51u);  // not rewritten for every case
    file.finish();
    const json doc = read(path);
    EXPECT_EQ(doc["schema"], kSchemaVersion);
    ASSERT_EQ(doc["results"].size(), 51u);
    EXPECT_EQ(doc["results"][50]["name"], "b49");
    EXPECT_FALSE(fs::exists(path + ".journal"));
  }
  {
    ResultsFile unfinished(path, json{{"backend", "host"}});  // a run that does not end: its journal stays
    unfinished.add(json{{"name", "x"}});
  }
  EXPECT_EQ(journal_lines().size(), 2u);
  ResultsFile empty(path, json{{"backend", "host"}});
  empty.finish();  // a run without a case changes nothing: the file and the unfinished run's journal stay
  EXPECT_EQ(read(path)["results"].size(), 1u);
  EXPECT_EQ(journal_lines().size(), 2u);
}

TEST(Report, UtcTimesHaveMilliseconds) {
  using namespace std::chrono;
  const system_clock::time_point t = system_clock::time_point(seconds(1796200006)) + milliseconds(7);
  EXPECT_EQ(utc_iso8601_ms(t), "2026-12-02T08:26:46.007Z");
  EXPECT_EQ(utc_iso8601_ms(system_clock::time_point(seconds(0))), "1970-01-01T00:00:00.000Z");
}

// The context says when the run started (from the first write and in the journal's header) and, once the file
// is finished, when it finished and how long it took on the steady clock.
TEST(Report, ResultsFileRecordsStartFinishAndWallTime) {
  using namespace std::chrono;
  const fs::path dir = fresh_dir("dmabench_report_times");
  const std::string path = (dir / "run.json").string();
  const auto ago = milliseconds(1500);
  const RunStart start{utc_iso8601_ms(system_clock::now() - ago), steady_clock::now() - ago};
  ResultsFile file(path, json{{"backend", "host"}}, start);
  file.add(json{{"name", "a"}});
  const json running = read(path)["context"];
  EXPECT_EQ(running["started_at"], start.started_at);
  EXPECT_FALSE(running.contains("finished_at"));  // not finished: no end, no wall time
  EXPECT_FALSE(running.contains("wall_s"));
  std::ifstream in(path + ".journal");
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(json::parse(header)["context"]["started_at"], start.started_at);
  file.finish();
  const json ctx = read(path)["context"];
  EXPECT_EQ(ctx["started_at"], start.started_at);
  const std::string finished = ctx["finished_at"].get<std::string>();
  ASSERT_EQ(finished.size(), 24u);  // 2026-12-02T08:26:46.123Z
  EXPECT_GT(finished, start.started_at);  // ISO 8601 strings of one format order as times
  const double wall_s = ctx["wall_s"].get<double>();
  EXPECT_GE(wall_s, 1.5);
  EXPECT_LT(wall_s, 60.0);
  // finished_at - started_at, to the millisecond, matches the steady-clock wall time (no clock step here)
  auto parse_ms = [](const std::string& iso) {
    std::tm tm{};
    strptime(iso.substr(0, 19).c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    return static_cast<double>(timegm(&tm)) + std::stod(iso.substr(20, 3)) / 1000.0;
  };
  EXPECT_NEAR(parse_ms(finished) - parse_ms(start.started_at), wall_s, 0.05);
}

TEST(Report, HostContextHasDateHostAndOs) {
  json c = host_context();
  ASSERT_TRUE(c["date"].is_string());
  EXPECT_EQ(c["date"].get<std::string>().size(), 20u);  // 2026-11-29T22:00:00Z
  EXPECT_FALSE(c["host"].get<std::string>().empty());
  EXPECT_FALSE(c["os"].get<std::string>().empty());
}

// The affinity is the calling thread's, written as ranges: pinned to one CPU it names that CPU.
TEST(Report, CpuAffinityNamesThePinnedCpus) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  const std::string all = dmabench::cpu_affinity();
  EXPECT_NE(all, "unknown");
  EXPECT_EQ(dmabench::host_context()["cpu_affinity"], all);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
    if (CPU_ISSET(c, &saved)) first = c;
  ASSERT_GE(first, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  EXPECT_EQ(dmabench::cpu_affinity(), std::to_string(first));
  if (CPU_COUNT(&saved) >= 2) {
    int second = -1;
    for (int c = first + 1; c < CPU_SETSIZE && second < 0; ++c)
      if (CPU_ISSET(c, &saved)) second = c;
    CPU_SET(second, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    EXPECT_EQ(dmabench::cpu_affinity(), second == first + 1 ? fmt::format("{}-{}", first, second) : fmt::format("{},{}", first, second));
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof saved, &saved), 0);
}
