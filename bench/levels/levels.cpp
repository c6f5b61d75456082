#include "bench/levels/levels.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "bench/run/record.hpp"
#include "bench/sampling/stats.hpp"

namespace dmabench::levels {
namespace {

using json = nlohmann::json;

// `j[key]`, or null where `j` is no object or has no `key`: the merge reads files made elsewhere, and a field of
// another type than the merge uses is left out of its figures, never an exception (results_file.hpp checks the rest).
const json& get(const json& j, const char* key) {
  static const json none;
  if (!j.is_object()) return none;
  const auto it = j.find(key);
  return it == j.end() ? none : *it;
}

// A number (not a bool); every number parse_input_json takes is finite.
bool number(const json& v) { return v.is_number(); }
double p50_of(const json& r) { return get(get(r, "latency_us"), "p50").get<double>(); }

// The median of numbers: for an even count the lower middle one plus half the gap to the upper one (taken so that it
// cannot overflow).
double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const double a = v[(v.size() - 1) / 2], b = v[v.size() / 2];
  return a == b ? a : a + (b - a) / 2;
}

// The between-process interval of the p50s of m >= 2 ok processes: [ranks j, m + 1 - j] of the sorted p50s
// (median_ranks) and its coverage 1 - 2 P(B <= j - 1), B ~ binomial(m, 1/2); [min, max] with 1 - 2/2^m below 6.
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
  double tail = 0;  // P(B <= j - 1), by logs: exact to ~1e-13 for the sizes a sweep runs in
  for (std::size_t i = 0; i < b.j; ++i)
    tail += std::exp(std::lgamma(m + 1.0) - std::lgamma(i + 1.0) - std::lgamma(m - i + 1.0) - m * std::log(2.0));
  b.coverage = 1 - 2 * tail;
  b.low = p50s[b.j - 1];
  b.high = p50s[b.k - 1];
  return b;
}

// An ok record's own interval's half-width over its p50: its `noise`, else from its p50_interval_us, else null.
json own_noise(const json& r) {
  if (number(get(r, "noise"))) return get(r, "noise");
  const json& pair = get(r, "p50_interval_us");
  const double p50 = p50_of(r);
  if (!pair.is_array() || pair.size() != 2 || !number(pair[0]) || !number(pair[1])) return nullptr;
  return std::max(p50 - pair[0].get<double>(), pair[1].get<double>() - p50) / p50;
}

// S of an ok record: `bytes`, else (null, absent or below 0) what its algbw and p50 imply.
double operation_bytes(const json& r) {
  const json& size = get(r, "bytes");
  if (size.is_number_integer() && size.get<double>() >= 0) return size.get<double>();
  return get(r, "algbw_GBps").get<double>() * p50_of(r) * 1e3;
}

// size / us in GB/s; null where it is unbounded (a 0 µs end) or beyond a double.
json gbps(double size, double us) {
  if (us <= 0) return nullptr;
  const double value = size / (us * 1e3);
  return std::isfinite(value) ? json(value) : json();
}

// busbw / algbw of a record (the pattern's factor), 1 where algbw is 0.
double busbw_factor(const json& r) {
  const double algbw = get(r, "algbw_GBps").get<double>();
  return algbw != 0 ? get(r, "busbw_GBps").get<double>() / algbw : 1.0;
}

__extension__ typedef __int128 Int128;  // a sum of 64-bit integers (GCC, Clang)

// The sum of integers as JSON: a 64-bit integer where it fits, else a double.
json integer_sum(const std::vector<const json*>& values) {
  Int128 sum = 0;
  for (const json* v : values)
    sum += v->is_number_unsigned() ? static_cast<Int128>(v->get<std::uint64_t>()) : v->get<std::int64_t>();
  if (sum >= INT64_MIN && sum <= INT64_MAX) return static_cast<std::int64_t>(sum);
  if (sum > 0 && sum <= static_cast<Int128>(UINT64_MAX)) return static_cast<std::uint64_t>(sum);
  return static_cast<double>(sum);
}

// `r` (the median process's record) with iterations, sampling.samples and sampling.seconds summed over `ok`.
void add_samples(json& r, const std::vector<const json*>& ok) {
  std::vector<const json*> iterations, samples;
  double seconds = 0;
  for (const json* p : ok) {
    if (get(*p, "iterations").is_number_integer()) iterations.push_back(&get(*p, "iterations"));
    const json& s = get(*p, "sampling");
    if (!s.is_object()) continue;
    if (get(s, "samples").is_number_integer()) samples.push_back(&get(s, "samples"));
    if (number(get(s, "seconds"))) seconds += get(s, "seconds").get<double>();
  }
  r["iterations"] = integer_sum(iterations);
  if (!get(r, "sampling").is_object()) return;
  r["sampling"]["samples"] = integer_sum(samples);
  r["sampling"]["seconds"] = seconds;
}

// The median process's record `*ok[mid]` with its figures taken across the ok records `ok` (process order).
json figures(const std::vector<const json*>& ok, std::size_t mid) {
  json r = *ok[mid];
  add_samples(r, ok);
  const double factor = busbw_factor(*ok[mid]), size = operation_bytes(*ok[mid]);
  r["latency_us"] = json::object();
  for (const char* stat : {"min", "p50", "mean", "p95", "p99", "max", "stddev"}) {
    std::vector<double> v;
    for (const json* p : ok) v.push_back(get(get(*p, "latency_us"), stat).get<double>());
    r["latency_us"][stat] = median_of(v);
  }
  const double p50 = p50_of(r);
  r["algbw_GBps"] = size / (p50 * 1e3);
  r["busbw_GBps"] = size / (p50 * 1e3) * factor;
  const json& blocks = get(get(r, "layout"), "blocks_per_op");
  if (blocks.is_number_integer() && blocks.get<double>() > 0 && blocks.get<double>() < 0x1p63)
    r["per_block_us"] = p50 / blocks.get<double>();
  return r;
}

// `r` with its interval the between-process interval of `p50s` (m >= 2) and what follows from it.
Between between_interval(json& r, const std::vector<double>& p50s) {
  const Between b = between(p50s);
  const double p50 = p50_of(r), size = operation_bytes(r), factor = busbw_factor(r);
  r["p50_interval_us"] = {b.low, b.high};
  const double noise = std::max(p50 - b.low, b.high - p50) / p50;
  r["noise"] = noise;
  const json& max_noise = get(get(r, "sampling"), "max_noise");
  r["noisy"] = noise > (number(max_noise) ? max_noise.get<double>() : 0.0);
  const json algbw = {gbps(size, b.high), gbps(size, b.low)};
  r["algbw_interval_GBps"] = algbw;
  r["busbw_interval_GBps"] = json::array();
  for (const json& x : algbw) r["busbw_interval_GBps"].push_back(x.is_null() ? json() : json(x.get<double>() * factor));
  return b;
}

// A record's core_share.shared over probed, or null without one or where the two cannot be counts of it.
json shared_fraction(const json& r) {
  const json& c = get(r, "core_share");
  const json &probed = get(c, "probed"), &shared = get(c, "shared");
  if (!number(probed) || probed.get<double>() <= 0 || !number(shared)) return nullptr;
  if (shared.get<double>() < 0 || shared.get<double>() > probed.get<double>()) return nullptr;
  return shared.get<double>() / probed.get<double>();
}

bool is_ok(const json* r) { return r && get(*r, "status") == "ok"; }

// The record's `levels` (results/SCHEMA.md), without `missing`: each process's part, and the interval (`b`, null for
// one process).
json levels_of(const std::vector<InProcess>& in, const json& merged, std::size_t median_process, const Between* b) {
  json p50s = json::array(), noises = json::array(), cpus = json::array(), order = json::array(), shared = json::array();
  std::vector<double> ok_p50, ok_noise;
  for (const InProcess& p : in) {
    if (!is_ok(p.record)) {
      for (json* a : {&p50s, &noises, &cpus, &order, &shared}) a->push_back(nullptr);
      continue;
    }
    const json& r = *p.record;
    ok_p50.push_back(p50_of(r));
    p50s.push_back(get(get(r, "latency_us"), "p50"));
    noises.push_back(own_noise(r));
    if (!noises.back().is_null()) ok_noise.push_back(noises.back().get<double>());
    cpus.push_back(get(r, "cpu"));
    order.push_back(p.position);
    shared.push_back(shared_fraction(r));
  }
  const double p50 = p50_of(merged);
  json l = {{"processes", ok_p50.size()}, {"of", in.size()}, {"p50_us", p50s}, {"noise", noises}, {"cpu", cpus},
            {"order", order}, {"core_shared", shared}};
  l["interval"] = b ? "between processes" : "within one process";
  l["coverage"] = b ? json(b->coverage) : json();
  l["ranks"] = b ? json::array({b->j, b->k}) : json();
  l["between"] = b ? merged["noise"] : json();
  l["within"] = ok_noise.empty() ? json() : json(median_of(ok_noise));
  l["spread"] = (*std::max_element(ok_p50.begin(), ok_p50.end()) - *std::min_element(ok_p50.begin(), ok_p50.end())) / p50;
  l["median_process"] = median_process + 1;
  return l;
}

// {process, status, reason} of each process that did not have the case ok.
json missing_of(const std::vector<InProcess>& in) {
  json missing = json::array();
  for (std::size_t k = 0; k < in.size(); ++k) {
    const json* r = in[k].record;
    if (is_ok(r)) continue;
    if (!r)
      missing.push_back({{"process", k + 1}, {"status", "not run"}, {"reason", "the process ended before this case"}});
    else
      missing.push_back({{"process", k + 1}, {"status", get(*r, "status")}, {"reason", get(*r, "reason").is_string()
                                                                                           ? get(*r, "reason") : json("")}});
  }
  return missing;
}

}  // namespace

json merge_case(const std::vector<InProcess>& in) {
  std::vector<const json*> ok;
  std::vector<std::size_t> ok_process;
  const json *first = nullptr, *failed = nullptr;
  std::size_t failed_at = 0;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const json* r = in[k].record;
    if (!r) continue;
    if (!first) first = r;
    if (is_ok(r)) {
      ok.push_back(r);
      ok_process.push_back(k);
    } else if (get(*r, "status") == "failed" && !failed) {
      failed = r;
      failed_at = k;
    }
  }
  if (!first) throw std::invalid_argument("levels::merge_case: no process has the case");
  if (failed || ok.empty()) {  // failed anywhere: failed; skipped everywhere: skipped (no figures either way)
    json r = failed ? *failed : *first;
    if (failed)
      r["reason"] = fmt::format("process {} of {}: {}", failed_at + 1, in.size(),
                                get(*failed, "reason").is_string() ? get(*failed, "reason").get<std::string>() : "");
    r["levels"] = {{"processes", ok.size()}, {"of", in.size()}, {"missing", missing_of(in)}};
    return r;
  }
  // the median process: the one whose p50 is the median (the lower of the two middle ones for an even count)
  std::vector<std::size_t> by_p50(ok.size());
  std::iota(by_p50.begin(), by_p50.end(), std::size_t{0});
  std::stable_sort(by_p50.begin(), by_p50.end(), [&](std::size_t a, std::size_t b) { return p50_of(*ok[a]) < p50_of(*ok[b]); });
  const std::size_t mid = by_p50[(ok.size() - 1) / 2];
  json r = figures(ok, mid);
  std::vector<double> p50s;
  for (const json* p : ok) p50s.push_back(p50_of(*p));
  const std::optional<Between> b = ok.size() > 1 ? std::optional<Between>(between_interval(r, p50s)) : std::nullopt;
  r["levels"] = levels_of(in, r, ok_process[mid], b ? &*b : nullptr);
  r["levels"]["missing"] = missing_of(in);
  return r;
}

namespace {

// The probe `name` of a context's calibration, or null.
const json& probe(const json& calibration, const std::string& name) { return get(get(calibration, "probes"), name.c_str()); }

// A probe's field over the processes' probes `each`: `pick` of its numbers, null where none has one.
json over(const std::vector<const json*>& each, const char* field, double (*pick)(std::vector<double>)) {
  std::vector<double> v;
  for (const json* q : each)
    if (number(get(*q, field))) v.push_back(get(*q, field).get<double>());
  return v.empty() ? json() : json(pick(v));
}

double smallest(std::vector<double> v) { return *std::min_element(v.begin(), v.end()); }

// context.calibration of a levels file: the first process's, with per probe the median over the processes of p50_us
// and p95_us, the smallest min_us and every process's p50_us; cpu (and its clock) null; core_share every process's
// own (bench/measure/core_share.hpp). Null where the first process has no probes (the context keeps its own).
json merged_calibration(const std::vector<json>& docs) {
  std::vector<const json*> cals;
  for (const json& d : docs) cals.push_back(&get(get(d, "context"), "calibration"));
  if (!get(*cals[0], "probes").is_object()) return nullptr;
  json out = *cals[0];
  out["cpu"] = out["cpu_mhz"] = out["cpu_mhz_source"] = nullptr;
  for (auto& [name, p] : out["probes"].items()) {
    if (!p.is_object()) continue;
    std::vector<const json*> each;
    json per = json::array();
    for (const json* c : cals) {
      each.push_back(&probe(*c, name));
      per.push_back(number(get(*each.back(), "p50_us")) ? get(*each.back(), "p50_us") : json());
    }
    p["p50_us"] = over(each, "p50_us", median_of);
    p["p95_us"] = over(each, "p95_us", median_of);
    p["min_us"] = over(each, "min_us", smallest);
    p["per_process_p50_us"] = per;
  }
  if (out.contains("core_share")) {
    json per = json::array();
    for (const json* c : cals) per.push_back(get(*c, "core_share"));
    out["core_share"] = {{"threshold", get(out["core_share"], "threshold")}, {"per_process", per}};
  }
  return out;
}

json per_process(const std::vector<json>& docs, const std::vector<ProcessFile>& files) {
  json out = json::array();
  for (std::size_t k = 0; k < docs.size(); ++k) {
    const json& c = get(docs[k], "context");
    out.push_back({{"index", k + 1},
                   {"file", k < files.size() ? json(files[k].file) : json()},
                   {"exit_code", k < files.size() && files[k].exit_code ? json(*files[k].exit_code) : json()},
                   {"started_at", get(c, "started_at")},
                   {"wall_s", get(c, "wall_s")},
                   {"host", get(c, "host")},
                   {"git_revision", get(get(c, "dmabench"), "git_revision")},
                   {"order", get(c, "order")},
                   {"cpu_affinity", get(c, "cpu_affinity")},
                   {"calibration", get(c, "calibration")}});
  }
  return out;
}

// Where a case goes in the levels file: its case_index where that is an integer (negative ones first), else the
// count of cases seen before it; then the order first seen.
using Place = std::tuple<bool, std::uint64_t, std::size_t>;
Place place_of(const json& record, std::size_t seen) {
  const json& index = get(record, "case_index");
  if (index.is_number_unsigned()) return {true, index.get<std::uint64_t>(), seen};
  if (index.is_number_integer())
    return {index.get<std::int64_t>() >= 0, static_cast<std::uint64_t>(index.get<std::int64_t>()), seen};
  return {true, seen, seen};
}

// Every case of the documents as its records in each process (merge_case), matched by case_key (a case a file holds
// twice: its n-th record with the others' n-th), in case_index order (where records have none, in the order first
// seen: the first file's order, then what only later files hold).
std::vector<std::vector<InProcess>> matched(const std::vector<json>& docs) {
  std::map<std::string, std::vector<InProcess>> by_key;
  std::vector<std::pair<Place, std::string>> order;
  for (std::size_t k = 0; k < docs.size(); ++k) {
    const json& results = get(docs[k], "results");
    std::map<std::string, std::size_t> seen;
    for (std::size_t i = 0; i < results.size(); ++i) {
      const json& r = results[i];
      const std::string key = case_key(r).dump();
      const std::string ident = fmt::format("{}#{}", seen[key]++, key);
      auto [it, fresh] = by_key.try_emplace(ident, std::vector<InProcess>(docs.size()));
      if (fresh) order.emplace_back(place_of(r, order.size()), ident);
      it->second[k] = {&r, i};
    }
  }
  std::sort(order.begin(), order.end());
  std::vector<std::vector<InProcess>> out;
  for (const auto& [at, ident] : order) out.push_back(std::move(by_key[ident]));
  return out;
}

}  // namespace

json merge(const std::vector<json>& docs, const std::vector<ProcessFile>& files, const std::string& merged_by,
           const json& settings) {
  if (docs.empty()) throw std::invalid_argument("levels::merge: no results document");
  const json& schema = get(docs.front(), "schema");
  json out = {{"schema", schema.is_string() ? schema : json("dmabench/1")}, {"context", get(docs.front(), "context")}};
  json levels = settings;
  levels["merged"] = docs.size();
  levels["merged_by"] = merged_by;
  levels["per_process"] = per_process(docs, files);
  out["context"]["levels"] = levels;
  if (json calibration = merged_calibration(docs); !calibration.is_null()) out["context"]["calibration"] = std::move(calibration);
  json results = json::array();
  for (const auto& places : matched(docs)) results.push_back(merge_case(places));
  out["results"] = std::move(results);
  return out;
}

}  // namespace dmabench::levels
