#include "power/meter.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "core/json_file.hpp"

namespace dmabench::power {

void Trace::sample(double t_s, int channel, double energy_J, std::optional<double> power_W) {
  samples_.push_back({{"t_s", t_s}, {"channel", channel}, {"energy_J", energy_J},
                      {"power_W", power_W ? nlohmann::json(*power_W) : nlohmann::json()}});
}
void Trace::mark(const std::string& what, double t_s) { marks_.push_back({{"t_s", t_s}, {"event", what}}); }
void Trace::write() const {
  write_json_atomically(path_, {{"schema", "dmabench-power-trace/1"}, {"samples", samples_}, {"events", marks_}});
}

Meter::Meter(std::unique_ptr<Source> source, double window_s, Trace* trace, std::function<double()> clock)
    : source_(std::move(source)), window_s_(window_s), trace_(trace), clock_(std::move(clock)) {}

double Meter::now_s() const {
  if (clock_) return clock_();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Meter::delta_J(double e0, double e1) const {
  double d = e1 - e0;
  if (d < 0 && source_->wrap_J()) d += *source_->wrap_J();  // consecutive reads: at most one wrap between them
  return d;
}

// The power reading a trace sample carries: optional, so a failing read leaves it null.
std::optional<double> Meter::traced_power_W(int channel) {
  try {
    return source_->power_W(channel);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

namespace {

// Operations completed by time t: whole batches that ended by then, plus the elapsed share of a batch t
// falls inside (its operations are taken as evenly spread over it), whose operations go to *edge_ops.
template <class Spans>
double ops_done_by(const Spans& spans, double t, double* edge_ops) {
  double ops = 0;
  for (const auto& s : spans) {
    if (s.t1 <= t) {
      ops += s.ops;
    } else {
      if (s.t0 < t) {
        ops += s.ops * (t - s.t0) / (s.t1 - s.t0);
        *edge_ops += s.ops;
      }
      break;
    }
  }
  return ops;
}

// Each window's operations at its ends and the time batches ran inside it.
template <class Windows, class Spans>
void count_window_ops(Windows& windows, const Spans& spans) {
  for (auto& win : windows) {
    win.ops0 = ops_done_by(spans, win.t0, &win.edge_batch_ops);
    win.ops1 = ops_done_by(spans, win.t1, &win.edge_batch_ops);
    for (const auto& s : spans) win.busy_s += std::max(0.0, std::min(s.t1, win.t1) - std::max(s.t0, win.t0));
  }
}

}  // namespace

// One read of a channel by the sampler of Meter::window (kept for the trace).
struct Meter::Reading {
  double t;
  int channel;
  double energy;
  std::optional<double> power;
};

double Meter::sample_windows(const std::vector<int>& channels, double limit, const std::atomic<bool>& stop,
                             std::vector<Window>& w, std::vector<Reading>& readings) {
  const std::size_t n = channels.size();
  double longest_round = 0;
  std::vector<int> phase(n, 0);  // 0: waiting for the first update, 1: inside, 2: closed
  std::vector<double> last(n), total(n, 0.0);  // raw reading; energy since the start, unwrapped read by read
  for (std::size_t i = 0; i < n; ++i) last[i] = source_->energy_J(channels[i]);
  const double start = now_s();
  double round_start = start;
  while (!stop.load(std::memory_order_relaxed)) {
    bool all_closed = true;
    for (std::size_t i = 0; i < n; ++i) {
      if (phase[i] == 2) continue;
      const double e = source_->energy_J(channels[i]);
      const double t = now_s();
      if (trace_) readings.push_back({t, channels[i], e, traced_power_W(channels[i])});
      if (e != last[i]) {  // the counter updated between the previous read and this one
        total[i] += delta_J(last[i], e);
        if (phase[i] == 0) {
          w[i].t0 = t, w[i].e0 = total[i], phase[i] = 1;
        } else if (t - w[i].t0 >= window_s_) {
          w[i].t1 = t, w[i].e1 = total[i], phase[i] = 2;
        }
      }
      last[i] = e;
      all_closed = all_closed && phase[i] == 2;
    }
    const double now = now_s();
    longest_round = std::max(longest_round, now - round_start);
    round_start = now;
    if (all_closed) break;
    if (now - start > limit)
      throw std::runtime_error(fmt::format("the {} energy counter did not advance within {:.1f} s", source_->name(), limit));
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return longest_round;
}

Meter::WindowRun Meter::window(const std::vector<int>& channels, const Batch& batch) {
  std::vector<Window> w(channels.size());
  double longest_period = 0.5;
  for (int c : channels)
    if (c < static_cast<int>(period_s_.size()) && period_s_[c]) longest_period = std::max(longest_period, *period_s_[c]);
  const double limit = window_s_ + 4 * longest_period + 2.0;

  // The sampler thread reads every channel in turn, as fast as the source answers (a short sleep
  // between rounds keeps a fast fake or sysfs source from taking a core), and closes each channel's
  // window on observed counter updates. The calling thread only runs batches.
  std::vector<Reading> readings;
  std::atomic<bool> closed{false}, stop{false};
  std::exception_ptr sampler_error;
  double longest_round = 0;
  std::thread sampler([&] {
    try {
      longest_round = sample_windows(channels, limit, stop, w, readings);
    } catch (...) {
      sampler_error = std::current_exception();
    }
    closed.store(true, std::memory_order_release);
  });

  std::vector<Span> spans;
  std::exception_ptr batch_error;
  try {
    while (!closed.load(std::memory_order_acquire)) {
      if (batch.arm) batch.arm();
      const double b0 = now_s();
      const int ops = batch.run();
      spans.push_back({b0, now_s(), ops});
    }
  } catch (...) {
    batch_error = std::current_exception();
    stop.store(true);
  }
  sampler.join();
  if (trace_)
    for (const auto& r : readings) trace_->sample(r.t, r.channel, r.energy, r.power);
  if (batch_error) std::rethrow_exception(batch_error);
  if (sampler_error) std::rethrow_exception(sampler_error);

  count_window_ops(w, spans);
  return {std::move(w), std::move(spans), longest_round};
}

namespace {
// After the wake: an H200 reached its context-held level within 1 s of the context's creation.
constexpr std::chrono::milliseconds kWakeSettle{1000};
}  // namespace

void Meter::calibrate(double max_s, const std::function<void()>& wake) {
  const int n = source_->channels();
  period_s_.assign(n, std::nullopt);
  for (int c = 0; c < n; ++c) {
    std::vector<double> changes;
    double last = source_->energy_J(c);
    const double start = now_s();
    while (now_s() - start < max_s && changes.size() < 12) {
      const double e = source_->energy_J(c);
      if (e != last) changes.push_back(now_s());
      last = e;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (changes.size() >= 3) {
      std::vector<double> d;
      for (std::size_t i = 1; i < changes.size(); ++i) d.push_back(changes[i] - changes[i - 1]);
      std::sort(d.begin(), d.end());
      period_s_[c] = d[d.size() / 2];
    }
  }
  std::vector<int> all(n);
  for (int c = 0; c < n; ++c) all[c] = c;
  const Batch idle{.arm = {}, .run = [] {
                     std::this_thread::sleep_for(std::chrono::microseconds(500));
                     return 0;
                   }};
  // Two idle windows per channel: their mean, and half their difference as the spread.
  auto baseline = [&](const char* mark, std::vector<double>& mean, std::vector<double>& spread) {
    if (trace_) trace_->mark(mark, now_s());
    const auto a = window(all, idle).windows;
    const auto b = window(all, idle).windows;
    mean.assign(n, 0);
    spread.assign(n, 0);
    for (int c = 0; c < n; ++c) {
      const double wa = (a[c].e1 - a[c].e0) / a[c].seconds(), wb = (b[c].e1 - b[c].e0) / b[c].seconds();
      mean[c] = (wa + wb) / 2;
      spread[c] = std::fabs(wa - wb) / 2;
    }
  };
  cold_idle_W_.clear();
  if (wake) {
    std::vector<double> cold_spread;
    baseline("idle baseline before the devices were woken", cold_idle_W_, cold_spread);
    wake();
    std::this_thread::sleep_for(kWakeSettle);
  }
  baseline("idle baseline", idle_W_, idle_spread_W_);
}

Measurement Meter::measure(const std::vector<int>& channels, const Batch& batch, double bytes_per_op,
                           const std::string& label) {
  Measurement r;
  r.source = source_->name();
  try {
    if (idle_W_.empty()) throw std::runtime_error("no idle baseline (calibrate() was not run)");
    if (trace_) trace_->mark("start " + label, now_s());
    const WindowRun run = window(channels, batch);
    if (trace_) trace_->mark("end " + label, now_s());
    summarize_window(run, channels, bytes_per_op, r);
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  if (trace_) {
    try {
      trace_->write();
    } catch (const std::exception& e) {
      r.trace_error = e.what();
    }
  }
  return r;
}

void Meter::summarize_window(const WindowRun& run, const std::vector<int>& channels, double bytes_per_op,
                             Measurement& r) const {
  const std::vector<Window>& w = run.windows;
  double abs_err = 0, rate = 0, seconds = 0, busy = 1, ops_rel_err = 0;
  for (std::size_t i = 0; i < channels.size(); ++i) {
    const int c = channels[i];
    const double s = w[i].seconds();
    const double watts = (w[i].e1 - w[i].e0) / s;
    r.avg_W.push_back(watts);
    r.idle_W.push_back(idle_W_[c]);
    r.channels.push_back(source_->channel_name(c));
    r.active_W += watts - idle_W_[c];
    // idle spread + edges (each update is seen up to one round of counter reads late) + counter resolution
    abs_err += idle_spread_W_[c] + 2 * run.read_round_s / s * watts + 2 * source_->resolution_J() / s;
    if (period_s_[c] && s < 10 * *period_s_[c]) {
      r.window_too_short = true;
      abs_err += *period_s_[c] / s * watts;
    }
    const double ops = w[i].ops1 - w[i].ops0;
    rate += ops / s;
    seconds += s;
    busy = std::min(busy, w[i].busy_s / s);
    // an edge inside a batch is interpolated: off by at most the batch's operations (half of them, on average)
    if (ops > 0) ops_rel_err = std::max(ops_rel_err, 0.5 * w[i].edge_batch_ops / ops);
  }
  rate /= static_cast<double>(channels.size());
  // Between batches the devices drain: that time's power above idle is somewhere between none and
  // the busy power, so energy per operation may be overstated by up to (1 - busy) / busy.
  const double duty_rel_err = busy > 0 ? (1 - busy) / busy : 1.0;
  std::vector<double> gaps;
  for (std::size_t b = 1; b < run.spans.size(); ++b) gaps.push_back((run.spans[b].t0 - run.spans[b - 1].t1) * 1e6);
  std::sort(gaps.begin(), gaps.end());
  r.window_s = seconds / static_cast<double>(channels.size());
  r.ops = w[0].ops1 - w[0].ops0;
  if (rate > 0) r.energy_per_op_J = r.active_W / rate;
  if (rate > 0 && bytes_per_op > 0) r.energy_per_GB_J = r.active_W / rate / (bytes_per_op / 1e9);
  r.uncertainty_W = abs_err;
  if (r.active_W > 0) r.uncertainty = abs_err / r.active_W + ops_rel_err + duty_rel_err;
  r.busy_fraction = busy;
  r.low_duty = busy < kMinBusyFraction;
  r.batches = run.spans.size();
  if (!gaps.empty()) r.batch_gap_us = gaps[gaps.size() / 2];
  for (const Span& sp : run.spans) r.longest_batch_s = std::max(r.longest_batch_s, sp.t1 - sp.t0);
  r.counter_read_round_s = run.read_round_s;
}

nlohmann::json Meter::context() const {
  nlohmann::json ch = nlohmann::json::array();
  for (int c = 0; c < source_->channels(); ++c)
    ch.push_back({{"channel", source_->channel_name(c)},
                  {"update_period_s", c < static_cast<int>(period_s_.size()) && period_s_[c] ? nlohmann::json(*period_s_[c]) : nlohmann::json()},
                  {"idle_W", c < static_cast<int>(idle_W_.size()) ? nlohmann::json(idle_W_[c]) : nlohmann::json()},
                  {"idle_spread_W", c < static_cast<int>(idle_spread_W_.size()) ? nlohmann::json(idle_spread_W_[c]) : nlohmann::json()}});
  for (int c = 0; c < static_cast<int>(cold_idle_W_.size()) && c < static_cast<int>(ch.size()); ++c)
    ch[c]["cold_idle_W"] = cold_idle_W_[c];
  nlohmann::json r = {{"source", source_->name()}, {"window_s", window_s_}, {"resolution_J", source_->resolution_J()}, {"channels", ch}};
  if (auto d = source_->details(); !d.empty()) r["details"] = std::move(d);
  return r;
}

}  // namespace dmabench::power
