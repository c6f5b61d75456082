#include "bench/levels/levels.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "bench/run/record.hpp"
#include "bench/sampling/stats.hpp"

namespace dmabench::levels {
namespace {

using json = nlohmann::json;

double number(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0; }

// The between-process interval of the p50s of m ok processes: [ranks j, m + 1 - j] of the sorted p50s (median_ranks)
// and its coverage, [min, max] with 1 - 2/2^m below 6 processes.
struct Between {
  double low = 0, high = 0, coverage = 0;
  std::size_t j = 1, k = 1;
};
Between between(std::vector<double> p50s) {
  std::sort(p50s.begin(), p50s.end());
  const std::size_t m = p50s.size();
  Between b;
  b.k = m;
  if (const auto ranks = median_ranks(m)) {
    b.j = ranks->low;
    b.k = ranks->high;
  }
  // P(B <= j - 1) for B ~ binomial(m, 1/2), by logs: exact for the sizes a sweep runs in
  double tail = 0;
  for (std::size_t i = 0; i < b.j; ++i)
    tail += std::exp(std::lgamma(m + 1.0) - std::lgamma(i + 1.0) - std::lgamma(m - i + 1.0) - m * std::log(2.0));
  b.coverage = 1 - 2 * tail;
  b.low = p50s[b.j - 1];
  b.high = p50s[b.k - 1];
  return b;
}

// The figures of the ok processes' records (`ok`, in process order) on the median process's record.
json ok_record(const std::vector<const json*>& ok, std::size_t median_at) {
  json r = *ok[median_at];
  const std::size_t m = ok.size();
  for (const char* stat : {"min", "p50", "mean", "p95", "p99", "max", "stddev"}) {
    std::vector<double> v;
    for (const json* p : ok) v.push_back(number((*p)["latency_us"], stat));
    r["latency_us"][stat] = median(v);
  }
  double samples = 0, seconds = 0, iterations = 0;
  for (const json* p : ok) {
    iterations += number(*p, "iterations");
    if (p->contains("sampling") && (*p)["sampling"].is_object()) {
      samples += number((*p)["sampling"], "samples");
      seconds += number((*p)["sampling"], "seconds");
    }
  }
  r["iterations"] = static_cast<long long>(iterations);
  if (r.contains("sampling") && r["sampling"].is_object()) {
    r["sampling"]["samples"] = static_cast<long long>(samples);
    r["sampling"]["seconds"] = seconds;
  }
  const double p50 = r["latency_us"]["p50"].get<double>();
  const double algbw = number(r, "algbw_GBps"), factor = algbw > 0 ? number(r, "busbw_GBps") / algbw : 1.0;
  const double bytes = number(r, "bytes");
  r["algbw_GBps"] = bytes / (p50 * 1e3);
  r["busbw_GBps"] = bytes / (p50 * 1e3) * factor;
  if (r.contains("per_block_us") && r["layout"].value("blocks_per_op", 0) > 0)
    r["per_block_us"] = p50 / r["layout"]["blocks_per_op"].get<double>();
  if (m == 1) return r;  // one process: its own interval stands
  std::vector<double> p50s;
  for (const json* p : ok) p50s.push_back(number((*p)["latency_us"], "p50"));
  const Between b = between(p50s);
  r["p50_interval_us"] = {b.low, b.high};
  const double noise = std::max(p50 - b.low, b.high - p50) / p50;
  r["noise"] = noise;
  r["noisy"] = noise > number(r.value("sampling", json::object()), "max_noise");
  const json high_end = b.low > 0 ? json(bytes / (b.low * 1e3)) : json();
  r["algbw_interval_GBps"] = {bytes / (b.high * 1e3), high_end};
  r["busbw_interval_GBps"] = {bytes / (b.high * 1e3) * factor, b.low > 0 ? json(bytes / (b.low * 1e3) * factor) : json()};
  return r;
}

// The record's `levels` (results/SCHEMA.md): per process, the interval and its parts.
json levels_of(const std::vector<InProcess>& in, const json& merged, std::size_t median_process) {
  json p50s = json::array(), noises = json::array(), cpus = json::array(), order = json::array(), shared = json::array();
  std::vector<double> ok_p50, ok_noise;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const bool ok = in[k].record && in[k].record->value("status", "") == "ok";
    if (!ok) {
      for (json* a : {&p50s, &noises, &cpus, &order, &shared}) a->push_back(nullptr);
      continue;
    }
    const json& r = *in[k].record;
    ok_p50.push_back(number(r["latency_us"], "p50"));
    ok_noise.push_back(number(r, "noise"));
    p50s.push_back(ok_p50.back());
    noises.push_back(ok_noise.back());
    cpus.push_back(r.contains("cpu") ? r["cpu"] : json());
    order.push_back(in[k].position);
    const json share = r.value("core_share", json());
    shared.push_back(share.is_object() && share.value("probed", 0) > 0
                         ? json(share["shared"].get<double>() / share["probed"].get<double>())
                         : json());
  }
  const std::size_t m = ok_p50.size();
  json l = {{"processes", m}, {"of", in.size()}, {"p50_us", p50s}, {"noise", noises}, {"cpu", cpus}, {"order", order},
           {"core_shared", shared}};
  l["interval"] = m == 1 ? "within one process" : "between processes";
  const double p50 = merged["latency_us"]["p50"].get<double>();
  if (m > 1) {
    const Between b = between(ok_p50);
    l["coverage"] = b.coverage;
    l["ranks"] = {b.j, b.k};
  } else {
    l["coverage"] = nullptr;
    l["ranks"] = nullptr;
  }
  l["between"] = m > 1 ? merged["noise"] : json();
  l["within"] = median(ok_noise);
  l["spread"] = (*std::max_element(ok_p50.begin(), ok_p50.end()) - *std::min_element(ok_p50.begin(), ok_p50.end())) / p50;
  l["median_process"] = median_process + 1;
  return l;
}

json missing_of(const std::vector<InProcess>& in) {
  json missing = json::array();
  for (std::size_t k = 0; k < in.size(); ++k) {
    const json* r = in[k].record;
    if (r && r->value("status", "") == "ok") continue;
    if (!r)
      missing.push_back({{"process", k + 1}, {"status", "not run"}, {"reason", "the process ended before this case"}});
    else
      missing.push_back({{"process", k + 1}, {"status", r->value("status", "")}, {"reason", r->value("reason", "")}});
  }
  return missing;
}

}  // namespace

json merge_case(const std::vector<InProcess>& in) {
  std::vector<const json*> ok;
  std::vector<std::size_t> ok_process;
  const json* first = nullptr;
  const json* failed = nullptr;
  std::size_t failed_at = 0;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const json* r = in[k].record;
    if (!r) continue;
    if (!first) first = r;
    const std::string status = r->value("status", "");
    if (status == "ok") {
      ok.push_back(r);
      ok_process.push_back(k);
    } else if (status == "failed" && !failed) {
      failed = r;
      failed_at = k;
    }
  }
  if (!first) throw std::invalid_argument("levels::merge_case: no process has the case");
  const json levels_none = {{"processes", ok.size()}, {"of", in.size()}, {"missing", missing_of(in)}};
  if (failed || ok.empty()) {  // failed anywhere: failed; skipped everywhere: skipped (no figures either way)
    json r = failed ? *failed : *first;
    if (failed) r["reason"] = fmt::format("process {} of {}: {}", failed_at + 1, in.size(), failed->value("reason", ""));
    r["levels"] = levels_none;
    return r;
  }
  // the median process: the one whose p50 is the median (the lower of the two middle ones for an even count)
  std::vector<std::size_t> by_p50(ok.size());
  std::iota(by_p50.begin(), by_p50.end(), std::size_t{0});
  std::stable_sort(by_p50.begin(), by_p50.end(), [&](std::size_t a, std::size_t b) {
    return number((*ok[a])["latency_us"], "p50") < number((*ok[b])["latency_us"], "p50");
  });
  const std::size_t median_at = by_p50[(ok.size() - 1) / 2];
  json r = ok_record(ok, median_at);
  r["levels"] = levels_of(in, r, ok_process[median_at]);
  r["levels"]["missing"] = levels_none["missing"];
  return r;
}


namespace {

// context.calibration of a levels file: per probe the median over processes of p50_us and p95_us, the smallest
// min_us and every process's p50_us; cpu null (results/SCHEMA.md, `calibration`).
json merged_calibration(const std::vector<json>& docs) {
  const json& first = docs.front()["context"].value("calibration", json());
  if (!first.is_object() || !first.contains("probes") || !first["probes"].is_object()) return first;
  json out = first;
  out["cpu"] = nullptr;
  out["cpu_mhz"] = nullptr;
  out["cpu_mhz_source"] = nullptr;
  if (out.contains("core_share")) {  // every process's own (measure/core_share.hpp)
    json per = json::array();
    for (const json& d : docs) per.push_back(d["context"].value("calibration", json::object()).value("core_share", json()));
    out["core_share"] = {{"threshold", out["core_share"].value("threshold", json())}, {"per_process", per}};
  }
  for (auto& [name, probe] : out["probes"].items()) {
    std::vector<double> p50, p95, low;
    json per = json::array();
    for (const json& d : docs) {
      const json c = d["context"].value("calibration", json::object());
      const json* q = c.is_object() && c.contains("probes") && c["probes"].contains(name) ? &c["probes"][name] : nullptr;
      per.push_back(q ? (*q)["p50_us"] : json());
      if (!q) continue;
      p50.push_back(number(*q, "p50_us"));
      p95.push_back(number(*q, "p95_us"));
      low.push_back(number(*q, "min_us"));
    }
    probe["p50_us"] = median(p50);
    probe["p95_us"] = median(p95);
    probe["min_us"] = *std::min_element(low.begin(), low.end());
    probe["per_process_p50_us"] = per;
  }
  return out;
}

json per_process(const std::vector<json>& docs, const std::vector<ProcessFile>& files) {
  json out = json::array();
  for (std::size_t k = 0; k < docs.size(); ++k) {
    const json& c = docs[k]["context"];
    const auto field = [&](const char* key) { return c.contains(key) ? c[key] : json(); };
    out.push_back({{"index", k + 1},
                   {"file", k < files.size() ? json(files[k].file) : json()},
                   {"exit_code", k < files.size() && files[k].exit_code ? json(*files[k].exit_code) : json()},
                   {"started_at", field("started_at")},
                   {"wall_s", field("wall_s")},
                   {"host", field("host")},
                   {"git_revision", c.contains("dmabench") ? c["dmabench"].value("git_revision", json()) : json()},
                   {"order", field("order")},
                   {"cpu_affinity", field("cpu_affinity")},
                   {"calibration", field("calibration")}});
  }
  return out;
}

}  // namespace

json merge(const std::vector<json>& docs, const std::vector<ProcessFile>& files, const std::string& merged_by,
           const json& settings) {
  if (docs.empty()) throw std::invalid_argument("levels::merge: no results document");
  // case key (case_key, as scripts/merge_runs.py matches cases) -> its record in every process, and the order of
  // the levels file (case_index, then first seen)
  std::map<std::string, std::vector<InProcess>> by_key;
  std::vector<std::pair<std::pair<long long, std::size_t>, std::string>> order;
  for (std::size_t k = 0; k < docs.size(); ++k) {
    const json& results = docs[k]["results"];
    for (std::size_t i = 0; i < results.size(); ++i) {
      const json& r = results[i];
      const std::string key = case_key(r).dump();
      auto [it, fresh] = by_key.try_emplace(key, std::vector<InProcess>(docs.size()));
      if (fresh) order.push_back({{r.value("case_index", static_cast<long long>(order.size())), order.size()}, key});
      it->second[k] = {&r, i};
    }
  }
  std::sort(order.begin(), order.end());
  json out = {{"schema", docs.front().value("schema", "dmabench/1")}, {"context", docs.front()["context"]}};
  json levels = settings;
  levels["merged"] = docs.size();
  levels["merged_by"] = merged_by;
  levels["per_process"] = per_process(docs, files);
  out["context"]["levels"] = levels;
  out["context"]["calibration"] = merged_calibration(docs);
  json results = json::array();
  for (const auto& [at, key] : order) results.push_back(merge_case(by_key[key]));
  out["results"] = std::move(results);
  return out;
}

}  // namespace dmabench::levels
