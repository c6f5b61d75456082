#include "bench/run/record.hpp"

#include <algorithm>
#include <cmath>
#include <set>

namespace dmabench {
namespace {

using json = nlohmann::json;

json latency_json(const LatencyStats& s) {
  return {{"min", s.min}, {"p50", s.p50}, {"mean", s.mean}, {"p95", s.p95},
          {"p99", s.p99}, {"max", s.max}, {"stddev", s.stddev}};
}

// The record's `breakdown` (results/SCHEMA.md): the submit part, measured in every timed sample.
json submit_json(const measure::Submit& s) {
  const json n = s.descriptors ? json(*s.descriptors) : json();
  return {{"submit_us", s.us.p50},
          {"submit_interval_us", json::array({s.us.low, s.us.high})},
          {"descriptors", n},
          {"submit_per_descriptor_us", s.descriptors && *s.descriptors > 0 ? json(s.us.p50 / *s.descriptors) : json()}};
}

json breakdown_json(const measure::Breakdown& b) {
  if (!b.error.empty()) return {{"error", b.error}};
  return {{"control", b.control_us},
          {"schedule", b.schedule_us},
          {"copy", b.copy_us},
          {"sync", b.sync_us},
          {"total", b.total_us},
          {"not_copy_not_control", b.not_copy_not_control_us},
          {"operations", b.operations},
          {"copies_per_operation", b.copies_per_operation},
          {"aligned_fraction", b.aligned_fraction},
          {"tracer", b.tracer},
          {"method", "medians over operations. control (host time inside launch) and total from an untraced pass; "
                     "copy = engine end - engine start of the operation's copies as the tracer records them; "
                     "schedule = engine start - launch returned and sync = completion observed - engine end "
                     "from a traced pass with engine times converted onto the host steady clock (see tracer); "
                     "aligned_fraction = operations whose converted copy lies inside [launch, completion] "
                     "(below 1: the conversion is off and schedule/sync are not reliable; "
                     "not_copy_not_control = total - control - copy needs no conversion)"}};
}

// An ok record's p50 interval, the bandwidth intervals at its ends (algbw and busbw at S / high and S / low), the
// noise and how the samples were taken (results/SCHEMA.md, "The p50's interval").
json interval_json(const measure::Timed& t) {
  const auto ends = [&](double Bandwidth::*figure) {
    return json::array({t.bandwidth_at_high.*figure, t.bandwidth_at_low ? json((*t.bandwidth_at_low).*figure) : json()});
  };
  const bool adaptive = t.outcome.adaptive;
  const auto adaptive_only = [&](json v) { return adaptive ? v : json(); };
  const json sampling = {{"mode", adaptive ? "adaptive" : "fixed"},
                         {"samples", t.latency_us.count},
                         {"seconds", t.outcome.seconds},
                         {"stopped", to_string(t.outcome.stopped)},
                         {"max_noise", t.rule.max_noise},
                         {"min_samples", adaptive_only(t.rule.min_samples)},
                         {"min_time_s", adaptive_only(t.rule.min_time_s)},
                         {"max_time_s", adaptive_only(t.rule.max_time_s)},
                         {"max_samples", adaptive_only(t.rule.max_samples)}};
  return {{"p50_interval_us", json::array({t.p50_interval.low, t.p50_interval.high})},
          {"noise", t.p50_interval.noise()},
          {"noisy", t.noisy},
          {"algbw_interval_GBps", ends(&Bandwidth::algbw_GBps)},
          {"busbw_interval_GBps", ends(&Bandwidth::busbw_GBps)},
          {"sampling", sampling}};
}

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

json power_json(const measure::Power& p) {
  json j = to_json(p.window);
  if (p.ops_per_batch > 0) j["ops_per_batch"] = p.ops_per_batch;
  return j;
}

json overlap_json(const measure::Overlap& o) {
  json j = {{"compute", o.workload.to_json()}};
  if (o.workload_details) j["compute"]["details"] = *o.workload_details;
  if (o.rounds) j["rounds"] = *o.rounds;
  if (o.launches) j["launches"] = *o.launches;
  if (!o.error.empty()) j["error"] = o.error;
  if (o.validated) j["validated"] = *o.validated;
  if (!o.validated || !*o.validated) return j;
  const auto& t = o.times;
  j["compute"]["rate_unit"] = o.workload.rate_unit();
  j["compute"]["rate_alone"] = o.rate_alone;
  j["compute"]["rate_with"] = o.rate_with;
  j["compute_alone_ms"] = t.compute_alone_ms;
  j["compute_with_ms"] = t.compute_with_ms;
  j["compute_slowdown_pct"] = o.figures.compute_slowdown_pct;
  j["compute_alone_ms_per_device"] = o.compute_alone_ms_per_device;
  j["compute_with_ms_per_device"] = o.compute_with_ms_per_device;
  j["comm_alone_us"] = t.comm_alone_us;
  j["comm_with_us"] = t.comm_with_us;
  j["comm_slowdown_pct"] = o.figures.comm_slowdown_pct;
  j["comm_alone_p99_us"] = o.comm_alone_p99_us;
  j["comm_with_p99_us"] = o.comm_with_us.p99;
  j["comm_with_latency_us"] = latency_json(o.comm_with_us);
  j["comm_with_samples"] = o.comm_with_us.count;
  j["comm_samples_dropped"] = o.comm_samples_dropped;
  j["comm_ops_with"] = t.comm_ops_with;
  j["algbw_with_GBps"] = o.with_bandwidth.algbw_GBps;
  j["busbw_with_GBps"] = o.with_bandwidth.busbw_GBps;
  j["overlap_efficiency"] = o.figures.overlap_efficiency;
  j["clock"] = {{"compute", "device (per-device start/stop marks)"}, {"comm", o.gpu_clock ? "gpu" : "host"}};
  return j;
}

// The routing of an alltoallv case and what its plan moves (results/SCHEMA.md, `alltoallv`).
json alltoallv_json(const Routing& routing, const Plan& plan, const std::optional<measure::Timed>& timed,
                    const std::optional<measure::HeaviestPair>& heaviest) {
  json j = routing.to_json();
  const auto n = static_cast<std::size_t>(plan.ranks());
  std::vector<std::vector<std::uint64_t>> tokens(n, std::vector<std::uint64_t>(n, 0));
  std::vector<std::uint64_t> received(n, 0);
  std::uint64_t moved = 0, peer = 0;
  for (const Transfer& t : plan.transfers) {
    tokens[t.src_rank][t.dst_rank] += t.bytes / routing.token_bytes;
    received[t.dst_rank] += t.bytes;
    moved += t.bytes;
    if (t.src_rank != t.dst_rank) peer += t.bytes;
  }
  j["ranks"] = n;
  j["devices"] = plan.devices;
  j["ranks_share_devices"] = std::set<int>(plan.devices.begin(), plan.devices.end()).size() < n;
  j["pair_tokens"] = tokens;
  j["tokens_moved"] = moved / routing.token_bytes;
  j["bytes_moved"] = moved;
  j["peer_bytes"] = peer;
  j["dest_bytes"] = received;
  const double mean = static_cast<double>(moved) / static_cast<double>(n);
  j["imbalance"] = mean > 0 ? json(static_cast<double>(*std::max_element(received.begin(), received.end())) / mean) : json();
  if (!heaviest) {
    j["heaviest_pair"] = nullptr;
  } else if (!heaviest->error.empty() && !heaviest->p50_us) {
    j["heaviest_pair"] = {{"src", heaviest->src}, {"dst", heaviest->dst}, {"bytes", heaviest->bytes}, {"error", heaviest->error}};
  } else {
    const double step = timed ? timed->latency_us.p50 : 0;
    j["heaviest_pair"] = {{"src", heaviest->src},
                          {"dst", heaviest->dst},
                          {"bytes", heaviest->bytes},
                          {"p50_us", or_null(heaviest->p50_us)},
                          {"share", heaviest->p50_us && step > 0 ? json(*heaviest->p50_us / step) : json()},
                          {"samples", heaviest->samples},
                          {"validated", heaviest->validated}};
  }
  return j;
}

}  // namespace

json to_json(const power::Measurement& m) {
  json j = {{"source", m.source}};
  if (!m.trace_error.empty()) j["trace_error"] = m.trace_error;
  if (!m.error.empty()) {
    j["error"] = m.error;
    return j;
  }
  j["window_s"] = m.window_s;
  j["channels"] = m.channels;
  j["avg_W"] = m.avg_W;
  j["idle_W"] = m.idle_W;
  j["active_W"] = m.active_W;
  j["ops"] = m.ops;
  j["energy_per_op_J"] = or_null(m.energy_per_op_J);
  j["energy_per_GB_J"] = or_null(m.energy_per_GB_J);
  j["uncertainty_W"] = m.uncertainty_W;
  j["uncertainty"] = or_null(m.uncertainty);
  j["busy_fraction"] = m.busy_fraction;
  j["low_duty"] = m.low_duty;
  j["batches"] = m.batches;
  j["batch_gap_us"] = or_null(m.batch_gap_us);
  j["window_too_short"] = m.window_too_short;
  j["longest_batch_s"] = m.longest_batch_s;
  j["counter_read_round_s"] = m.counter_read_round_s;
  return j;
}

std::string_view to_string(Status s) {
  switch (s) {
    case Status::pending: return "pending";
    case Status::ok: return "ok";
    case Status::skipped: return "skipped";
    case Status::failed: return "failed";
  }
  return "?";
}

namespace {
// Every timed sample, to the nanosecond (compact: 12.345, not 12.345000000000001).
json samples_json(const std::vector<double>& us) {
  json out = json::array();
  for (double v : us) out.push_back(std::round(v * 1e3) / 1e3);
  return out;
}
}  // namespace

json to_json(const CaseRecord& r) {
  const Case& c = r.spec;
  json j = {{"name", c.name()},
            {"case_index", c.index},
            {"pattern", c.pattern},
            {"engine", c.variant.engine},
            {"options", c.variant.options},
            {"devices", c.devices},
            {"ranks", c.routing && c.plan ? static_cast<std::size_t>(c.plan->ranks()) : c.devices.size()},
            {"bytes", c.plan ? json(c.plan->total_bytes) : json()},
            {"bytes_per_rank", c.bytes_per_rank},
            {"timing", to_string(c.timing)},
            {"in_place", c.in_place},
            {"rotate", c.rotate},
            {"pipeline_depth", c.ops_per_sample()},
            {"warmup", c.run.warmup},
            {"status", to_string(r.status)},
            {"reason", r.reason},
            {"validated", r.validated},
            {"iterations", r.timed ? r.timed->latency_us.count : 0},
            {"latency_us", r.timed ? latency_json(r.timed->latency_us) : json()},
            {"algbw_GBps", r.timed ? json(r.timed->bandwidth.algbw_GBps) : json()},
            {"busbw_GBps", r.timed ? json(r.timed->bandwidth.busbw_GBps) : json()},
            {"clock", r.gpu_clock ? "gpu" : "host"},
            {"cpu", r.timed && r.cpu >= 0 ? json(r.cpu) : json()}};
  if (r.timed) j.update(interval_json(*r.timed));
  if (r.timed && !r.samples_us.empty()) j["samples_us"] = samples_json(r.samples_us);
  if (r.timed && r.cpu_choice) j["cpu_choice"] = measure::to_json(*r.cpu_choice);
  if (r.timed && r.core_share) j["core_share"] = measure::to_json(*r.core_share, !r.samples_us.empty());
  if (r.timed && r.submit) j["breakdown"] = submit_json(*r.submit);
  j["layout"] = to_json(c.layout);
  if (c.layout.blocks && c.plan) {
    const std::size_t blocks = c.plan->transfers.size();
    j["layout"]["blocks_per_op"] = blocks;
    j["per_block_us"] = r.timed ? json(r.timed->latency_us.p50 / static_cast<double>(blocks)) : json();
  }
  if (c.routing && c.plan) j["alltoallv"] = alltoallv_json(*c.routing, *c.plan, r.timed, r.heaviest_pair);
  if (c.plan && c.plan->host_memory())
    j["host_memory"] = r.host_memory.empty() ? json{{"kind", to_string(c.host.kind)}, {"numa", c.host.numa.label()}}
                                             : hostmem::to_json(r.host_memory);
  if (!r.engine_details.empty()) j["engine_details"] = r.engine_details;
  j["setup_s"] = r.setup ? json(r.setup->seconds) : json();
  if (r.setup)
    j["setup"] = {{"prepare_s", r.setup->prepare_s},
                  {"validate_s", r.setup->validate_s},
                  {"buffers_allocated", r.setup->buffers_allocated},
                  {"buffers_reused", r.setup->buffers_reused},
                  {"bytes_allocated", r.setup->bytes_allocated}};
  if (r.breakdown) j["breakdown_us"] = breakdown_json(*r.breakdown);
  if (r.power) j["power"] = power_json(*r.power);
  if (r.overlap) j["overlap"] = overlap_json(*r.overlap);
  return j;
}

}  // namespace dmabench
