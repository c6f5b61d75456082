// --junit FILE's writer (bench/output/junit.hpp): any text makes well-formed XML 1.0, the counts are the test cases'.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <gtest/gtest.h>

#include "bench/output/junit.hpp"

using namespace dmabench;
namespace fs = std::filesystem;

namespace {
std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST(Junit, EscapesMarkupControlCharactersAndBytesThatAreNotXml) {
  EXPECT_EQ(junit::escape(R"(<a & "b" 'c'>)", true), "&lt;a &amp; &quot;b&quot; &apos;c&apos;&gt;");
  // tab, newline, carriage return: kept in element text, written as \t \n \r in an attribute (which folds them)
  EXPECT_EQ(junit::escape("a\tb\nc\rd", false), "a\tb\nc\rd");
  EXPECT_EQ(junit::escape("a\tb\nc\rd", true), "a\\tb\\nc\\rd");
  // the other control characters are not XML 1.0 characters at all
  EXPECT_EQ(junit::escape(std::string("a\x01""b\x7f", 4), false), "a\\x01b\\x7f");
  EXPECT_EQ(junit::escape(std::string("a\0b", 3), true), "a\\x00b");
  // U+FFFE and U+FFFF (valid UTF-8, not XML characters); a lone surrogate and a stray byte (not UTF-8)
  EXPECT_EQ(junit::escape("\xEF\xBF\xBE|\xEF\xBF\xBF|\xEF\xBF\xBD", true), "\\ufffe|\\uffff|\xEF\xBF\xBD");
  EXPECT_EQ(junit::escape("\xED\xA0\x80", true), "\\xed\\xa0\\x80");
  EXPECT_EQ(junit::escape("\xff", false), "\\xff");
  EXPECT_EQ(junit::escape("é µs", true), "é µs");
}

TEST(Junit, DocumentCountsItsTestCases) {
  using O = junit::TestCase::Outcome;
  const std::vector<junit::TestCase> cases = {
      {"copy.host", "copy/host/oneshot/dev=0,1/4KiB", 0.25, O::passed, "", "", {}},
      {"copy.ce", "copy/ce/oneshot/dev=0,1/4KiB", 0.0, O::skipped, "", "engine ce: not on the host backend", {}},
      {"copy.sm", "copy/sm/<1>", 0.5, O::failed, "failed", "validation: byte 3 is 0x00, expected 0x5a\nmore", {}},
      {"copy.host", "copy/host/pipelined", -1, O::failed, "check", "FAIL  copy/host/pipelined: p50 2 us > 1 us", {}}};
  const std::string xml = junit::document(cases, "dmabench", "2026-12-04T11:00:00", "host\"1");
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u);
  EXPECT_NE(xml.find(R"(<testsuites name="dmabench" tests="4" failures="2" errors="0" skipped="1" time="0.750000">)"),
            std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(tests="4" failures="2" errors="0" skipped="1" time="0.750000" timestamp="2026-12-04T11:00:00" )"
                     R"(hostname="host&quot;1">)"),
            std::string::npos) << xml;
  EXPECT_EQ(count(xml, "<testcase "), 4u);
  EXPECT_EQ(count(xml, "<failure "), 2u);
  EXPECT_EQ(count(xml, "<skipped "), 1u);
  EXPECT_NE(xml.find(R"(<skipped message="engine ce: not on the host backend"/>)"), std::string::npos);
  // a negative time (a clock that went back) is written as 0: the schema's time is never negative
  EXPECT_NE(xml.find(R"(name="copy/host/pipelined" time="0.000000")"), std::string::npos) << xml;
  // the message: one line in the attribute, the text as it is in the element
  EXPECT_NE(xml.find(R"(<failure type="failed" message="validation: byte 3 is 0x00, expected 0x5a\nmore">)"
                     "validation: byte 3 is 0x00, expected 0x5a\nmore</failure>"),
            std::string::npos) << xml;
  EXPECT_NE(xml.find(R"(name="copy/sm/&lt;1&gt;")"), std::string::npos);
  EXPECT_NE(xml.find(R"(<failure type="check" message="FAIL  copy/host/pipelined: p50 2 us &gt; 1 us">)"), std::string::npos);
  EXPECT_EQ(xml.substr(xml.size() - 29), "  </testsuite>\n</testsuites>\n");
}

TEST(Junit, WritesTheFileWholeAndNamesAPathItCannotWrite) {
  const fs::path dir = fs::temp_directory_path() / ("dmabench-junit-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "report.xml").string();
  junit::write(path, {{"copy.host", "a", 1.0}}, "2026-12-04T11:00:00", "h");
  std::ifstream f(path);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_EQ(text.str(), junit::document({{"copy.host", "a", 1.0}}, "dmabench", "2026-12-04T11:00:00", "h"));
  try {
    junit::write(path + "/under-a-file.xml", {}, "", "");  // a directory that is a regular file
    ADD_FAILURE() << "no error for a path under a file";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("report.xml/under-a-file.xml"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(Junit, TestCasesFollowTheRecordsAndTheFailedChecks) {
  using O = junit::TestCase::Outcome;
  const std::vector<nlohmann::json> records = {
      {{"name", "a"}, {"pattern", "copy"}, {"engine", "ce"}, {"status", "ok"}, {"reason", ""},
       {"sampling", {{"seconds", 0.5}}}},
      {{"name", "b"}, {"pattern", "copy"}, {"engine", "ce"}, {"status", "ok"}, {"reason", ""},
       {"sampling", {{"seconds", 0.25}}}},
      {{"name", "c"}, {"pattern", "h2d"}, {"engine", "sm"}, {"status", "skipped"}, {"reason", "needs mapped"}},
      {{"name", "d"}, {"pattern", "d2h"}, {"status", "failed"}, {"reason", "byte 3"}}};
  const auto cases = junit::test_cases(records, {{"b", "FAIL  b: p50 2 us > 1 us"}, {"c", "FAIL  c"}});
  ASSERT_EQ(cases.size(), 4u);
  EXPECT_EQ(cases[0].classname, "copy.ce");
  EXPECT_EQ(cases[0].outcome, O::passed);
  EXPECT_EQ(cases[0].seconds, 0.5);
  EXPECT_EQ(cases[1].outcome, O::failed);
  EXPECT_EQ(cases[1].type, "check");
  EXPECT_EQ(cases[1].message, "FAIL  b: p50 2 us > 1 us");
  // a skipped case stays skipped whatever a check says of it; a record without sampling.seconds: 0
  EXPECT_EQ(cases[2].outcome, O::skipped);
  EXPECT_EQ(cases[2].message, "needs mapped");
  EXPECT_EQ(cases[2].seconds, 0.0);
  EXPECT_EQ(cases[3].classname, "d2h.none");
  EXPECT_EQ(cases[3].outcome, O::failed);
  EXPECT_EQ(cases[3].type, "failed");
  EXPECT_EQ(cases[3].message, "byte 3");
}

// Issue 52: an ok case carries its figures as <properties> (before its outcome, as the schema orders them); a
// skipped or failed case none.
TEST(Junit, OkCasesCarryTheirFiguresAsProperties) {
  const std::vector<nlohmann::json> records = {
      {{"name", "a"}, {"pattern", "allreduce"}, {"engine", "nccl"}, {"status", "ok"}, {"bytes", 4096},
       {"bytes_per_rank", 2048}, {"latency_us", {{"p50", 12.5}, {"p99", 20.0}}}, {"algbw_GBps", 0.5},
       {"busbw_GBps", 0.75}, {"p50_interval_us", {12.0, 13.0}}, {"busbw_interval_GBps", {0.7, nullptr}},
       {"sampling", {{"samples", 40}, {"seconds", 0.25}}}, {"noise", 0.01}},
      {{"name", "b"}, {"pattern", "copy"}, {"engine", "ce"}, {"status", "skipped"}, {"reason", "no GPU"},
       {"busbw_GBps", nullptr}}};
  const auto cases = junit::test_cases(records, {{"a", "FAIL  a: p50 12.5 us > 10 us"}});
  const std::vector<std::pair<std::string, std::string>> want = {
      {"bytes", "4096"}, {"bytes_per_rank", "2048"}, {"latency_us.p50", "12.5"}, {"latency_us.p99", "20.0"},
      {"algbw_GBps", "0.5"}, {"busbw_GBps", "0.75"}, {"noise", "0.01"}, {"sampling.samples", "40"},
      {"sampling.seconds", "0.25"}, {"p50_interval_us.low", "12.0"}, {"p50_interval_us.high", "13.0"},
      {"busbw_interval_GBps.low", "0.7"}};
  EXPECT_EQ(cases[0].properties, want);
  EXPECT_TRUE(cases[1].properties.empty());
  const std::string xml = junit::document(cases, "dmabench", "2026-12-04T11:00:00", "h");
  EXPECT_NE(xml.find("time=\"0.250000\">\n      <properties>\n        <property name=\"bytes\" value=\"4096\"/>\n"),
            std::string::npos) << xml;
  EXPECT_NE(xml.find("value=\"0.7\"/>\n      </properties>\n      <failure type=\"check\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("name=\"b\" time=\"0.000000\">\n      <skipped message=\"no GPU\"/>\n    </testcase>"),
            std::string::npos) << xml;
  // a passed case with figures is closed after them
  const junit::TestCase with_figures{"x.y", "p", 1.0, junit::TestCase::Outcome::passed, "", "", {{"busbw_GBps", "1.0"}}};
  const std::string passed = junit::document({with_figures}, "d", "t", "h");
  EXPECT_NE(passed.find("<property name=\"busbw_GBps\" value=\"1.0\"/>\n      </properties>\n    </testcase>\n"),
            std::string::npos) << passed;
}

// The layout's other elements (python/dmabench's verdicts use them): an error, a case's <system-out> after its
// outcome, the suite's <properties> before its cases; `errors` counts the errors.
TEST(Junit, ErrorsSystemOutAndSuiteProperties) {
  using O = junit::TestCase::Outcome;
  junit::TestCase slower{"copy.ce", "a", 0.5, O::failed, "slower", "slower: p50 10 -> 12", {}, "slower: p50 10 -> 12 <b>"};
  junit::TestCase broken{"copy.ce", "b", 0, O::error, "error", "no record", {}, ""};
  junit::TestCase same{"copy.ce", "c", 0, O::passed, "", "", {}, "same: p50 1\x01"};
  const std::string xml = junit::document({slower, broken, same}, "dmabench", "2026-12-04T11:00:00", "h",
                                          {{"command", "compare"}, {"alpha", "0.02"}});
  EXPECT_NE(xml.find(R"(tests="3" failures="1" errors="1" skipped="0" time="0.500000")"), std::string::npos) << xml;
  EXPECT_NE(xml.find("hostname=\"h\">\n    <properties>\n      <property name=\"command\" value=\"compare\"/>\n"
                     "      <property name=\"alpha\" value=\"0.02\"/>\n    </properties>\n    <testcase "),
            std::string::npos) << xml;
  EXPECT_NE(xml.find("<failure type=\"slower\" message=\"slower: p50 10 -&gt; 12\">slower: p50 10 -&gt; 12</failure>\n"
                     "      <system-out>slower: p50 10 -&gt; 12 &lt;b&gt;</system-out>\n    </testcase>\n"),
            std::string::npos) << xml;
  EXPECT_NE(xml.find("<error type=\"error\" message=\"no record\">no record</error>\n    </testcase>"), std::string::npos);
  EXPECT_NE(xml.find("name=\"c\" time=\"0.000000\">\n      <system-out>same: p50 1\\x01</system-out>\n    </testcase>"),
            std::string::npos) << xml;
  // a time that is not a finite number is 0: the schema's time is a decimal
  const std::string odd = junit::document({{"x.y", "nan", std::nan("")}, {"x.y", "inf", HUGE_VAL}}, "d", "t", "h");
  EXPECT_NE(odd.find(R"(tests="2" failures="0" errors="0" skipped="0" time="0.000000")"), std::string::npos) << odd;
}
