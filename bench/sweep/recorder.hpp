#pragma once
// The sweep's record keeper (bench/sweep/sweep.hpp): every finished case into the results file, and the counts the
// closing lines and the exit code read.
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/output/report.hpp"
#include "bench/run/record.hpp"
#include "team/team.hpp"

namespace dmabench::sweep {

// Records every finished case in the results file and counts statuses for the summary and the
// exit code. Thread-safe: the watchdog and the seal (SealOnSignal, bench/sweep/sweep.cpp) record and finish from
// their threads.
class Recorder {
 public:
  // results: null in the processes of a multi-process run other than rank 0 (which writes the file).
  // keep: also keep every record for what is reported after the sweep (matrices, --check, --junit).
  Recorder(ResultsFile* results, bool keep) : results_(results), keep_(keep) {}
  void add(const CaseRecord& r) {
    std::lock_guard lock(mu_);
    if (finished_) return;  // the file was finished on a signal (SealOnSignal): the case came too late
    ++counts_[r.status];
    if (r.status == Status::failed && first_failure_.empty()) first_failure_ = r.spec.name() + ": " + r.reason;
    if (r.status == Status::skipped) ++skip_reasons_[r.reason];
    if (r.status == Status::failed && !team::world().stopped().empty()) team::stop_recorded();
    if (!results_) return;
    nlohmann::json j = to_json(r);
    busbw_.push_back({{"status", j["status"]}, {"busbw_GBps", j["busbw_GBps"]}});
    if (keep_) kept_.push_back(j);
    results_->add(std::move(j));
  }
  // Writes the file whole and removes the journal, once; later records are dropped.
  void finish() {
    std::lock_guard lock(mu_);
    if (!finished_ && results_) results_->finish();
    finished_ = true;
  }
  const std::vector<nlohmann::json>& kept() const { return kept_; }
  // Each record's status and busbw_GBps (every record, kept or not): the closing average busbw line.
  const std::vector<nlohmann::json>& busbw() const { return busbw_; }
  int count(Status s) const {
    std::lock_guard lock(mu_);
    return counts_.count(s) ? counts_.at(s) : 0;
  }
  int total() const { return count(Status::ok) + count(Status::skipped) + count(Status::failed); }
  const std::string& first_failure() const { return first_failure_; }
  // The most common skip reason and how many cases gave it ({"", 0} without a skip): why a run measured nothing.
  std::pair<std::string, int> commonest_skip() const {
    std::lock_guard lock(mu_);
    std::pair<std::string, int> best{"", 0};
    for (const auto& [reason, n] : skip_reasons_)
      if (n > best.second) best = {reason, n};
    return best;
  }
  std::string path() const { return results_ ? results_->path() : std::string("rank 0's file"); }

 private:
  ResultsFile* results_;
  mutable std::mutex mu_;
  bool finished_ = false;
  bool keep_ = false;
  std::vector<nlohmann::json> kept_;
  std::vector<nlohmann::json> busbw_;
  std::map<Status, int> counts_;
  std::string first_failure_;
  std::map<std::string, int> skip_reasons_;
};

}  // namespace dmabench::sweep
