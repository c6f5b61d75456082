#pragma once
// --check FILE: every measured case against what it should reach (node bring-up, "is this link
// healthy?"). FILE is an expectations file (schema dmabench-expectations/1: checks matched against
// cases, each expecting a figure, a link's rate from the machine — PCIe generation x width — or a
// number of links x a rate per link, or a reference results file) or a dmabench results file itself
// (a reference: each case expects what the same case — its case_key, bench/run/record.hpp — measured there). docs/user-guide.md "All pairs, and checking a machine".
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmabench::check {

// The exit code of a run in which every case ran (none failed) and some check failed.
inline constexpr int kExitCheckFailed = 5;

struct Verdict {
  std::string name;      // the case
  std::string metric;    // busbw_GBps, algbw_GBps or p50_us (beside a workload: the figure beside it)
  std::optional<double> measured, expected;  // measured: nullopt when the case failed
  double tolerance_pct = 10;
  std::string basis;     // where the expectation comes from, e.g. "PCIe 32.0 GT/s x16 x 0.85"
  std::string problem;   // non-empty: FAIL without a figure (the case failed, the expectation could not be formed)
  // The intervals around the measured figure and a reference's (results/SCHEMA.md, "The p50's interval"), where the
  // records have them; a FAIL needs the measured interval outside the allowed band (docs/user-guide.md).
  std::optional<std::pair<double, double>> measured_interval, expected_interval;
  // Which interval each is (results/SCHEMA.md, "Levels across fresh processes"): "between N processes" (a levels
  // file's record) or "within one process"; "" without one.
  std::string measured_interval_kind, expected_interval_kind;
  bool within_noise = false;  // PASS although the figure is outside the band: its interval reaches into it
  bool pass = false;
  // same, slower, faster or ambiguous (docs/user-guide.md "All pairs, and checking a machine"). Against a reference
  // levels file whose record and the run's both hold per-process p50s (levels.p50_us, 2 or more each) the word comes
  // from compare's rule (bench/verdict.hpp: rank-sum support, Benjamini-Hochberg over those cases, the class minimum)
  // and only `slower` fails; otherwise from the band: inside `same` (better than it by more than the tolerance
  // `faster`), outside but within noise `ambiguous`, outside `slower` (FAIL).
  std::string word;
  std::vector<double> measured_draws, expected_draws;  // the per-process p50s the rule compares (else empty)
  bool launch_bound = true;                            // the class, for the rule's minimum change
  std::optional<double> p_value, change;               // the rule's, where it judged
  std::size_t family = 0;                              // the cases judged together by the rule
  double deviation_pct() const;  // (measured / expected - 1) x 100
};

class Expectations {
 public:
  // Reads and checks FILE; throws InputError naming the file, the field and what is accepted.
  static Expectations load(const std::string& path);
  // The verdict of one record (results/SCHEMA.md) on a machine (the results context's "machine"), or
  // nullopt where no check applies (and for skipped cases).
  std::optional<Verdict> judge(const nlohmann::json& record, const nlohmann::json& machine) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  nlohmann::json checks_ = nlohmann::json::array();  // validated entries
  double tolerance_pct_ = 10;
  nlohmann::json reference_;  // the dump of a case's key (reference_key in check.cpp) -> record, for reference checks
};

// A verdict's line as print_verdicts prints it ("PASS  name  metric ..." / "FAIL ..."), without the newline.
std::string verdict_line(const Verdict& v);
// The FAIL verdicts' lines by case name (--junit's failures).
std::map<std::string, std::string> failed_lines(const std::vector<Verdict>& verdicts);
// The rule's verdicts for every verdict with draws on both sides, judged together as one family (sets word, pass,
// p_value, change); the others keep their band verdict.
void judge_draws(std::vector<Verdict>& verdicts);
// judge_draws, then one line per verdict and a summary line; returns whether every verdict passed.
bool print_verdicts(std::vector<Verdict>& verdicts, std::size_t unchecked, const std::string& path);

}  // namespace dmabench::check
