#pragma once
// The power method (results/SCHEMA.md, "power"): the counter's update period is measured per
// channel; every window starts and ends on an observed counter update (so the counter's own
// granularity does not cut the window); an idle baseline of two windows per channel is taken at
// the start of the run; a case's window runs its operation back to back in batches of ~10 ms on the
// calling thread while a sampler thread reads the counters, so a slow counter read (NVML: ~4 ms)
// never leaves the device idle. The window's busy fraction (time inside batches over the window)
// is measured and reported; operations at the edges are counted by interpolation inside the batch.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "power/source.hpp"

namespace dmabench::power {

// Optional time series of the readings taken during windows, with case boundaries.
class Trace {
 public:
  explicit Trace(std::string path) : path_(std::move(path)) {}
  void sample(double t_s, int channel, double energy_J, std::optional<double> power_W);
  void mark(const std::string& what, double t_s);
  void write() const;  // atomically, the whole series so far

 private:
  std::string path_;
  nlohmann::json samples_ = nlohmann::json::array();
  nlohmann::json marks_ = nlohmann::json::array();
};

// What the meter runs during a window: `arm` (optional) posts the next batch's work ahead, untimed
// and not counted as busy time; `run` launches that batch, waits for it and returns how many
// operations completed.
struct Batch {
  std::function<void()> arm;
  std::function<int()> run;
};

// One power window's result (results/SCHEMA.md, "power"); bench/run/record.cpp writes it.
struct Measurement {
  std::string source;
  std::string error;        // non-empty: the window failed (the fields below are unset)
  std::string trace_error;  // the power trace could not be written
  double window_s = 0;      // mean over channels
  std::vector<std::string> channels;
  std::vector<double> avg_W, idle_W;  // per channel
  double active_W = 0;                // sum over channels of avg - idle
  double ops = 0;                     // operations inside the first channel's window
  std::optional<double> energy_per_op_J, energy_per_GB_J;  // null without operations (or bytes)
  double uncertainty_W = 0;
  std::optional<double> uncertainty;  // relative; null without active power
  double busy_fraction = 0;
  bool low_duty = false;
  std::size_t batches = 0;
  std::optional<double> batch_gap_us;  // median gap between batches; null with one batch
  bool window_too_short = false;
  double longest_batch_s = 0;
  double counter_read_round_s = 0;
};

// A window whose busy fraction is below this is flagged `low_duty`.
inline constexpr double kMinBusyFraction = 0.95;

class Meter {
 public:
  // `clock` (seconds; default: the steady clock) times the windows, the batches and the calibration; a test gives
  // the clock its fake source integrates over, so that what it asserts does not depend on the scheduler.
  Meter(std::unique_ptr<Source> source, double window_s, Trace* trace = nullptr, std::function<double()> clock = {});
  // Measures each channel's update period (polls up to `max_s`) and the idle baseline. With `wake`
  // (a GPU backend: it creates the process's context on every device), the baseline is taken after
  // it, with the devices as a run holds them between operations (an H200 draws ~80 W with no process
  // on it and ~123 W, clocks up, while a process holds a context: that is not the operation's
  // power); the idle before it is kept as cold_idle_W in the context. Throws std::runtime_error
  // when the source fails.
  void calibrate(double max_s = 1.5, const std::function<void()>& wake = {});
  // One window over `channels`: runs batches back to back. Never throws: a failing source or
  // batch gives a measurement with its error.
  Measurement measure(const std::vector<int>& channels, const Batch& batch, double bytes_per_op,
                         const std::string& label);
  nlohmann::json context() const;
  Source& source() { return *source_; }
  double window_s() const { return window_s_; }
  double now_s() const;

  struct Window {
    double t0 = 0, t1 = 0, e0 = 0, e1 = 0;  // e: energy since the window began, unwrapped
    double ops0 = 0, ops1 = 0;               // operations completed by t0 and t1 (interpolated in a batch)
    double busy_s = 0;                       // time inside batches (launch to completion) within [t0, t1]
    double edge_batch_ops = 0;               // operations of the batches the two edges fell in
    double seconds() const { return t1 - t0; }
  };
  struct Span {  // one batch: launch of its first operation to its observed completion, host clock
    double t0 = 0, t1 = 0;
    int ops = 0;
  };
  struct WindowRun {
    std::vector<Window> windows;  // one per channel
    std::vector<Span> spans;      // every batch run, in order
    double read_round_s = 0;      // longest round of counter reads (every channel once)
  };
  // The edge-aligned window itself. Throws on source errors or when a counter does not advance
  // within the time limit.
  WindowRun window(const std::vector<int>& channels, const Batch& batch);

 private:
  double delta_J(double e0, double e1) const;
  // The window's power, energies, duty and uncertainty into `r`.
  void summarize_window(const WindowRun& run, const std::vector<int>& channels, double bytes_per_op,
                        Measurement& r) const;
  std::optional<double> traced_power_W(int channel);
  struct Reading;  // one read of a channel by the sampler (kept for the trace)
  // The sampler of window(): reads every channel of `channels` in turn until every window of `w` is closed or
  // `stop` is set, each window opening and closing on observed counter updates; with a trace, every read into
  // `readings`. Returns the longest round of reads. Throws on source errors or when a counter does not advance
  // within `limit` seconds.
  double sample_windows(const std::vector<int>& channels, double limit, const std::atomic<bool>& stop,
                        std::vector<Window>& w, std::vector<Reading>& readings);

  std::unique_ptr<Source> source_;
  double window_s_;
  Trace* trace_;
  std::function<double()> clock_;
  std::vector<std::optional<double>> period_s_;
  std::vector<double> idle_W_, idle_spread_W_;
  std::vector<double> cold_idle_W_;  // before `wake` (empty without one)
};


}  // namespace dmabench::power
