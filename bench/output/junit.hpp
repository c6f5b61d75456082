#pragma once
// --junit FILE: the run as a JUnit XML report, for CI systems that show tests (docs/user-guide.md, "JUnit
// reports"; the layout python/dmabench's compare and history gate write too). One <testsuite name="dmabench">;
// a case is a <testcase classname="PATTERN.ENGINE" name="CASE NAME" time="SECONDS">: a failed case holds
// <failure type="failed">, a skipped one <skipped message=REASON/>, a case a --check judged FAIL
// <failure type="check">; an ok case carries its figures as <properties> (record_properties). The file is written atomically (core/json_file.hpp).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmabench::junit {

struct TestCase {
  std::string classname;  // pattern.engine
  std::string name;       // the case name
  double seconds = 0;     // the case's sampling time
  enum class Outcome { passed, failed, skipped } outcome = Outcome::passed;
  std::string type;       // a failure's type: "failed" (the case) or "check" (a --check verdict)
  std::string message;    // the reason or the verdict
  // The case's figures (record_properties), written as the testcase's <properties> before its outcome.
  std::vector<std::pair<std::string, std::string>> properties;
};

// An ok record's figures as (name, value) pairs, the names the record's dotted paths: bytes, bytes_per_rank,
// latency_us.p50/.p99/.mean/.min/.max, algbw_GBps, busbw_GBps, the p50's interval ends p50_interval_us.low/.high,
// busbw_interval_GBps.low/.high, noise, sampling.samples, sampling.seconds, power.active_W, power.energy_per_GB_J;
// each only where the record has it (a skipped or failed record: none). Numbers as the CSV writes them
// (bench/output/export.hpp); python/dmabench/junit.py's record_properties gives the same pairs.
std::vector<std::pair<std::string, std::string>> record_properties(const nlohmann::json& record);

// A test case per results record (results/SCHEMA.md): classname `pattern.engine` (`none` without an engine), the
// record's status (failed: a failure of type "failed" with its reason; skipped: skipped with it), and a case named in
// `failed_checks` (case name -> the --check FAIL line) a failure of type "check". The time: the record's
// `sampling.seconds` (0 where it has none), as python/dmabench/junit.py's case_seconds takes it.
std::vector<TestCase> test_cases(const std::vector<nlohmann::json>& records,
                                 const std::map<std::string, std::string>& failed_checks);

// The document: XML 1.0, UTF-8; text from outside escaped (markup characters as entities, control characters
// bytes that are not UTF-8 as \xNN, U+FFFE/U+FFFF as \uNNNN), so no case name can break the file.
std::string document(const std::vector<TestCase>& cases, const std::string& suite, const std::string& timestamp,
                     const std::string& hostname);
// Writes document() to `path` atomically; throws std::runtime_error naming the path.
void write(const std::string& path, const std::vector<TestCase>& cases, const std::string& timestamp,
           const std::string& hostname);

// Text for an XML attribute (`attribute`: tab, newline and carriage return written \\t, \\n, \\r) or element
// (exposed for tests).
std::string escape(const std::string& text, bool attribute);

}  // namespace dmabench::junit
