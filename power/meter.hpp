#pragma once
// The power method (results/SCHEMA.md, "power"): the counter's update period is measured per
// channel; every window starts and ends on an observed counter update (so the counter's own
// granularity does not cut the window); an idle baseline of two windows per channel is taken at
// the start of the run; a case's window runs its operation back to back in short batches, after
// its timed samples, and reads the counters only between batches.
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

class Meter {
 public:
  Meter(std::unique_ptr<Source> source, double window_s, Trace* trace = nullptr);
  // Measures each channel's update period (polls up to `max_s`) and the idle baseline.
  // Throws std::runtime_error when the source fails.
  void calibrate(double max_s = 1.5);
  // One window over `channels`: calls batch() (runs some operations to completion, returns how
  // many) back to back. Returns the result object of results/SCHEMA.md; never throws: a failing
  // source gives {"source", "error"}.
  nlohmann::json measure(const std::vector<int>& channels, const std::function<int()>& batch, double bytes_per_op,
                         const std::string& label);
  nlohmann::json context() const;
  Source& source() { return *source_; }
  double window_s() const { return window_s_; }
  double now_s() const;

  struct Window {
    double t0 = 0, t1 = 0, e0 = 0, e1 = 0;  // e: energy since the window began, unwrapped
    long long ops0 = 0, ops1 = 0;
    double seconds() const { return t1 - t0; }
  };
  // The edge-aligned window itself (exposed for tests). Throws on source errors or when a
  // counter does not advance within the time limit.
  std::vector<Window> window(const std::vector<int>& channels, const std::function<int()>& batch, double* longest_batch_s);

 private:
  double delta_J(double e0, double e1) const;

  std::unique_ptr<Source> source_;
  double window_s_;
  Trace* trace_;
  std::vector<std::optional<double>> period_s_;
  std::vector<double> idle_W_, idle_spread_W_;
};

}  // namespace dmabench::power
