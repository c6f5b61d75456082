#include "power/meter.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "bench/report.hpp"

namespace dmabench::power {

void Trace::sample(double t_s, int channel, double energy_J, std::optional<double> power_W) {
  samples_.push_back({{"t_s", t_s}, {"channel", channel}, {"energy_J", energy_J},
                      {"power_W", power_W ? nlohmann::json(*power_W) : nlohmann::json()}});
}
void Trace::mark(const std::string& what, double t_s) { marks_.push_back({{"t_s", t_s}, {"event", what}}); }
void Trace::write() const {
  write_json_atomically(path_, {{"schema", "dmabench-power-trace/1"}, {"samples", samples_}, {"events", marks_}});
}

Meter::Meter(std::unique_ptr<Source> source, double window_s, Trace* trace)
    : source_(std::move(source)), window_s_(window_s), trace_(trace) {}

double Meter::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double Meter::delta_J(double e0, double e1) const {
  double d = e1 - e0;
  if (d < 0 && source_->wrap_J()) d += *source_->wrap_J();  // consecutive reads: at most one wrap between them
  return d;
}

std::vector<Meter::Window> Meter::window(const std::vector<int>& channels, const std::function<int()>& batch,
                                         double* longest_batch_s) {
  const std::size_t n = channels.size();
  std::vector<Window> w(n);
  std::vector<int> phase(n, 0);  // 0: waiting for the first update, 1: inside, 2: closed
  std::vector<double> last(n), total(n, 0.0);  // raw reading; energy since the start, unwrapped read by read
  for (std::size_t i = 0; i < n; ++i) last[i] = source_->energy_J(channels[i]);
  double longest_period = 0.5;
  for (int c : channels)
    if (c < static_cast<int>(period_s_.size()) && period_s_[c]) longest_period = std::max(longest_period, *period_s_[c]);
  const double start = now_s(), limit = window_s_ + 4 * longest_period + 2.0;
  long long ops = 0;
  if (longest_batch_s) *longest_batch_s = 0;
  for (;;) {
    const double b0 = now_s();
    ops += batch();
    const double t = now_s();
    if (longest_batch_s) *longest_batch_s = std::max(*longest_batch_s, t - b0);
    bool all_closed = true;
    for (std::size_t i = 0; i < n; ++i) {
      if (phase[i] == 2) continue;
      const double e = source_->energy_J(channels[i]);
      if (trace_) trace_->sample(t, channels[i], e, source_->power_W(channels[i]));
      if (e != last[i]) {  // the counter updated between the previous read and this one
        total[i] += delta_J(last[i], e);
        if (phase[i] == 0) {
          w[i].t0 = t, w[i].e0 = total[i], w[i].ops0 = ops, phase[i] = 1;
        } else if (t - w[i].t0 >= window_s_) {
          w[i].t1 = t, w[i].e1 = total[i], w[i].ops1 = ops, phase[i] = 2;
        }
      }
      last[i] = e;
      all_closed = all_closed && phase[i] == 2;
    }
    if (all_closed) return w;
    if (t - start > limit)
      throw std::runtime_error(fmt::format("the {} energy counter did not advance within {:.1f} s", source_->name(), limit));
  }
}

void Meter::calibrate(double max_s) {
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
  auto idle = [] {
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    return 0;
  };
  if (trace_) trace_->mark("idle baseline", now_s());
  const auto a = window(all, idle, nullptr);
  const auto b = window(all, idle, nullptr);
  idle_W_.assign(n, 0);
  idle_spread_W_.assign(n, 0);
  for (int c = 0; c < n; ++c) {
    const double wa = (a[c].e1 - a[c].e0) / a[c].seconds(), wb = (b[c].e1 - b[c].e0) / b[c].seconds();
    idle_W_[c] = (wa + wb) / 2;
    idle_spread_W_[c] = std::fabs(wa - wb) / 2;
  }
}

nlohmann::json Meter::measure(const std::vector<int>& channels, const std::function<int()>& batch, double bytes_per_op,
                              const std::string& label) {
  nlohmann::json r = {{"source", source_->name()}};
  try {
    if (idle_W_.empty()) throw std::runtime_error("no idle baseline (calibrate() was not run)");
    if (trace_) trace_->mark("start " + label, now_s());
    double longest_batch = 0;
    const auto w = window(channels, batch, &longest_batch);
    if (trace_) trace_->mark("end " + label, now_s());
    nlohmann::json avg = nlohmann::json::array(), idle = nlohmann::json::array(), chan = nlohmann::json::array();
    double active = 0, abs_err = 0, rate = 0, seconds = 0;
    bool too_short = false;
    for (std::size_t i = 0; i < channels.size(); ++i) {
      const int c = channels[i];
      const double s = w[i].seconds();
      const double watts = (w[i].e1 - w[i].e0) / s;
      avg.push_back(watts);
      idle.push_back(idle_W_[c]);
      chan.push_back(source_->channel_name(c));
      active += watts - idle_W_[c];
      // idle spread + edges (each edge is seen up to one batch late) + counter resolution
      abs_err += idle_spread_W_[c] + 2 * longest_batch / s * watts + 2 * source_->resolution_J() / s;
      if (period_s_[c] && s < 10 * *period_s_[c]) {
        too_short = true;
        abs_err += *period_s_[c] / s * watts;
      }
      rate += static_cast<double>(w[i].ops1 - w[i].ops0) / s;
      seconds += s;
    }
    rate /= static_cast<double>(channels.size());
    seconds /= static_cast<double>(channels.size());
    r["window_s"] = seconds;
    r["channels"] = chan;
    r["avg_W"] = avg;
    r["idle_W"] = idle;
    r["active_W"] = active;
    r["ops"] = w[0].ops1 - w[0].ops0;
    r["energy_per_op_J"] = rate > 0 ? nlohmann::json(active / rate) : nlohmann::json();
    r["energy_per_GB_J"] = rate > 0 && bytes_per_op > 0 ? nlohmann::json(active / rate / (bytes_per_op / 1e9)) : nlohmann::json();
    r["uncertainty"] = active > 0 ? nlohmann::json(abs_err / active) : nlohmann::json();
    r["uncertainty_W"] = abs_err;
    r["window_too_short"] = too_short;
    r["longest_batch_s"] = longest_batch;
  } catch (const std::exception& e) {
    r["error"] = e.what();
  }
  if (trace_) {
    try {
      trace_->write();
    } catch (const std::exception& e) {
      r["trace_error"] = e.what();
    }
  }
  return r;
}

nlohmann::json Meter::context() const {
  nlohmann::json ch = nlohmann::json::array();
  for (int c = 0; c < source_->channels(); ++c)
    ch.push_back({{"channel", source_->channel_name(c)},
                  {"update_period_s", c < static_cast<int>(period_s_.size()) && period_s_[c] ? nlohmann::json(*period_s_[c]) : nlohmann::json()},
                  {"idle_W", c < static_cast<int>(idle_W_.size()) ? nlohmann::json(idle_W_[c]) : nlohmann::json()},
                  {"idle_spread_W", c < static_cast<int>(idle_spread_W_.size()) ? nlohmann::json(idle_spread_W_[c]) : nlohmann::json()}});
  nlohmann::json r = {{"source", source_->name()}, {"window_s", window_s_}, {"resolution_J", source_->resolution_J()}, {"channels", ch}};
  if (auto d = source_->details(); !d.empty()) r["details"] = std::move(d);
  return r;
}

}  // namespace dmabench::power
