#pragma once
// JUnit XML: the one writer of the layout (docs/user-guide.md, "JUnit XML"; tests/data/junit.xsd is its schema). Two
// modes write it: a run's `--junit FILE` (a test case per case, test_cases() below) and `--junit-from CASES.json
// --junit FILE` (bench/output/junit_from.hpp: the test cases python/dmabench's compare, history gate and ab send, a
// verdict each). One <testsuites> holding one <testsuite name="dmabench">, its optional <properties>; a case is a
// <testcase classname="PATTERN.ENGINE" name="CASE NAME" time="SECONDS">: its figures as <properties>
// (record_properties), then a <failure type=KIND>, an <error type=KIND> or a <skipped message=REASON/>, then an optional
// <system-out>. The file is written atomically (core/json_file.hpp).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmabench::junit {

using Properties = std::vector<std::pair<std::string, std::string>>;  // (name, value) pairs, in order

struct TestCase {
  std::string classname;  // pattern.engine
  std::string name;       // the case name
  double seconds = 0;     // the case's sampling time
  enum class Outcome { passed, failed, skipped, error } outcome = Outcome::passed;
  std::string type;       // a failure's (or error's) type: "failed" (the case), "check" (a --check verdict), a verdict
  std::string message;    // the reason or the verdict
  // The case's figures (record_properties), written as the testcase's <properties> before its outcome.
  Properties properties;
  std::string output;     // the <system-out> text after the outcome ("" for none)
};

// An ok record's figures as (name, value) pairs, the names the record's dotted paths: bytes, bytes_per_rank,
// latency_us.p50/.p99/.mean/.min/.max, algbw_GBps, busbw_GBps, the p50's interval ends p50_interval_us.low/.high,
// busbw_interval_GBps.low/.high, noise, sampling.samples, sampling.seconds, power.active_W, power.energy_per_GB_J;
// each only where the record has it (a skipped or failed record: none). Numbers as the CSV writes them
// (bench/output/export.hpp). The only list of the figures: python/dmabench/junit.py sends a case's record for them.
Properties record_properties(const nlohmann::json& record);

// A test case per results record (results/SCHEMA.md): classname `pattern.engine` (`none` without an engine), the
// record's status (failed: a failure of type "failed" with its reason; skipped: skipped with it), and a case named in
// `failed_checks` (case name -> the --check FAIL line) a failure of type "check". The time: the record's
// `sampling.seconds` (0 where it has none; python/dmabench/junit.py's case_seconds takes the p50 then).
std::vector<TestCase> test_cases(const std::vector<nlohmann::json>& records,
                                 const std::map<std::string, std::string>& failed_checks);

// The document: XML 1.0, UTF-8; text from outside escaped (markup characters as entities, control characters and
// bytes that are not UTF-8 as \xNN, U+FFFE/U+FFFF as \uNNNN), so no case name can break the file. `properties`: the
// suite's <properties> (none where empty); a time: seconds with 6 decimals, rounded up, 0 where negative or not finite.
std::string document(const std::vector<TestCase>& cases, const std::string& suite, const std::string& timestamp,
                     const std::string& hostname, const Properties& properties = {});
// Writes document() (suite "dmabench") to `path` atomically; throws std::runtime_error naming the path.
void write(const std::string& path, const std::vector<TestCase>& cases, const std::string& timestamp,
           const std::string& hostname, const Properties& properties = {});

// Text for an XML attribute (`attribute`: tab, newline and carriage return written \\t, \\n, \\r) or element
// (exposed for tests).
std::string escape(const std::string& text, bool attribute);

}  // namespace dmabench::junit
