#pragma once
// dmabench --junit-from CASES.json --junit FILE: JUnit XML of test cases given as JSON, through the run's own writer
// (bench/output/junit.hpp: one escape, one element layout, one figure list), so that the program is the only writer
// of the layout: python/dmabench/junit.py sends compare's, history gate's and ab's verdicts here (docs/user-guide.md,
// "JUnit XML"). CASES.json (UTF-8 JSON; - reads standard input):
//   {"properties": [["command", "compare"], ["alpha", "0.02"]],   optional: the suite's <properties>, in order
//    "timestamp": "2026-12-04T07:10:00", "hostname": "ci-3",     optional: default now (UTC) and this machine's name
//    "cases": [{"name": "copy/ce/oneshot/dev=0,1/1KiB",          required, a string
//               "classname": "copy.ce",                         required, a string
//               "time": 0.25,                                   seconds, a number >= 0 (default 0)
//               "outcome": "failure",                           passed (default), failure, skipped or error
//               "message": "slower: p50 ...",                   the failure's, error's or skip's line
//               "kind": "slower",                               the failure's (error's) type (default: the outcome)
//               "output": "slower: p50 ...",                    the case's <system-out> (optional)
//               "properties": [["bytes", "4096"]]  or  "record": {a results record: its figures, record_properties}}]}
// Every key is one of these; a string is a string, a pair two strings.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/output/junit.hpp"

namespace dmabench::junit {

// The suite a CASES.json document describes.
struct Suite {
  Properties properties;
  std::string timestamp, hostname;  // "" where the document gives none
  std::vector<TestCase> cases;
};

// The document's suite. Throws InputError "<what>: <where>: <what is wrong>; accepted: ..." (where: cases[2].outcome).
Suite read_suite(const nlohmann::json& doc, const std::string& what);

// The mode: reads `cases_path` (a file, or -, /dev/stdin, /dev/fd/N: a pipe), checks `out` as a run checks its
// --junit (bench/output/out_file.hpp) and writes it whole (a temporary renamed). Returns 0; InputError on bad input
// (exit 2), std::runtime_error where the file cannot be written.
int write_from(const std::string& cases_path, const std::string& out);

}  // namespace dmabench::junit
