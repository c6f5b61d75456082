#pragma once
// The sampling thread's CPU, chosen to avoid a shared core (issue 50; results/SCHEMA.md `cpu_choice`). On a cloud VM a
// vCPU's physical core is at times shared with a busy hardware thread outside the guest, and the GPU driver's
// submission code then runs up to 2x slower (measure/core_share.hpp). Which vCPU reads shared changes over minutes, so
// the thread that submits and times a case moves to one that reads unshared, the way nvbench waits out a throttled
// clock rather than timing through it:
//   - a survey: every candidate CPU in turn, the thread pinned there, a few readings each; the quietest wins (the
//     current CPU where it is as quiet);
//   - a case's sampling runs pinned to the chosen CPU (Scope); between cases the thread has every allowed CPU back,
//     so that threads created while a case is set up (engines' workers, NCCL's, a power sampler) are not confined;
//   - before each sample (warm-up or timed) one reading: a shared one is followed by a short wait and another, and
//     after `move_after` shared readings in a row by a new survey (bounded per case); the sample is taken after an
//     unshared reading, or after the bounds ran out (then it counts as shared in the record's `core_share`).
// Readings and moves go through two functions so that a test can script them (a simulated reading per CPU).
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

namespace dmabench::measure {

struct CpuChoicePolicy {
  int survey_readings = 3;            // per candidate CPU, after one discarded (the move's own cost)
  int max_waits = 4;                  // per sample: readings after a shared one before the sample is taken anyway
  std::chrono::microseconds wait{200};  // between two readings of one sample
  int move_after = 2;                 // shared readings in a row that start a new survey
  int max_surveys_per_case = 3;       // after the case's first
  std::size_t max_waits_per_case = 256;
  double shared_ratio = 0.75;         // measure::kSharedRatio
};

// What the choice did during one case (the record's `cpu_choice`).
struct CpuChoiceCase {
  int cpu = -1;             // the CPU the samples were taken on (the last one chosen)
  int moves = 0;            // times the thread changed CPU for a survey's winner
  int surveys = 0;          // surveys run (the process's first included where it came in this case)
  std::size_t readings = 0; // every reading: surveys', the case start's and the samples'
  std::size_t waits = 0;    // readings taken again after a shared one, before a sample
  std::size_t samples = 0;  // samples (warm-up and timed) that went through before_sample()
  std::size_t shared_samples = 0;  // of them, taken after a shared reading (the bounds ran out)
};
nlohmann::json to_json(const CpuChoiceCase& c);

class CpuChoice {
 public:
  using Reader = std::function<double()>;     // a reading's ratio on the calling thread's CPU (measure/core_share.hpp)
  using Mover = std::function<bool(int cpu)>; // pins the calling thread to cpu; false: refused
  using Release = std::function<void()>;      // gives the thread every allowed CPU back
  using Sleep = std::function<void(std::chrono::microseconds)>;

  using Chosen = std::function<void(int cpu)>;  // told each survey's winner

  CpuChoice(std::vector<int> candidates, Reader read, Mover move, Release release, Sleep sleep,
            CpuChoicePolicy policy = {}, Chosen chosen = {});

  // The sampling thread's CPUs: cpus::allowed(), in a multi-process run only every k-th of them from the process's
  // local rank (k local processes), so that processes of one node do not pick the same CPU.
  static std::vector<int> candidates(const std::vector<int>& allowed, int local_rank, int local_processes);
  // The real thing: readings by measure::read_core_share(), moves by cpus::pin_this_thread(), each winner told to
  // cpus::set_sampling_cpu() (the host engine places its rank threads from it).
  static std::unique_ptr<CpuChoice> make(const std::vector<int>& candidates);

  // A case's sampling: the thread pinned to the chosen CPU (surveyed first when none is yet, or when the case start's
  // readings are shared) until the scope ends, then every allowed CPU back.
  class Scope {
   public:
    explicit Scope(CpuChoice* choice);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    CpuChoice* choice_;
  };

  // The first survey, before any case (the run's context records it); the thread then has every allowed CPU back.
  void survey_now();

  // Before one sample, inside a Scope: the reading that precedes the sample (unshared unless the bounds ran out).
  double before_sample();

  // What the choice did since the last case_done() (the case's record), and resets it.
  CpuChoiceCase case_done();

  // The run's context: {mode, allowed, candidates, first_survey: {cpu: median ratio}, policy}.
  nlohmann::json context(const std::vector<int>& allowed) const;

  int cpu() const { return cpu_; }

 private:
  void enter();
  void leave();
  void survey();
  bool shared(double ratio) const { return ratio > policy_.shared_ratio; }
  double read();

  std::vector<int> candidates_;
  Reader read_;
  Mover move_;
  Release release_;
  Sleep sleep_;
  CpuChoicePolicy policy_;
  Chosen chosen_;
  int cpu_ = -1;  // the chosen CPU (-1: none yet)
  int in_a_row_ = 0;
  CpuChoiceCase case_;
  std::optional<std::map<int, double>> first_survey_;
};

}  // namespace dmabench::measure
