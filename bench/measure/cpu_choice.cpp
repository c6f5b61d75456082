#include "bench/measure/cpu_choice.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

#include "bench/measure/core_share.hpp"
#include "core/cpus.hpp"

namespace dmabench::measure {

nlohmann::json to_json(const CpuChoiceCase& c) {
  return {{"cpu", c.cpu},         {"moves", c.moves},     {"surveys", c.surveys},
          {"readings", c.readings}, {"waits", c.waits},   {"samples", c.samples},
          {"shared_samples", c.shared_samples}};
}

CpuChoice::CpuChoice(std::vector<int> candidates, Reader read, Mover move, Release release, Sleep sleep,
                     CpuChoicePolicy policy, Chosen chosen)
    : candidates_(std::move(candidates)), read_(std::move(read)), move_(std::move(move)), release_(std::move(release)),
      sleep_(std::move(sleep)), policy_(policy), chosen_(std::move(chosen)) {}

std::vector<int> CpuChoice::candidates(const std::vector<int>& allowed, int local_rank, int local_processes) {
  if (local_processes <= 1 || local_rank < 0 || static_cast<std::size_t>(local_processes) > allowed.size())
    return allowed;  // one process, or fewer CPUs than processes: every CPU (the kernel shares them anyway)
  std::vector<int> mine;
  for (std::size_t i = static_cast<std::size_t>(local_rank); i < allowed.size(); i += local_processes)
    mine.push_back(allowed[i]);
  return mine;
}

std::unique_ptr<CpuChoice> CpuChoice::make(const std::vector<int>& candidates) {
  return std::make_unique<CpuChoice>(
      candidates, [] { return read_core_share().ratio(); }, [](int cpu) { return cpus::pin_this_thread(cpu); },
      [] { cpus::unpin_this_thread(); }, [](std::chrono::microseconds us) { std::this_thread::sleep_for(us); },
      CpuChoicePolicy{.shared_ratio = kSharedRatio}, [](int cpu) { cpus::set_sampling_cpu(cpu); });
}

double CpuChoice::read() {
  ++case_.readings;
  return read_();
}

// Every candidate in turn, pinned there: one reading discarded (the move's own cost), then survey_readings; the lowest
// median wins, the current CPU where it reads within 0.05 of it (a move has a cost of its own: cold caches).
void CpuChoice::survey() {
  ++case_.surveys;
  std::map<int, double> medians;
  for (int c : candidates_) {
    if (!move_(c)) continue;
    read();
    std::vector<double> r;
    for (int i = 0; i < policy_.survey_readings; ++i) r.push_back(read());
    std::sort(r.begin(), r.end());
    medians[c] = r.empty() ? 0 : r[r.size() / 2];
  }
  if (!first_survey_) first_survey_ = medians;
  if (medians.empty()) {  // no candidate took the thread: it stays where the scheduler puts it
    release_();
    return;
  }
  auto best = std::min_element(medians.begin(), medians.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  int winner = best->first;
  if (auto here = medians.find(cpu_); here != medians.end() && here->second <= best->second + 0.05) winner = cpu_;
  if (cpu_ >= 0 && winner != cpu_) ++case_.moves;
  cpu_ = winner;
  move_(cpu_);
  if (chosen_) chosen_(cpu_);
  in_a_row_ = 0;
}

void CpuChoice::enter() {
  if (cpu_ < 0 || !move_(cpu_)) return survey();
  if (shared(read()) && shared(read())) survey();  // two in a row: the core is shared now
}

void CpuChoice::leave() { release_(); }

void CpuChoice::survey_now() {
  survey();
  leave();
  case_ = {};  // the process's, not the first case's
}

double CpuChoice::before_sample() {
  ++case_.samples;
  double r = read();
  for (int waits = 0; shared(r) && waits < policy_.max_waits && case_.waits < policy_.max_waits_per_case; ++waits) {
    ++case_.waits;
    if (++in_a_row_ >= policy_.move_after && case_.surveys < policy_.max_surveys_per_case)
      survey();
    else
      sleep_(policy_.wait);
    r = read();
  }
  if (shared(r)) {
    ++in_a_row_;
    ++case_.shared_samples;
  } else {
    in_a_row_ = 0;
  }
  return r;
}

CpuChoiceCase CpuChoice::case_done() {
  CpuChoiceCase done = case_;
  done.cpu = cpu_ >= 0 ? cpu_ : cpus::current();
  case_ = {};
  return done;
}

nlohmann::json CpuChoice::context(const std::vector<int>& allowed) const {
  nlohmann::json survey = nlohmann::json::object();
  if (first_survey_)
    for (const auto& [cpu, ratio] : *first_survey_) survey[std::to_string(cpu)] = std::round(ratio * 1e3) / 1e3;
  return {{"mode", "quiet"},
          {"allowed", allowed},
          {"candidates", candidates_},
          {"first_survey", first_survey_ ? survey : nlohmann::json()},
          {"policy",
           {{"survey_readings", policy_.survey_readings},
            {"max_waits", policy_.max_waits},
            {"wait_us", policy_.wait.count()},
            {"move_after", policy_.move_after},
            {"max_surveys_per_case", policy_.max_surveys_per_case},
            {"max_waits_per_case", policy_.max_waits_per_case},
            {"shared_ratio", policy_.shared_ratio}}}};
}

CpuChoice::Scope::Scope(CpuChoice* choice) : choice_(choice) {
  if (choice_) choice_->enter();
}

CpuChoice::Scope::~Scope() {
  if (choice_) choice_->leave();
}

}  // namespace dmabench::measure
